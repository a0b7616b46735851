"""Risu's toggle DSL (``customPromptTemplateToggle`` on presets, ``customModuleToggle`` on modules)
<-> canonical preset choices (docs/formats/risu.md#preset-risu-preset, docs/canonical-model.md#presetchoice).

One toggle per line, ``key=Label[=type[=opt1,opt2,...]]``, split on ``=`` the way Risu splits it
(a fifth ``=`` part is ignored by Risu and kept here only in the twin). ``type`` missing (or
unknown) is a checkbox -> ``toggle``; ``select`` -> ``one`` with options whose value is the option's
index as a string (what Risu stores in ``toggle_<key>``); ``text``/``textarea`` -> ``input``.
Keyless lines (``=Label=group``, ``==groupEnd``, ``=Label=divider``, ``=Text=caption``) are layout:
not canonical, kept by ``merge_toggles`` exactly where they were.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.entities.preset import PresetChoice

_LAYOUT = ("group", "groupEnd", "divider", "caption", "groupStart")


def parse_line(line: str) -> tuple[str, str, str | None, str | None] | None:
    """``(key, label, type, options)`` of a toggle line, or None for layout and junk lines."""
    parts = line.split("=")
    key = parts[0]
    label = parts[1] if len(parts) > 1 else ""
    typ = parts[2] if len(parts) > 2 else None
    opts = parts[3] if len(parts) > 3 else None
    if typ in ("group", "groupEnd", "divider"):
        return None
    if not (key and label):
        return None
    return key, label, typ, opts


def choices_of(text: str) -> list[dict[str, Any]]:
    """Canonical choices (dicts) of a toggle definition string, in line order."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, line in enumerate(text.split("\n")):
        parsed = parse_line(line)
        if parsed is None:
            continue
        key, label, typ, opts = parsed
        cid = key
        n = 2
        while cid in seen:
            cid = f"{key}-{n}"
            n += 1
        seen.add(cid)
        choice: dict[str, Any] = {"id": cid, "key": key, "label": label, "sortOrder": i}
        if typ == "select":
            choice["type"] = "one"
            labels = (opts or "").split(",") if opts is not None else []
            choice["options"] = [{"id": str(j), "label": o, "value": str(j)} for j, o in enumerate(labels)]
        elif typ in ("text", "textarea"):
            choice["type"] = "input"
            if typ == "textarea":
                choice["extras"] = {"risuType": "textarea"}
        else:
            choice["type"] = "toggle"
        out.append(choice)
    return out


def choice_line(c: PresetChoice) -> str:
    key = c.key or c.id
    if c.type == "one" or c.type == "many":
        return f"{key}={c.label}=select=" + ",".join(o.label for o in c.options)
    if c.type == "input":
        typ = (c.extras or {}).get("risuType")
        return f"{key}={c.label}={'textarea' if typ == 'textarea' else 'text'}"
    return f"{key}={c.label}"


def toggles_of(choices: list[PresetChoice]) -> str:
    return "\n".join(choice_line(c) for c in choices)


def merge_toggles(raw: str, base: list[PresetChoice], new: list[PresetChoice]) -> str:
    """``raw`` with the edited choices rewritten, deleted ones dropped and new ones appended; layout
    lines and unedited choice lines stay byte for byte. ``raw`` itself when nothing changed."""
    base_by = {c.id: c for c in base}
    new_by = {c.id: c for c in new}
    if [c.id for c in base] != [c.id for c in new]:
        reordered = [c.id for c in new if c.id in base_by] != [c.id for c in base if c.id in new_by]
    else:
        reordered = False
    if reordered:
        return toggles_of(new)
    ids = [c["id"] for c in choices_of(raw)]
    lines_out: list[str] = []
    k = 0
    for line in raw.split("\n"):
        if parse_line(line) is None:
            lines_out.append(line)
            continue
        cid = ids[k]
        k += 1
        if cid not in new_by:
            continue
        if new_by[cid] == base_by.get(cid):
            lines_out.append(line)
        else:
            lines_out.append(choice_line(new_by[cid]))
    for c in new:
        if c.id not in base_by:
            lines_out.append(choice_line(c))
    out = "\n".join(lines_out)
    return raw if out == raw else out
