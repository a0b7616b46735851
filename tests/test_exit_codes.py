"""One exit-code table (``bunzai_codecs.exitcodes``): each code means one thing, README's table is
that table, and the commands' help texts take their codes from it."""

from __future__ import annotations

import re
from pathlib import Path

from bunzai_codecs.exitcodes import MEANING, Exit, describe

ROOT = Path(__file__).resolve().parents[1]
_ROW = re.compile(r"^\| `(\d+)` \| (.+) \|$")


def _readme_rows() -> dict[int, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Exit codes and errors", 1)[1].split("\n### ", 1)[0]
    rows: dict[int, str] = {}
    for line in section.splitlines():
        m = _ROW.match(line)
        if m:
            assert int(m.group(1)) not in rows, f"README lists exit code {m.group(1)} twice"
            rows[int(m.group(1))] = m.group(2)
    return rows


def test_every_code_has_one_meaning_and_distinct_values() -> None:
    assert set(MEANING) == set(Exit)
    assert len({int(c) for c in Exit}) == len(Exit)
    assert len(set(MEANING.values())) == len(MEANING)
    assert (Exit.INTERRUPTED, Exit.TERMINATED) == (130, 143)  # the shell's 128 + signal number


def test_the_readme_table_is_the_exit_code_table() -> None:
    """Walks README's table and the enum together: the same codes, each row starting with the
    code's one meaning (what follows is per-command detail)."""
    rows = _readme_rows()
    assert sorted(rows) == sorted(int(c) for c in Exit), (
        "README's exit codes differ from bunzai_codecs.exitcodes"
    )
    for code in Exit:
        assert rows[int(code)].startswith(MEANING[code]), (int(code), rows[int(code)], MEANING[code])


def test_the_jobs_help_takes_its_codes_from_the_table() -> None:
    from pipeline.export.job import help_text as export_help
    from pipeline.runtime.options import help_text as normalize_help

    normalize = " ".join(normalize_help().split())
    assert "1 the audit found a regression" in normalize and "7 the manifest does not balance" in normalize
    export = " ".join(export_help().split())
    assert "3 an input is missing" in export and "7 " not in export.split("exit codes:", 1)[1]


def test_describe_lists_codes_with_their_meaning_and_detail() -> None:
    assert describe([Exit.OK, Exit.LOSSY], {Exit.OK: "all kept"}) == (
        "exit codes: 0 done (all kept); 6 convert --strict lost something unexpectedly."
    )


def test_each_failure_of_issue_32_exits_with_its_code(tmp_path: Path) -> None:
    """The command line as a user runs it (issue 32): each failure below exits with the code the
    table gives its kind. An output choice the target cannot honour is a usage error naming the
    file; a missing input (a ``--since`` manifest, an audit baseline) is an input error."""
    import subprocess
    import sys

    samples = ROOT / "samples"
    bunzai = str(Path(sys.executable).with_name("bunzai"))
    (tmp_path / "broken.json").write_bytes(b'{"name": "Harbor", ')
    (tmp_path / "taken.png").write_bytes(b"\x89PNG")
    fidelity = [bunzai, "fidelity", str(samples / "vaud"), "-o", "rep", "-q"]
    assert subprocess.run(fidelity, cwd=tmp_path).returncode == 0
    cases: list[tuple[list[str], Exit, str]] = [
        (["convert", str(samples / "risu/lantern_harbor.risum"), "--to", "risu-module", "-o", "mod.json"],
         Exit.USAGE, "mod.json: risu-module:"),
        (["convert", str(samples / "sillytavern/world-harbor-town.json"), "--to", "voxta", "-o", "x/"],
         Exit.USAGE, "voxta has no format for lorebooks"),
        (["convert", str(samples / "sillytavern/world-harbor-town.json"), "--to", "sillytavern-lorebook",
          "-o", "w.json", "--image", str(samples / "sillytavern/tidepool.png")],
         Exit.USAGE, "--image: sillytavern-lorebook holds no picture"),
        (["convert", str(samples / "sillytavern/tidepool.png"), "--to", "sillytavern", "-o", "taken.png"],
         Exit.USAGE, "taken.png exists"),
        (["detect", "broken.json"], Exit.INPUT, "broken.json: Malformed: invalid JSON"),
        (["convert", "broken.json", "--to", "risu", "-o", "b.charx"], Exit.INPUT, "broken.json: Malformed"),
        (["normalize", "--input", str(samples / "sillytavern"), "--output", "o",
          "--since", "missing/manifest.json", "-q"],
         Exit.INPUT, "--since: no manifest at missing/manifest.json"),
        (["audit", "--report", "rep", "--baseline", "missing/"], Exit.INPUT, "missing/: no baseline"),
    ]  # fmt: skip
    for argv, code, says in cases:
        r = subprocess.run([bunzai, *argv], capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == code, (argv, r.returncode, r.stderr)
        assert says in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "rep", "taken.png"]
