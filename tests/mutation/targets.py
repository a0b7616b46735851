"""What ``make mutate`` mutates, with which tests, and the survivors found harmless.

A target is a module whose bugs lose data or hide a loss, with the fast tests that cover it (its
own selection: mutmut then runs, per mutant, those of them that executed the mutated function).
``functions``: only these functions of a big module are mutated (fnmatch patterns on mutmut's
names, ``bounded`` or ``Twin.blob``); empty: the whole module.

An ``Explained`` survivor is matched by module and function (fnmatch patterns) and by a regular
expression searched in the line the mutant removed and one in the line it added; its reason says
why no test should notice (an equivalent mutant: the same behaviour written another way; or
wording). A survivor that is a behaviour a user would lose by is not explained here: a test is
added for it instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    slug: str
    module: str
    #: pytest arguments: the test files (or node ids) that cover the module; fast tests only
    tests: tuple[str, ...]
    #: what a bug here costs a user
    why: str
    functions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explained:
    #: fnmatch patterns: the module's path, the function as mutmut names it (``Twin.blob``)
    module: str
    function: str
    #: regular expressions searched in the line the mutant removed and in the line it put there
    before: str
    after: str
    reason: str


TARGETS: tuple[Target, ...] = (
    Target(
        "inflate",
        "bunzai_codecs/core/inflate.py",
        ("tests/core/test_inflate.py", "tests/core/test_png.py", "tests/core/test_archive.py"),
        "every zlib stream: a bound that does not hold lets a bomb take the memory",
    ),
    Target(
        "escrow",
        "bunzai_codecs/core/escrow.py",
        ("tests/core", "tests/test_entities.py", "tests/test_vaud.py", "tests/pipeline/test_io.py"),
        "the twin: what a same-format export writes back beyond the canonical model",
    ),
    Target(
        "overlay",
        "bunzai_codecs/core/overlay.py",
        (
            "tests/core/test_overlay.py",
            "tests/core/test_holds_mapped.py",
            "tests/formats/sillytavern",
            "tests/formats/novelai",
            "tests/formats/agnai",
        ),
        "the merge of an edit into the twin: an edit lost, or the twin's extra data dropped",
    ),
    Target(
        "media",
        "bunzai_codecs/core/media.py",
        (
            "tests/test_media.py",
            "tests/fidelity/test_media_rows.py",
            "tests/formats/risu/test_risu_charx.py",
            "tests/formats/risu/test_risu_persona.py",
            "tests/formats/backyard/test_backyard.py",
            "tests/formats/voxta/test_voxta.py",
            "tests/test_vaud.py",
        ),
        "picture keys and image bounds: a changed picture passed off as the same, an image bomb",
        functions=(
            "digest",
            "bind",
            "wire",
            "bytes_of",
            "store_for",
            "_open",
            "_Memo.*",
            "_upright",
            "_encode_png",
            "as_png",
            "_pixels",
            "pixels_key",
        ),
    ),
    Target(
        "fidelity",
        "bunzai_codecs/fidelity/paths.py",
        ("tests/fidelity",),
        "the fidelity classing: a loss the target could hold passed off as expected, or a row's status",
    ),
    Target(
        "fidelity-media",
        "bunzai_codecs/fidelity/media.py",
        ("tests/fidelity/test_media_rows.py", "tests/test_media.py", "tests/fidelity/test_checks.py"),
        "the media classing: a changed picture called a re-encode, a lost image not reported",
    ),
    Target(
        "audit",
        "bunzai_codecs/audit.py",
        ("tests/fidelity/test_audit.py", "tests/fidelity/test_report.py"),
        "the fidelity regression gate: a codec change that loses data, passed",
        functions=(
            "_worst",
            "InputState.*",
            "PairState.*",
            "Snapshot.*",
            "_pair",
            "Audit.ok",
            "_most_lost",
            "compare",
            "audit_runs",
            "gate",
        ),
    ),
    Target(
        "commit",
        "pipeline/dataset/commit.py",
        ("tests/pipeline/test_verdict.py",),
        "the commit's verdict: an incomplete run committed, pruning the previous results",
        functions=("verdict_of", "_more", "staging_parent"),
    ),
    Target(
        "since",
        "pipeline/normalize/since.py",
        ("tests/pipeline/test_since_checks.py",),
        "--since: a previous run's results reused when this run would make others",
        functions=("load_previous", "codec_fingerprint", "Previous.*"),
    ),
    Target(
        "prune",
        "pipeline/dataset/prune.py",
        ("tests/pipeline/test_prune.py",),
        "prune: a file of this run removed, or a stale one kept, or pruning after a refused run",
        functions=("_ListManaged.*", "_stale", "_Remove.*"),
    ),
    Target(
        "archive",
        "bunzai_codecs/core/archive.py",
        (
            "tests/core/test_archive.py",
            "tests/core/test_sniff.py",
            "tests/formats/risu/test_risu_charx.py",
            "tests/formats/backyard/test_byaf.py",
            "tests/formats/voxta/test_voxta.py",
            "tests/formats/lumiverse/test_lumiverse_card.py",
        ),
        "zip bounds and names: a bomb, an escaping member name, a member dropped on rewrite",
        # not the end-of-directory search and entry count (_find_eocd, _count_entries): parsing
        # that rejects or misreads a broken zip, which the fuzz corpus replays
        functions=(
            "open_zip",
            "ZipReader.*",
            "_inflate_member",
            "_check_layout",
            "_local_header",
            "_same_name",
            "safe_member_name",
            "write_zip",
        ),
    ),
)


#: every caller of inflate.bounded (core/png, core/archive, risu/risup) catches Truncated and raises
#: its own typed error with its own message
_CALLERS_WORD_IT = "message only: every caller raises its own typed error with its own wording"

_WORDING = "an error message's wording (its type, path and offset are pinned; its words are not data)"
#: mutmut's string mutants of an error message: XX-wrapped, upper-cased, or None
_MESSAGE = r"raise [\w.]+\((None|f?\"XX|f?\"[^a-z]*\"|f?'XX)"

#: mutmut switches a mutant on in a test process forked from one that has imported the project:
#: code that runs only at import cannot be switched (checked by hand: the same change made in the
#: source fails tests/core, e.g. test_basecache's exports)
_IMPORT_TIME = (
    "not reachable by mutmut: facet() runs only while the twin classes are defined, at import, before "
    "a mutant is switched on; the same changes made in the source fail tests/core (checked by hand)"
)
_MEMOISED = (
    "not reachable by mutmut: _spec is memoised per class in the process the tests are forked from; "
    "the same changes made in the source fail tests/core (checked by hand)"
)

#: the survivors looked at and found harmless, each with why
EXPLAINED: tuple[Explained, ...] = (
    Explained(
        "bunzai_codecs/core/inflate.py",
        "bounded",
        r"raise Truncated\(",
        r"raise Truncated\(",
        _CALLERS_WORD_IT,
    ),
    Explained("*", "*", r"raise [\w.]+\(", _MESSAGE, _WORDING),
    Explained("bunzai_codecs/core/escrow.py", "facet", "", "", _IMPORT_TIME),
    Explained("bunzai_codecs/core/escrow.py", "_spec", "", "", _MEMOISED),
    Explained(
        "bunzai_codecs/core/overlay.py",
        "_models_in",
        r"mentions\(",
        "",
        "equivalent in effect: a field holding models in another shape (dict[str, M]) that is not seen as "
        "such is compared as a plain value, and a model never equals the dict it comes from, so the answer "
        "is still 'no: validate' (tests/core/test_holds_mapped.py, a dict of models)",
    ),
    Explained(
        "bunzai_codecs/core/overlay.py",
        "holds_mapped",
        r"if v is None or m is None:",
        r"if v is None and m is None:",
        "equivalent: with one side None and the other not, each later branch answers False too (a None "
        "is no list, no dict and no model)",
    ),
    Explained(
        "bunzai_codecs/core/overlay.py",
        "unedited",
        r"RuleBroken\(f\"",
        r"type\(None\)",
        "an error message's wording (the RuleBroken of the test suite's CHECK; its type is pinned)",
    ),
    Explained(
        "bunzai_codecs/core/overlay.py",
        "*",
        r"strict=True",
        r"strict=(None|False)|, \)",
        "equivalent: the zipped sequences have one length by construction (slices to the shorter; keys "
        "computed from the list they are zipped with)",
    ),
    Explained(
        "pipeline/normalize/since.py",
        "codec_fingerprint",
        r'b"\\0"',
        r'b"XX\\0XX"',
        "equivalent: any separator between a file's name and bytes makes a fingerprint that changes exactly "
        "when a codec source file's name or bytes change (test_the_fingerprint_is_the_codec_sources)",
    ),
    Explained(
        "bunzai_codecs/fidelity/paths.py",
        "_canonical_losses",
        r"pp = _pattern_of\(prefix\) if prefix else",
        r"or True",
        'equivalent: the pattern of "" is "" (the short-cut skips the call)',
    ),
    Explained(
        "bunzai_codecs/fidelity/paths.py",
        "_classer",
        r"c = memo\.get\(pattern\)",
        "",
        "equivalent: the memo missed, the pattern is classed again by coverage.covers (the same class)",
    ),
    Explained(
        "bunzai_codecs/fidelity/paths.py",
        "_classer",
        r"coverage\.body is not None and coverage\.reshapes",
        r"coverage\.body is not None or coverage\.reshapes",
        "equivalent: more coverages take the branch that asks covers for every path instead of once "
        "per pattern (the same class, slower; tests/fidelity/test_shared_work.py holds the memo to covers)",
    ),
    Explained(
        "bunzai_codecs/fidelity/paths.py",
        "_leaf_paths",
        r"v is None or v\.__class__ is str|k\.isidentifier\(\)",
        r"v is None and v\.__class__ is str|and False",
        "equivalent: an inlined short-cut undone, the general branch gives the same paths "
        "(tests/fidelity/test_walk_shortcuts.py holds _leaf_paths to the plain rule)",
    ),
    Explained(
        "bunzai_codecs/fidelity/media.py",
        "_media_items",
        r"isinstance\((v, dict|sha, str)\)",
        r"or True",
        "equivalent: item() is only given objects, and a canonical sha256 is a string or None (the store "
        "holds nothing under None)",
    ),
    Explained(
        "bunzai_codecs/fidelity/media.py",
        "_same_picture",
        r"pixels_key\(a\.data, a\.sha\), pixels_key\(b\.data, b\.sha\)",
        r"pixels_key\([ab]\.data, (None)?\)",
        "equivalent: the memo key left out is computed from the bytes, and is their sha256",
    ),
    Explained(
        "bunzai_codecs/fidelity/media.py",
        "_same_picture",
        r"if a\.data is None or b\.data is None:",
        r"if a\.data is None and b\.data is None:",
        "equivalent: the pixel key of missing bytes is None (no picture), or the memoised key of that "
        "digest, which is the pixels of the very bytes",
    ),
    Explained(
        "bunzai_codecs/fidelity/media.py",
        "_pair_media",
        r"if o is not po and o\.sha is None:",
        r"if o is not po or o\.sha is None:",
        "harmless: a picture left unpaired then pairs by its ref with an item without bytes, and is "
        "reported lost either way (its fate); only whether that item is listed as added or as changed "
        "fields differs",
    ),
    Explained(
        "bunzai_codecs/fidelity/media.py",
        "media_changes",
        r'Change\(a\.path, "removed", a\.value, None\)',
        r'Change\(a\.path, "removed", a\.value, \)',
        "equivalent: a Change's after defaults to None",
    ),
    Explained(
        "bunzai_codecs/audit.py",
        "compare",
        r'"(lossy|kept|unexpected|round trip|reject|detect)"',
        r'"(LOSSY|KEPT|UNEXPECTED|ROUND TRIP|REJECT|DETECT)"',
        "equivalent: a regression's category is only ever printed upper-cased (Audit.render)",
    ),
    Explained(
        "bunzai_codecs/core/media.py",
        "_pixels",
        r"rgba\.size\[0\]\}x\{rgba\.size\[1\]\}",
        r"rgba\.size\[1\]\}x\{rgba\.size\[1\]\}",
        "equivalent: the width follows from the height and the number of pixel bytes hashed after it "
        "(test_the_picture_key_covers_the_shape_not_only_the_pixels pins the shape)",
    ),
    Explained(
        "bunzai_codecs/core/escrow.py",
        "_what",
        "",
        "",
        "the words naming a JSON type in a mismatch message (tests/core/test_escrow.py pins the message "
        "of each facet type: these mutants change names it does not use, or only their spelling)",
    ),
)
