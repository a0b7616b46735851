"""The error taxonomy's stable codes: each is its class name in kebab case (``core.errors``)."""

from __future__ import annotations

from bunzai_codecs.core.errors import ERRORS, BunzaiError, Malformed


def test_codes_are_the_class_names_in_kebab_case() -> None:
    assert BunzaiError.code == "error"
    assert {e.__name__: e.code for e in ERRORS} == {
        "NotRecognized": "not-recognized",
        "Malformed": "malformed",
        "LimitExceeded": "limit-exceeded",
        "Unsupported": "unsupported",
        "EditedExportBlocked": "edited-export-blocked",
        "ValidationFailed": "validation-failed",
    }


def test_a_subclass_may_name_its_own_code() -> None:
    class Odd(Malformed):
        code = "odd-one"

    class PlainOne(Odd):
        pass

    assert (Odd.code, PlainOne.code) == ("odd-one", "plain-one")
