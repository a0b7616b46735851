"""Finding a linked entity's Risu rows (lore rows or customscript rows) in the escrow twins a
Risu codec stored: the shapes are the same for both, only the export ``type`` and the module key
differ."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from bunzai_codecs.core.entity import CanonicalEntity


def is_row_array(
    tree: Any, own: Callable[[dict[str, Any]], bool], hints: Iterable[str], foreign: Iterable[str]
) -> bool:
    """A bare JSON array of Risu rows (other tools write an export's ``data`` alone): not empty,
    and every row an object that ``own`` accepts, with at least one of the ``hints`` keys and none
    of the ``foreign`` ones (another app's rows)."""
    return (
        isinstance(tree, list)
        and bool(tree)
        and all(
            isinstance(r, dict) and own(r) and any(k in r for k in hints) and not any(k in r for k in foreign)
            for r in tree
        )
    )


def rows_in(raw: Any, export_type: str, module_key: str) -> list[Any] | None:
    """The rows a Risu twin tree holds: a row list, a ``{"type": export_type, "data": [...]}``
    export, or a module (``{"module": {...}}`` or flat) under ``module_key``; None for anything
    else (a ``character_book`` included)."""
    if isinstance(raw, list):
        return raw if all(isinstance(r, dict) for r in raw) else None
    if not isinstance(raw, dict):
        return None
    if raw.get("type") == export_type and isinstance(raw.get("data"), list):
        return rows_in(raw["data"], export_type, module_key)
    got = raw.get("module")
    module: dict[str, Any] = got if isinstance(got, dict) else raw
    if module.get("type") == "risuModule" or module is not raw:
        return rows_in(module.get(module_key) or [], export_type, module_key)
    return None


def twin_rows(
    entity: CanonicalEntity, sources: tuple[str, ...], export_type: str, module_key: str
) -> list[Any] | None:
    """The rows of the first twin among ``sources`` (codec ids, in order) that holds any."""
    for fid in sources:
        t = entity.twin(fid)
        rows = rows_in(t.raw, export_type, module_key) if t else None
        if rows is not None:
            return rows
    return None
