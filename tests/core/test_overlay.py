"""merge3: the escrow overlay keeps the twin wherever the canonical body did not change."""

from bunzai_codecs.core.overlay import merge3


def test_unchanged_body_returns_the_raw_tree_itself() -> None:
    raw = {"talkativeness": "0.5", "odd": [1, 2]}
    base = {"talkativeness": 0.5}
    assert merge3(raw, base, {"talkativeness": 0.5}) is raw


def test_a_changed_value_wins_and_unmapped_keys_survive() -> None:
    raw = {"name": "A", "talkativeness": "0.5", "x_unmapped": {"k": None}}
    base = {"name": "A", "talkativeness": 0.5}
    new = {"name": "B", "talkativeness": 0.5}
    out = merge3(raw, base, new)
    assert out == {"name": "B", "talkativeness": "0.5", "x_unmapped": {"k": None}}
    assert list(out) == ["name", "talkativeness", "x_unmapped"]  # twin key order kept
    assert out["x_unmapped"] is raw["x_unmapped"]  # shared, not copied
    assert raw["name"] == "A"  # never mutated


def test_a_key_the_writer_no_longer_produces_is_removed() -> None:
    raw = {"nickname": "N", "keep": 1}
    base = {"nickname": "N"}
    assert merge3(raw, base, {}) == {"keep": 1}


def test_new_keys_are_appended() -> None:
    assert merge3({"a": 1}, {"a": 1}, {"a": 1, "b": 2}) == {"a": 1, "b": 2}


def test_a_default_the_twin_never_wrote_stays_unwritten_when_a_sibling_changes() -> None:
    raw = {"content": "a"}  # an old file: no "sticky" key at all
    base = {"content": "a", "sticky": None}
    new = {"content": "b", "sticky": None}
    assert merge3(raw, base, new) == {"content": "b"}
    assert merge3(raw, base, {"content": "b", "sticky": 2}) == {"content": "b", "sticky": 2}


def test_lists_merge_by_position_and_take_the_new_tail() -> None:
    raw = [{"k": "x", "raw": 1}, {"k": "y", "raw": 2}]
    base = [{"k": "x"}, {"k": "y"}]
    new = [{"k": "x"}, {"k": "Y"}, {"k": "z"}]
    assert merge3(raw, base, new) == [{"k": "x", "raw": 1}, {"k": "Y", "raw": 2}, {"k": "z"}]


def test_keyed_lists_survive_a_deletion_in_the_middle() -> None:
    raw = [
        {"uid": 1, "t": "a", "extra": 1},
        {"uid": 2, "t": "b", "extra": 2},
        {"uid": 3, "t": "c", "extra": 3},
    ]
    base = [{"uid": 1, "t": "a"}, {"uid": 2, "t": "b"}, {"uid": 3, "t": "c"}]
    new = [{"uid": 1, "t": "a"}, {"uid": 3, "t": "c"}]
    out = merge3(raw, base, new, list_key=lambda d: d.get("uid"))
    assert out == [raw[0], raw[2]]
    positional = merge3(raw, base, new)
    assert positional[1] == {"uid": 3, "t": "c", "extra": 2}  # why list_key exists


def test_type_change_takes_new() -> None:
    assert merge3({"a": "1"}, {"a": 1}, {"a": [1]}) == {"a": [1]}


def test_overlay_twin_keeps_the_twin_until_the_body_changes() -> None:
    from pydantic import BaseModel

    from bunzai_codecs.core.overlay import overlay_twin

    class Note(BaseModel):
        title: str
        text: str

    raw = {"Title": "a", "Text": "b", "unknown": 1}
    mapped = {"title": raw["Title"], "text": raw["Text"]}

    def to_native(n: Note) -> dict[str, str]:
        return {"Title": n.title, "Text": n.text}

    assert overlay_twin(raw, Note(title="a", text="b"), mapped, to_native) is raw
    edited = overlay_twin(raw, Note(title="a", text="c"), mapped, to_native)
    assert edited == {"Title": "a", "Text": "c", "unknown": 1}
    assert raw["Text"] == "b"  # the twin is never mutated
