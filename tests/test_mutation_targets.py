"""``make mutate``'s list stays true to the tree (tests/mutation/targets.py): every module and test
path it names exists, and the matcher that pairs a survivor with its reason is exact."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutation.__main__ import Survivor, _function, explain
from tests.mutation.targets import EXPLAINED, TARGETS, Explained

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", TARGETS, ids=[t.slug for t in TARGETS])
def test_every_target_and_its_tests_exist(target) -> None:  # type: ignore[no-untyped-def]
    assert (ROOT / target.module).is_file(), target.module
    assert target.tests
    for t in target.tests:
        assert (ROOT / t.split("::")[0]).exists(), t


def test_slugs_are_unique_and_explanations_name_targets() -> None:
    assert len({t.slug for t in TARGETS}) == len(TARGETS)
    modules = {t.module for t in TARGETS}
    import fnmatch
    import re

    for e in EXPLAINED:
        assert any(fnmatch.fnmatchcase(m, e.module) for m in modules), e
        assert e.reason.strip() and (e.before or e.after or e.function != "*"), e
        re.compile(e.before), re.compile(e.after)


def test_the_wording_rule_takes_only_an_error_message_s_text() -> None:
    def why(before: str, after: str) -> str | None:
        return explain("bunzai_codecs/core/archive.py", Survivor("n", "f", "survived", before, after))

    msg = 'raise Malformed("bad local header", path=m.name, offset=p)'
    assert why(msg, 'raise Malformed("XXbad local headerXX", path=m.name, offset=p)')
    assert why(msg, 'raise Malformed("BAD LOCAL HEADER", path=m.name, offset=p)')
    assert why(msg, "raise Malformed(None, path=m.name, offset=p)")
    assert why(msg, 'raise Malformed("bad local header", path=None, offset=p)') is None
    assert why(msg, 'raise Malformed("bad local header", offset=p)') is None
    assert why("if p < 0 or p > n:", "if p < 0 and p > n:") is None


def test_a_survivor_is_explained_only_by_its_module_function_and_lines() -> None:
    table = (Explained("m.py", "f", r"x \+ 1", r"x - 1", "why"), Explained("m.py", "C.*", "", "None", "any"))
    s = Survivor("n", "f", "survived", "y = x + 1", "y = x - 1")
    assert explain("m.py", s, table) == "why"
    assert explain("n.py", s, table) is None
    assert explain("m.py", Survivor("n", "g", "survived", "y = x + 1", "y = x - 1"), table) is None
    assert explain("m.py", Survivor("n", "f", "survived", "y = x + 1", "y = x * 1"), table) is None
    assert explain("m.py", Survivor("n", "C.put", "survived", "a", "return None"), table) == "any"


def test_mutant_names_read_as_functions() -> None:
    m = "bunzai_codecs/core/escrow.py"
    assert _function("bunzai_codecs.core.escrow.x_facet__mutmut_3", m) == "facet"
    assert _function("bunzai_codecs.core.escrow.xǁTwinǁblob__mutmut_12", m) == "Twin.blob"
