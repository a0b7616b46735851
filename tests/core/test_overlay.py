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


# -- found by mutation testing: the key reaches nested lists, the fall-backs, by_id ---------------------


def _rows(*ids: str, extra: bool = True) -> list[dict[str, object]]:
    return [{"id": i, "t": i.upper(), **({"extra": f"twin of {i}"} if extra else {})} for i in ids]


def test_by_id_pairs_rows_by_their_id_and_anything_else_by_position() -> None:
    from bunzai_codecs.core.overlay import by_id

    raw, base = _rows("a", "b", "c"), _rows("a", "b", "c", extra=False)
    new = _rows("a", "c", extra=False)  # b deleted
    assert merge3(raw, base, new, list_key=by_id) == [raw[0], raw[2]]
    assert (by_id({"id": 7}), by_id({"uid": 7}), by_id("a"), by_id(None)) == (7, None, None, None)


def test_the_list_key_pairs_the_rows_of_nested_lists_too() -> None:
    """A book's entries each holding keyed rows: a row deleted inside an entry keeps the twin of
    the rows after it (the key is passed down every level, dicts and positional lists alike)."""
    from bunzai_codecs.core.overlay import by_id

    def book(rows: list[dict[str, object]], *, extra: bool) -> dict[str, object]:
        e = {"id": "e1", "title": "E", "rows": rows}
        return {"entries": [e if not extra else {**e, "twin": True}], "name": "B"}

    raw = book(_rows("a", "b"), extra=True)
    base = book(_rows("a", "b", extra=False), extra=False)
    new = book(_rows("b", extra=False), extra=False)
    new["name"] = "B2"  # an edit elsewhere too
    out = merge3(raw, base, new, list_key=by_id)
    assert out == {
        "entries": [{"id": "e1", "title": "E", "rows": [raw["entries"][0]["rows"][1]], "twin": True}],
        "name": "B2",
    }  # type: ignore[index]
    # and through a positional list of lists (no ids at that level)
    out = merge3([raw], [base], [new], list_key=by_id)
    assert out[0]["entries"][0]["rows"] == [raw["entries"][0]["rows"][1]]  # type: ignore[index]


def test_keys_that_cannot_pair_rows_fall_back_to_positions() -> None:
    """A key missing or repeated on either side means pairing by position, never by a key that
    would pair two rows with one twin."""
    raw = [{"k": "a", "x": 1}, {"k": "b", "x": 2}]
    base = [{"k": "a"}, {"k": "b"}]
    for b, n in [
        ([{"k": "a"}, {"k": "a"}], [{"k": "b"}, {"k": "c"}]),  # repeated in base only
        ([{"k": "a"}, {"k": "b"}], [{"k": "b"}, {"k": "b"}]),  # repeated in new only
        ([{"k": "a"}, {}], [{"k": "b"}, {"k": "c"}]),  # missing in base only
        ([{"k": "a"}, {"k": "b"}], [{"k": "b"}, {}]),  # missing in new only
    ]:
        out = merge3(raw, b, n, list_key=lambda d: d.get("k"))
        assert out == [merge3(raw[0], b[0], n[0]), merge3(raw[1], b[1], n[1])], (b, n)
    assert merge3(raw, base, [{"k": "b"}], list_key=lambda d: d["k"]) == [raw[1]]


def test_only_three_objects_merge_key_by_key() -> None:
    assert merge3({"a": 1}, {"a": 1}, "now a string") == "now a string"
    assert merge3({"a": 1}, {"a": 1}, ["a"]) == ["a"]
    assert merge3({"a": 1, "odd": 2}, None, {"a": 2}) == {"a": 2}  # no base: nothing to keep
    assert merge3("raw text", {"a": 1}, {"a": 2}) == {"a": 2}


def test_overlay_twin_pairs_list_rows_by_the_codec_s_key() -> None:
    """A lore entry deleted from a book: the entries after it keep their own twin's unmapped data
    (``overlay_twin`` passes the codec's ``list_key`` to the merge; by position, the second entry
    would carry the deleted one's)."""
    from pydantic import BaseModel

    from bunzai_codecs.core.overlay import by_id, overlay_twin

    class Row(BaseModel):
        id: str
        t: str

    class Book(BaseModel):
        rows: list[Row]

    raw = {"rows": _rows("a", "b", "c")}
    mapped = {"rows": _rows("a", "b", "c", extra=False)}

    def to_native(b: Book) -> dict[str, object]:
        return {"rows": [r.model_dump() for r in b.rows]}

    edited = Book.model_validate({"rows": _rows("a", "c", extra=False)})  # b deleted
    assert overlay_twin(raw, edited, mapped, to_native, list_key=by_id) == {
        "rows": [raw["rows"][0], raw["rows"][2]]
    }
