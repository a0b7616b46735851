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
