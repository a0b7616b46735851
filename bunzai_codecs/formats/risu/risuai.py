"""``data.extensions.risuai`` <-> the canonical character (docs/formats/risu.md#character-risu, docs/canonical-model.md#characterbody).

Every key Risu writes is first-class:

| risuai key | canonical |
|---|---|
| ``bias`` ``[phrase, weight][]`` | ``bias[]`` |
| ``viewScreen``, ``largePortrait``, ``inlayViewScreen``, ``utilityBot``, ``lorePlus`` | ``settings.risu.*`` |
| ``sdData`` ``[label, value][]`` | ``persona.imagePrompt.rows`` |
| ``newGenData`` ``{prompt, negative, instructions, emotionInstructions}`` | ``persona.imagePrompt.{prefix, negative, instructions, emotionInstructions}`` |
| ``vits`` (non-empty) | ``persona.voice`` (provider ``vits``, the object in ``extras``) |
| ``license`` | ``attribution.license`` |
| ``additionalText`` | ``prompts.additionalText`` |
| ``triggerscript`` | ``behavior.triggerScripts`` |
| ``virtualscript``, ``backgroundHTML``, ``backgroundCSS``, ``defaultVariables`` | ``behavior.*`` |
| ``toggles`` / ``customModuleToggle`` | ``behavior.moduleToggles`` |
| ``lowLevelAccess`` | ``behavior.privileged`` |
| ``prebuiltAssetCommand`` (bool or ``""``), ``prebuiltAssetExclude``, ``prebuiltAssetStyle`` | ``behavior.prebuiltAsset.{command, exclude, style}`` |
| ``source`` (when ``data.source`` is missing) | ``attribution.source`` |

``customScripts`` is a linked regex set (the codec builds it); ``private``, ``emotions``,
``additionalAssets`` and unknown keys ride the twin. Values keep their real types (``""`` stays
``""``). Nothing here is executed.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.formats._shared.wire import MapContext, wrong

KEY = "risuai"
SETTINGS = ("viewScreen", "largePortrait", "inlayViewScreen", "utilityBot", "lorePlus")
_BEHAVIOR_STR = {
    "virtualscript": "virtualScript",
    "backgroundHTML": "backgroundHTML",
    "backgroundCSS": "backgroundCSS",
    "defaultVariables": "defaultVariables",
}
GEN_FIELDS = {"prompt": "prefix", "negative": "negative", "instructions": "instructions"}
GEN_FIELDS["emotionInstructions"] = "emotionInstructions"
#: the ``risuai`` keys ``read_risuai`` maps to canonical fields (the table above)
MAPPED = frozenset(
    {
        "bias",
        *SETTINGS,
        "sdData",
        "newGenData",
        "vits",
        "license",
        "source",
        "additionalText",
        "triggerscript",
        *_BEHAVIOR_STR,
        "toggles",
        "customModuleToggle",
        "lowLevelAccess",
        "prebuiltAssetCommand",
        "prebuiltAssetExclude",
        "prebuiltAssetStyle",
    }
)


def _pairs(v: Any, path: str, second: str) -> list[tuple[str, Any]]:
    if not isinstance(v, list):
        raise wrong(path, "an array of pairs", v)
    out = []
    for i, p in enumerate(v):
        if not (isinstance(p, list) and len(p) >= 2 and isinstance(p[0], str)):
            raise wrong(f"{path}[{i}]", "a [string, value] pair", p)
        if second == "num" and (isinstance(p[1], bool) or not isinstance(p[1], int | float)):
            raise wrong(f"{path}[{i}][1]", "a number", p[1])
        if second == "str" and not isinstance(p[1], str):
            raise wrong(f"{path}[{i}][1]", "a string", p[1])
        out.append((p[0], p[1]))
    return out


def read_risuai(data: dict[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
    """Fill ``body`` (a CharacterBody dict being built) from ``data.extensions.risuai`` (``ctx``: the
    context of ``data``)."""
    ext = data.get("extensions")
    r = ext.get(KEY) if isinstance(ext, dict) else None
    if r is None:
        return
    c = ctx.child("extensions", KEY)
    p = c.path
    if not isinstance(r, dict):
        raise wrong(p, "an object", r)

    if r.get("bias") is not None:
        body["bias"] = [{"phrase": a, "weight": b} for a, b in _pairs(r["bias"], f"{p}.bias", "num")]

    settings = body.setdefault("settings", {})
    risu = settings.setdefault("risu", {})
    for k in SETTINGS:
        v = r.get(k)
        if k == "viewScreen":
            risu[k] = c.text(v, (k,))
        else:
            risu[k] = c.boolean(v, (k,))

    persona = body.setdefault("persona", {})
    ip = persona.setdefault("imagePrompt", {})
    if r.get("sdData") is not None:
        ip["rows"] = [{"label": a, "value": b} for a, b in _pairs(r["sdData"], f"{p}.sdData", "str")]
    gen = r.get("newGenData")
    if gen is not None:
        if not isinstance(gen, dict):
            raise wrong(f"{p}.newGenData", "an object", gen)
        for wire, field in GEN_FIELDS.items():
            v = c.text(gen.get(wire), ("newGenData", wire))
            if v:  # Risu always writes all four, "" when unset
                ip[field] = v
    vits = r.get("vits")
    if vits is not None:
        if not isinstance(vits, dict):
            raise wrong(f"{p}.vits", "an object", vits)
        if vits:
            persona["voice"] = {"provider": "vits", "extras": vits}

    att = body.setdefault("attribution", {})
    lic = c.text(r.get("license"), ("license",))
    if lic is not None:
        att["license"] = lic
    src = r.get("source")
    if att.get("source") is None and isinstance(src, list) and all(isinstance(x, str) for x in src):
        att["source"] = src

    prompts = body.setdefault("prompts", {})
    add = c.text(r.get("additionalText"), ("additionalText",))
    if add:  # always written, "" when unset
        prompts["additionalText"] = add

    beh = body.setdefault("behavior", {})
    trig = r.get("triggerscript")
    if trig is not None:
        if not (isinstance(trig, list) and all(isinstance(t, dict) for t in trig)):
            raise wrong(f"{p}.triggerscript", "an array of objects", trig)
        beh["triggerScripts"] = trig
    for wire, field in _BEHAVIOR_STR.items():
        v = c.text(r.get(wire), (wire,))
        if v or (v is not None and wire in ("backgroundHTML", "backgroundCSS")):
            beh[field] = v  # virtualscript and defaultVariables are always written, "" when unset
    tog = r.get("toggles", r.get("customModuleToggle"))
    if tog is not None:
        beh["moduleToggles"] = c.text(tog, ("toggles",))
    beh["privileged"] = c.boolean(r.get("lowLevelAccess"), ("lowLevelAccess",))
    pre: dict[str, Any] = {}
    cmd = r.get("prebuiltAssetCommand")
    if cmd is not None:
        if not isinstance(cmd, bool | str):
            raise wrong(f"{p}.prebuiltAssetCommand", "a boolean or a string", cmd)
        pre["command"] = cmd
    exc = r.get("prebuiltAssetExclude")
    if exc is not None:
        if not (isinstance(exc, list) and all(isinstance(x, str) for x in exc)):
            raise wrong(f"{p}.prebuiltAssetExclude", "an array of strings", exc)
        pre["exclude"] = exc
    style = c.text(r.get("prebuiltAssetStyle"), ("prebuiltAssetStyle",))
    if style is not None:
        pre["style"] = style
    if pre:
        beh["prebuiltAsset"] = pre


def has_risu_data(body: Any) -> bool:
    """True when a ``CharacterBody`` holds anything only ``risuai`` can carry."""
    beh = body.behavior
    return bool(
        body.bias
        or body.settings.risu.model_dump(exclude_none=True)
        or body.persona.imagePrompt.rows
        or body.persona.imagePrompt.instructions
        or body.persona.imagePrompt.emotionInstructions
        or (body.persona.voice is not None and body.persona.voice.provider == "vits")
        or body.attribution.license is not None
        or body.prompts.additionalText
        or beh.model_dump(exclude_none=True, exclude={"prebuiltAsset"})
        or beh.prebuiltAsset.model_dump(exclude_none=True)
    )


def write_risuai(body: Any, *, scripts: list[Any] | None = None, charx: bool = True) -> dict[str, Any]:
    """A fresh ``risuai`` object for a ``CharacterBody``, in Risu's own key order (createBaseV3).

    ``charx`` leaves out ``customScripts`` and ``triggerscript`` (a .charx keeps them in
    module.risum); otherwise ``scripts`` are the customscript rows to embed.
    """
    r: dict[str, Any] = {}
    r["bias"] = [[b.phrase, b.weight] for b in body.bias or []]
    rs = body.settings.risu
    r["viewScreen"] = rs.viewScreen if rs.viewScreen is not None else "none"
    if not charx:
        r["customScripts"] = scripts or []
    r["utilityBot"] = bool(rs.utilityBot)
    ip = body.persona.imagePrompt
    r["sdData"] = [[row.label, row.value] for row in ip.rows] if ip.rows is not None else []
    beh = body.behavior
    if beh.backgroundHTML is not None:
        r["backgroundHTML"] = beh.backgroundHTML
    if body.attribution.license is not None:
        r["license"] = body.attribution.license
    if not charx:
        r["triggerscript"] = beh.triggerScripts or []
    r["additionalText"] = body.prompts.additionalText or ""
    r["virtualscript"] = beh.virtualScript or ""
    r["largePortrait"] = bool(rs.largePortrait)
    r["lorePlus"] = bool(rs.lorePlus)
    r["inlayViewScreen"] = bool(rs.inlayViewScreen)
    r["newGenData"] = {wire: getattr(ip, field) or "" for wire, field in GEN_FIELDS.items()}
    voice = body.persona.voice
    r["vits"] = dict(voice.extras or {}) if voice is not None and voice.provider == "vits" else {}
    r["lowLevelAccess"] = bool(beh.privileged)
    r["defaultVariables"] = beh.defaultVariables or ""
    pa = beh.prebuiltAsset
    r["prebuiltAssetCommand"] = pa.command if pa.command is not None else ""
    r["prebuiltAssetExclude"] = list(pa.exclude or [])
    r["prebuiltAssetStyle"] = pa.style if pa.style is not None else ""
    if beh.backgroundCSS is not None:
        r["backgroundCSS"] = beh.backgroundCSS
    if beh.moduleToggles is not None:
        r["toggles"] = beh.moduleToggles
    return r
