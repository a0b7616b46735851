"""The command line a new user meets (issue 32), run as a user runs it: the installed ``bunzai``
command in a fresh folder, its exit code and its stderr.

App names as ``--to`` targets (that app's format for each entity's kind), batches that finish (two
inputs that would write one name get distinct names, listed), errors that name the fix (broken JSON,
PNG or zip is ``Malformed`` where it breaks; ``--from`` in ``inspect``; an output's refusal is exit 2
naming the file), ``--image`` for every format that holds a picture, ``schema`` without a folder on
stdout, zips of files read member by member, a NovelAI scenario's compound suffix and the story it
holds outside its book, and SillyTavern's older prompts-only preset. The scenario, preset, zip and
broken files are written by the tests themselves.
"""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read
from bunzai_codecs.core import registry
from bunzai_codecs.core.media import digest
from bunzai_codecs.inputs import walk
from tests.conftest import corpus_root

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
BUNZAI = str(Path(sys.executable).with_name("bunzai"))
CARD = SAMPLES / "sillytavern" / "lighthouse-keeper.v2.json"
WORLD = SAMPLES / "sillytavern" / "world-harbor-town.json"


def bunzai(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([BUNZAI, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def _format_of(path: Path) -> str:
    decoded = read(path.read_bytes(), path.name)
    source = decoded.primary.source
    assert source is not None
    return source.format


def _image(tmp_path: Path) -> tuple[Path, bytes]:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 40, 10)).save(buf, "JPEG")
    face = tmp_path / "face.jpg"
    face.write_bytes(buf.getvalue())
    return face, buf.getvalue()


# -- 1. app names as targets -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("app", ["sillytavern", "risu"])
def test_the_samples_convert_to_an_app_every_entity_in_that_apps_format(tmp_path: Path, app: str) -> None:
    r = bunzai("convert", SAMPLES, "--to", app, "-o", "out/", "-j", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    n = len(list(walk(SAMPLES)))  # a card folder, a character YAML with its picture: one input each
    assert f"converted {n} of {n} inputs, 0 failed" in r.stderr
    # the batch finished: the two Quill files that write one name both did, listed
    ext = ".json" if app == "sillytavern" else ".charx"
    out = tmp_path / "out"
    assert (out / "lumiverse" / f"quill.lumiverse{ext}").is_file()
    assert (out / "lumiverse" / f"quill.lumiverse-zip{ext}").is_file()
    assert (
        f"renamed: {SAMPLES / 'lumiverse' / 'quill.lumiverse.zip'} -> out/lumiverse/quill.lumiverse-zip{ext}"
    ) in r.stderr
    # every file is the app's (a linked entity the app has no format for goes beside as vaud-json;
    # a Tavern card keeping Lumiverse's extension keys detects as Lumiverse's, and reads as the app's)
    kinds: dict[str, set[str]] = {}
    for p in sorted(out.rglob("*")):
        if p.is_file():
            fmt = _format_of(p)
            if registry.get(fmt).family not in (app, "vaud"):
                assert read(p.read_bytes(), p.name, format=app).primary.kind == "character", (p, fmt)
                fmt = app
            kinds.setdefault(registry.get(fmt).kind, set()).add(fmt)
    assert set(kinds) == {"character", "lorebook", "persona", "preset", "regex"}, kinds


def test_a_lorebook_to_an_app_is_its_world_and_an_app_without_lorebooks_says_which_hold_one(
    tmp_path: Path,
) -> None:
    r = bunzai("convert", WORLD, "--to", "sillytavern", "-o", "w.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote w.json (sillytavern-lorebook, lorebook)" in r.stderr
    assert _format_of(tmp_path / "w.json") == "sillytavern-lorebook"
    # the card meaning of sillytavern is unchanged
    r = bunzai("convert", CARD, "--to", "sillytavern", "-o", "c.png", cwd=tmp_path)
    assert r.returncode == 0 and _format_of(tmp_path / "c.png") == "sillytavern"
    # an app without lorebooks, and a format of another kind: the formats that hold one are named
    for to, why in (
        ("voxta", "voxta has no format for lorebooks (it holds character); formats for lorebook: "),
        ("byaf", "byaf holds characters, not lorebook; formats for lorebook: "),
    ):
        r = bunzai("convert", WORLD, "--to", to, "-o", "x/", cwd=tmp_path)
        line = one_line(r.stderr)
        assert r.returncode == 2 and why in line, line
        assert "sillytavern-lorebook" in line and "novelai-lorebook" in line
    assert not (tmp_path / "x").exists()
    # bunzai formats lists the apps and their formats by kind
    r = bunzai("formats", "--apps", cwd=tmp_path)
    rows = [ln.split() for ln in r.stdout.splitlines()]
    assert rows[0] == ["APP", "KIND", "FORMATS"]
    assert ["sillytavern", "lorebook", "sillytavern-lorebook"] in rows and [
        "voxta",
        "character",
        "voxta",
    ] in rows
    assert not any(row[:2] == ["voxta", "lorebook"] for row in rows)
    # an app name may be any app, not only one that is also a format id
    r = bunzai("convert", WORLD, "--to", "marinara", "-o", "m.json", cwd=tmp_path)
    assert r.returncode == 0 and _format_of(tmp_path / "m.json") == "marinara-lorebook"


def test_a_mixed_folder_to_an_app_that_lacks_a_kind_is_a_failure_line_per_file(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("lighthouse-keeper.v2.json", "world-harbor-town.json", "instruct-Harbor-ChatML.json"):
        (folder / name).write_bytes((SAMPLES / "sillytavern" / name).read_bytes())
    r = bunzai("convert", "mixed", "--to", "agnai", "-o", "out/", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert (
        "mixed/instruct-Harbor-ChatML.json: Unsupported: agnai has no format for presets "
        "(it holds character, lorebook)"
    ) in r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "lighthouse-keeper.regex.vaud.json",  # the card's regex: agnai has no format for regex
        "lighthouse-keeper.v2.json",
        "world-harbor-town.json",
    ]
    assert _format_of(tmp_path / "out" / "world-harbor-town.json") == "agnai-lorebook"
    r = bunzai("convert", "mixed", "--to", "nope", "-o", "o2/", cwd=tmp_path)
    assert r.returncode == 2 and "or an app name for its format of each kind: agnai," in r.stderr


# -- 2. batches finish -------------------------------------------------------------------------


def test_colliding_outputs_get_the_same_distinct_names_whatever_j(tmp_path: Path) -> None:
    lum = SAMPLES / "lumiverse"
    runs = {}
    for j in ("1", "2"):
        r = bunzai(
            "convert", lum / "quill.lumiverse.json", lum / "quill.lumiverse.zip", "--to", "risu",
            "-o", f"out{j}/", "-j", j, cwd=tmp_path,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        out = tmp_path / f"out{j}"
        runs[j] = {p.name: p.read_bytes() for p in out.iterdir()}
        assert f"out{j}/quill.lumiverse.charx is {lum / 'quill.lumiverse.json'}'s" in r.stderr
    assert runs["1"] == runs["2"]
    assert sorted(runs["1"]) == ["quill.lumiverse-zip.charx", "quill.lumiverse.charx"]
    # existing files are still refused without --force, and the folder is left as it was
    r = bunzai(
        "convert",
        lum / "quill.lumiverse.zip",
        lum / "quill.lumiverse.json",
        "--to",
        "risu",
        "-o",
        "out1/",
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "pass --force to overwrite" in r.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "out1").iterdir()} == runs["1"]


# -- 3. errors name the fix --------------------------------------------------------------------


def test_clearly_json_png_or_zip_but_broken_is_malformed_where_it_breaks(tmp_path: Path) -> None:
    (tmp_path / "card.json").write_bytes(CARD.read_bytes()[:400])
    (tmp_path / "card.png").write_bytes((SAMPLES / "sillytavern" / "tidepool.png").read_bytes()[:3000])
    (tmp_path / "card.charx").write_bytes(
        (SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes()[:3000]
    )
    (tmp_path / "notes.txt").write_bytes(b"a shopping list")
    want = {
        "card.json": "card.json: Malformed: invalid JSON: unexpected end of data (byte 400)",
        "card.png": "card.png: Malformed: not a readable PNG: tEXt chunk runs past the end of the file",
        "card.charx": "card.charx: Malformed: not a readable zip: ",
        "notes.txt": "notes.txt: NotRecognized: no format recognised this input",
    }
    for name, line in want.items():
        for cmd in (["detect"], ["inspect"], ["convert", "--to", "risu", "-o", "x.charx"]):
            r = bunzai(*cmd[:1], name, *cmd[1:], cwd=tmp_path)
            assert r.returncode == 3, (cmd, r.stderr)
            assert any(ln.startswith(line) for ln in r.stderr.splitlines()), (cmd, r.stderr)
    assert not (tmp_path / "x.charx").exists()


def test_not_recognised_names_the_nearest_formats_and_their_scores() -> None:
    from bunzai_codecs.core.codec import Codec
    from bunzai_codecs.core.entity import Decoded
    from bunzai_codecs.core.sniff import Sniff

    class Near(Codec):
        id = "near-miss"
        kind = "character"

        def detect(self, s: Sniff) -> float:
            return 0.3

        def decode(self, s: Sniff) -> Decoded:
            raise NotImplementedError

    with registry.using({"near-miss": Near}):
        err = registry.unrecognized(Sniff(b"{}", "x.json"))
    assert str(err) == "x.json: NotRecognized: no format recognised this input; nearest: near-miss (0.30)"


def test_inspect_takes_from_and_format_is_a_deprecated_alias(tmp_path: Path) -> None:
    (tmp_path / "card.json").write_bytes(CARD.read_bytes()[:400])
    r = bunzai("inspect", "--from", "sillytavern", "card.json", cwd=tmp_path)
    assert r.returncode == 3 and one_line(r.stderr).startswith("card.json: Malformed: invalid JSON")
    r = bunzai("inspect", "--format", "sillytavern", CARD, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith('{"schemaVersion":1,"kind":"character"')
    assert one_line(r.stderr) == "note: --format is deprecated (it goes in the next release): use --from"
    r = bunzai("inspect", "--from", "nope", CARD, cwd=tmp_path)
    assert r.returncode == 2 and "--from: unknown format 'nope'" in r.stderr


def test_an_output_the_format_cannot_hold_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    r = bunzai(
        "convert",
        SAMPLES / "risu" / "lantern_harbor.risum",
        "--to",
        "risu-module",
        "-o",
        "mod.json",
        cwd=tmp_path,
    )
    assert r.returncode == 2
    assert one_line(r.stderr).startswith("bunzai: error: mod.json: risu-module: this module carries 1 asset")
    assert not (tmp_path / "mod.json").exists()


# -- 4. --image everywhere a picture fits ------------------------------------------------------


@pytest.mark.parametrize(
    ("to", "out", "fmt"),
    [
        ("risu", "x.charx", "risu"),
        ("risu", "x.jpeg", "risu"),
        ("agnai", "x.json", "agnai"),
        ("voxta", "x.voxpkg", "voxta"),
        ("byaf", "x.byaf", "byaf"),
        ("marinara", "x.json", "marinara-character"),
        ("sillytavern", "x.json", "sillytavern"),
    ],
)
def test_image_is_the_portrait_of_every_format_that_holds_one(
    tmp_path: Path, to: str, out: str, fmt: str
) -> None:
    face, data = _image(tmp_path)
    r = bunzai("convert", CARD, "--to", to, "-o", out, "--image", face, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    e = read((tmp_path / out).read_bytes(), out).primary
    assert e.source is not None and e.source.format == fmt
    portrait = e.body.media.portrait  # type: ignore[union-attr]
    assert portrait is not None and portrait.sha256 == digest(data)
    assert e.media[portrait.sha256] == data


def test_image_where_no_picture_fits_is_a_usage_error_naming_those_that_hold_one(tmp_path: Path) -> None:
    face, _ = _image(tmp_path)
    r = bunzai(
        "convert", WORLD, "--to", "sillytavern-lorebook", "-o", "w.json", "--image", face, cwd=tmp_path
    )
    assert r.returncode == 2
    assert one_line(r.stderr) == (
        "bunzai: error: --image: sillytavern-lorebook holds no picture of a lorebook; "
        "formats that do: vaud-json, novelai-lorebook"
    )
    r = bunzai(
        "convert", WORLD, "--to", "novelai-lorebook", "-o", "w.lorebook", "--image", face, cwd=tmp_path
    )
    assert r.returncode == 2
    assert one_line(r.stderr) == (
        "bunzai: error: --image: novelai-lorebook's .lorebook file holds no picture; it does as .png"
    )
    r = bunzai("convert", WORLD, "--to", "novelai-lorebook", "-o", "w.png", "--image", face, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "w.json").exists() and not (tmp_path / "w.lorebook").exists()


# -- 5. no surprising writes -------------------------------------------------------------------


def test_schema_without_a_folder_prints_to_stdout_and_writes_nothing(tmp_path: Path) -> None:
    r = bunzai("schema", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""
    schemas = orjson.loads(r.stdout)
    assert set(schemas) == {"character", "lorebook", "persona", "preset", "regex", "fidelity-row"}
    assert list(tmp_path.iterdir()) == []
    r = bunzai("schema", "docs/schema", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "docs" / "schema" / "character.schema.json").is_file()


# -- 6. zips like folders ----------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_a_zip_of_files_is_read_member_by_member(tmp_path: Path) -> None:
    _zip(
        tmp_path / "backup.zip",
        {
            "cards/tidepool.png": (SAMPLES / "sillytavern" / "tidepool.png").read_bytes(),
            "cards/oswin.charx": (SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes(),
            "world.json": WORLD.read_bytes(),
            "broken.json": b'{"name": ',
            ".DS_Store": b"\0\0",
            "__MACOSX/cards/._tidepool.png": b"\0",
        },
    )
    r = bunzai("detect", "--json", "backup.zip", cwd=tmp_path)
    assert r.returncode == 3  # broken.json
    got = {d["file"]: d["format"] for d in map(orjson.loads, r.stdout.splitlines())}
    assert got == {
        "zip://cards/tidepool.png::backup.zip": "sillytavern",
        "zip://cards/oswin.charx::backup.zip": "risu",
        "zip://world.json::backup.zip": "sillytavern-lorebook",
        "zip://broken.json::backup.zip": None,
    }
    assert one_line(r.stderr) == (
        "zip://broken.json::backup.zip: Malformed: invalid JSON: unexpected end of data (byte 9)"
    )
    r = bunzai("inspect", "backup.zip", cwd=tmp_path)
    assert r.returncode == 3
    kinds = [orjson.loads(ln)["kind"] for ln in r.stdout.splitlines()]
    assert kinds.count("character") == 2 and "lorebook" in kinds
    r = bunzai("convert", "backup.zip", "--to", "sillytavern", "-o", "out/", "-j", "1", cwd=tmp_path)
    assert r.returncode == 3 and "zip://broken.json::backup.zip: Malformed" in r.stderr
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "cards/oswin.png",
        "cards/tidepool.png",
        "world.json",
    ]
    assert _format_of(out / "world.json") == "sillytavern-lorebook"


def test_a_zip_that_cannot_be_read_as_files_says_why_in_one_line(tmp_path: Path) -> None:
    _zip(tmp_path / "empty.zip", {".hidden": b"x"})
    r = bunzai("detect", "empty.zip", cwd=tmp_path)
    assert r.returncode == 3 and one_line(r.stderr) == "empty.zip: a zip with no input files in it"
    r = bunzai("convert", "empty.zip", "--to", "risu", "-o", "out/", cwd=tmp_path)
    assert r.returncode == 3 and one_line(r.stderr) == "empty.zip: a zip with no input files in it"
    # a card container is its format's, never a zip of files
    r = bunzai("detect", SAMPLES / "risu" / "oswin_the_lamplighter.charx", cwd=tmp_path)
    assert r.returncode == 0 and "risu" in r.stdout


# -- 7. scenario files and partial presets -----------------------------------------------------

SCENARIO = {
    "scenarioVersion": 1,
    "title": "Lantern Watch",
    "prompt": "The lamps of the harbour go out one by one.",
    "context": [{"text": "Memory: the keeper is missing.", "contextConfig": {}}],
    "settings": {"parameters": {"temperature": 1.1}},
    "lorebook": {
        "lorebookVersion": 5,
        "entries": [
            {
                "text": "The old lighthouse stands on the north cliff.",
                "displayName": "Lighthouse",
                "keys": ["lighthouse"],
                "contextConfig": {"budgetPriority": 400},
                "enabled": True,
            }
        ],
        "settings": {"orderByKeyLocations": False},
        "categories": [],
    },
}


def test_a_scenario_json_keeps_its_container_and_a_bare_book_reports_the_story_lost(tmp_path: Path) -> None:
    (tmp_path / "watch.scenario.json").write_bytes(orjson.dumps(SCENARIO))
    r = bunzai(
        "convert",
        "watch.scenario.json",
        "--to",
        "novelai-lorebook",
        "-o",
        "other.scenario.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    tree = orjson.loads((tmp_path / "other.scenario.json").read_bytes())
    assert tree["prompt"] == SCENARIO["prompt"] and tree["settings"] == SCENARIO["settings"]
    assert tree["lorebook"]["entries"][0]["text"] == "The old lighthouse stands on the north cliff."
    assert "nothing lost" in r.stderr
    for to, out in (("novelai-lorebook", "bare.lorebook"), ("sillytavern", "world.json")):
        r = bunzai("convert", "watch.scenario.json", "--to", to, "-o", out, "--strict", cwd=tmp_path)
        assert r.returncode == 0, r.stderr  # expected losses: the target has no place for a story
        assert "nothing lost" not in r.stderr
        assert "0 unexpected, 5 expected lost or changed" in r.stderr
        for key in ("scenarioVersion", "title", "prompt", "context", "settings"):
            assert f"    lost scenario.{key} (outside every entity)" in r.stderr.splitlines()


def test_an_older_sillytavern_preset_with_prompts_alone_is_recognised(tmp_path: Path) -> None:
    preset = {
        "prompts": [
            {"name": "Main Prompt", "system_prompt": True, "role": "system", "content": "Be the narrator.", "identifier": "main"},
            {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
            {"name": "Harbor voice", "system_prompt": False, "role": "system", "content": "Speak like a pilot.", "identifier": "harbor-voice"},
        ]
    }  # fmt: skip
    (tmp_path / "old.json").write_bytes(orjson.dumps(preset))
    r = bunzai("detect", "--json", "old.json", cwd=tmp_path)
    assert r.returncode == 0 and orjson.loads(r.stdout)["format"] == "sillytavern-preset"
    r = bunzai("convert", "old.json", "--to", "sillytavern", "-o", "out/", cwd=tmp_path)
    assert r.returncode == 0 and "old (preset) -> sillytavern-preset: nothing lost" in r.stderr
    body = read((tmp_path / "out" / "old.json").read_bytes(), "old.json").primary.body
    assert [p.id for p in body.prompts] == ["main", "chatHistory", "harbor-voice"]  # type: ignore[attr-defined]
    # a list of other objects named prompts is not one
    (tmp_path / "other.json").write_bytes(orjson.dumps({"prompts": [{"identifier": "x"}]}))
    assert bunzai("detect", "other.json", cwd=tmp_path).returncode == 3


# -- the shared corpus -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("app", ["sillytavern", "risu"])
def test_the_corpus_converts_to_an_app_every_file_bunzai_reads(tmp_path: Path, app: str) -> None:
    corpus = corpus_root()
    if corpus is None:
        pytest.skip("no ../shared/corpus")
    from bunzai_codecs.core.sniff import Sniff

    readable = 0
    for p in sorted(corpus.rglob("*")):
        hidden = any(part.startswith(".") for part in p.relative_to(corpus).parts)
        if p.is_file() and not hidden and registry.detect(Sniff(p.read_bytes(), p.name)) is not None:
            readable += 1
    r = bunzai("convert", corpus, "--to", app, "-o", "out/", "-j", "2", cwd=tmp_path)
    assert r.returncode in (0, 3), r.stderr  # 3: files no format reads (notes, rejects)
    failures = [ln for ln in r.stderr.splitlines() if ": NotRecognized: " in ln or ": Malformed: " in ln]
    assert not [ln for ln in r.stderr.splitlines() if "Unsupported" in ln or "internal error" in ln]
    assert f"converted {readable} of {readable + len(failures)} inputs" in r.stderr, r.stderr[-2000:]
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) >= readable  # a file per input at least (linked entities beside some)


def test_an_interrupted_fidelity_run_leaves_no_output_folder(tmp_path: Path) -> None:
    """Ctrl-C while ``bunzai fidelity`` works: exit 130, one line, and the folder it made is gone
    (it used to stay behind, empty)."""
    import signal
    import time

    proc = subprocess.Popen(
        [BUNZAI, "fidelity", str(SAMPLES), "-o", "report/", "-q"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "report").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # inside the checks (the folder is made first)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "bunzai fidelity: interrupted"
    assert not (tmp_path / "report").exists()
