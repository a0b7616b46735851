"""A small lint of deploy/Dockerfile and deploy/metadata.json: the rules the Dataflow image and the
Flex Template must keep (deploy/README.md says why each matters). Each function returns a list of
problems, empty when the file passes, so the rules themselves are tested on broken examples.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BEAM_IMAGE = "apache/beam_python3.11_sdk"
LAUNCHER_IMAGE = "gcr.io/dataflow-templates-base/python311-template-launcher-base"
LAUNCHER_BINARY = "/opt/google/dataflow/python_template_launcher"
BOOT = "/opt/apache/beam/boot"
LOCK = "deploy/requirements.txt"
#: launcher settings that would make every launch download and stage dependencies the image has
REINSTALLING_ENV = ("FLEX_TEMPLATE_PYTHON_REQUIREMENTS_FILE", "FLEX_TEMPLATE_PYTHON_SETUP_FILE")


@dataclass(frozen=True)
class Instruction:
    cmd: str
    args: str
    line: int


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comments and blank lines dropped."""
    out: list[Instruction] = []
    buf: list[str] = []
    start = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if buf and line.startswith("#"):  # a comment inside a continued instruction
            continue
        if not buf:
            start = n
        if line.endswith("\\"):
            buf.append(line[:-1].strip())
            continue
        buf.append(line)
        joined = " ".join(b for b in buf if b)
        buf = []
        cmd, _, args = joined.partition(" ")
        out.append(Instruction(cmd.upper(), args.strip(), start))
    return out


def image_ref(ref: str) -> tuple[str, str | None, str | None]:
    """``name``, ``tag``, ``digest`` of an image reference."""
    name, _, digest = ref.partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    return name, tag, digest or None


def _flags(args: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(args)
    flags = {}
    rest = []
    for w in words:
        if w.startswith("--") and "=" in w and not rest:
            k, v = w[2:].split("=", 1)
            flags[k] = v
        else:
            rest.append(w)
    return flags, rest


def _env_pairs(args: str) -> dict[str, str]:
    words = shlex.split(args)
    if words and "=" not in words[0]:  # legacy ``ENV KEY value``
        return {words[0]: " ".join(words[1:])}
    return dict(w.split("=", 1) for w in words)


def _pip_installs(run: str) -> list[list[str]]:
    """The argument lists of every ``pip install`` in a RUN command."""
    found = []
    for part in re.split(r"&&|;|\|\|", run):
        words = shlex.split(part)
        for i in range(len(words) - 1):
            if words[i] in ("pip", "pip3") and words[i + 1] == "install":
                found.append(words[i + 2 :])
                break
            if (
                words[i] == "-m"
                and words[i + 1] == "pip"
                and i + 2 < len(words)
                and words[i + 2] == "install"
            ):
                found.append(words[i + 3 :])
                break
    return found


def lint_dockerfile(text: str, *, beam_version: str, root: Path | None = None) -> list[str]:
    """Problems of a Dockerfile meant to be both the Dataflow SDK container and the Flex Template
    launcher. ``beam_version`` is the one the lock pins; ``root`` (the build context) checks that
    every COPY source exists."""
    problems: list[str] = []
    ins = parse_dockerfile(text)
    stages: list[tuple[str, str | None, int]] = []  # (image, stage name, index of the FROM)
    for i, x in enumerate(ins):
        if x.cmd == "FROM":
            words = x.args.split()
            ref = next(w for w in words if not w.startswith("--"))
            lowered = [w.lower() for w in words]
            alias = words[lowered.index("as") + 1] if "as" in lowered[:-1] else None
            stages.append((ref, alias, i))
    if not stages:
        return ["no FROM"]
    names = {alias for _, alias, _ in stages if alias}

    # R1: every image pinned (tag or digest), never latest
    refs = [(ref, f"FROM (line {ins[i].line})") for ref, _, i in stages]
    for x in ins:
        if x.cmd == "COPY":
            flags, _ = _flags(x.args)
            if "from" in flags and flags["from"] not in names and not flags["from"].isdigit():
                refs.append((flags["from"], f"COPY --from (line {x.line})"))
    for ref, where in refs:
        if "$" in ref:
            problems.append(f"{where}: {ref} is not a literal image (the lint and the pin need one)")
            continue
        _, tag, digest = image_ref(ref)
        if digest is None and tag is None:
            problems.append(f"{where}: {ref} has no tag (that is latest)")
        elif tag == "latest":
            problems.append(f"{where}: {ref} uses latest")

    # R2: the final stage is Beam's Python 3.11 SDK image at the locked Beam version
    final_ref, _, final_at = stages[-1]
    name, tag, _ = image_ref(final_ref)
    if name != BEAM_IMAGE:
        problems.append(f"the final stage is {final_ref}, not {BEAM_IMAGE}:{beam_version}")
    elif tag != beam_version:
        problems.append(f"the base image is Beam {tag}; the lock pins apache-beam=={beam_version}")
    final = ins[final_at + 1 :]

    # R3: the Flex Template launcher binary, copied from Google's Python 3.11 launcher image
    launcher_sources = {LAUNCHER_IMAGE} | {
        alias for ref, alias, _ in stages if alias and image_ref(ref)[0] == LAUNCHER_IMAGE
    }
    for ref, _, i in stages:
        if image_ref(ref)[0] == LAUNCHER_IMAGE and not re.fullmatch(
            r"(flex_templates_base_image_release_)?\d{8}[-_][Rr][Cc]\d\d", image_ref(ref)[1] or ""
        ):
            problems.append(f"FROM (line {ins[i].line}): the launcher image needs a dated release tag")
    copied = False
    for x in final:
        if x.cmd == "COPY":
            flags, paths = _flags(x.args)
            src = flags.get("from", "")
            if (src in launcher_sources or image_ref(src)[0] == LAUNCHER_IMAGE) and paths == [
                LAUNCHER_BINARY,
                LAUNCHER_BINARY,
            ]:
                copied = True
    if not copied:
        problems.append(f"the final stage does not copy {LAUNCHER_BINARY} from {LAUNCHER_IMAGE}")

    # R4/R5: the launcher's environment
    env: dict[str, str] = {}
    for x in final:
        if x.cmd == "ENV":
            env.update(_env_pairs(x.args))
    py_file = env.get("FLEX_TEMPLATE_PYTHON_PY_FILE")
    copy_dests: dict[str, str] = {}
    for x in final:
        if x.cmd == "COPY" and "from" not in _flags(x.args)[0]:
            paths = _flags(x.args)[1]
            for src in paths[:-1]:
                copy_dests[src] = paths[-1]
    if not py_file:
        problems.append("ENV FLEX_TEMPLATE_PYTHON_PY_FILE is not set (the launcher role needs it)")
    elif py_file not in copy_dests.values() or not py_file.endswith(".py"):
        problems.append(f"FLEX_TEMPLATE_PYTHON_PY_FILE={py_file} is not a .py file the Dockerfile copies in")
    for key in REINSTALLING_ENV:
        if key in env:
            problems.append(
                f"ENV {key}: the image already holds the dependencies; every launch would reinstall"
            )

    # R6: the SDK harness boot is the entrypoint (exec form)
    entry = [x for x in final if x.cmd == "ENTRYPOINT"]
    if not entry:
        problems.append(f"no ENTRYPOINT: the worker role needs {BOOT}")
    else:
        try:
            value = json.loads(entry[-1].args)
        except json.JSONDecodeError:
            value = None
        if value != [BOOT]:
            problems.append(f'ENTRYPOINT is {entry[-1].args}, not ["{BOOT}"] (exec form)')

    # R7: installs only from the hash lock, or the project itself with no index and no deps
    lock_dest = copy_dests.get(LOCK)
    for x in ins[stages[-1][2] :]:
        if x.cmd != "RUN":
            continue
        if re.search(r"\b(curl|wget)\b", x.args):
            problems.append(
                f"RUN (line {x.line}) downloads with curl/wget: nothing unhashed enters the image"
            )
        for args in _pip_installs(x.args):
            if "--require-hashes" in args:
                files = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-r", "--requirement")]
                if lock_dest is None or files != [lock_dest]:
                    problems.append(f"RUN (line {x.line}): --require-hashes must install {LOCK} (as copied)")
            elif not ("--no-deps" in args and "--no-index" in args):
                problems.append(
                    f"RUN (line {x.line}): pip install {' '.join(args)} is neither the hash lock "
                    "(--require-hashes -r) nor the project itself (--no-deps --no-index)"
                )
    if lock_dest is None:
        problems.append(f"{LOCK} is not copied into the final stage")
    for x in ins:
        if x.cmd == "ADD" and re.search(r"https?://", x.args):
            problems.append(f"ADD (line {x.line}) fetches a URL")

    # R9: COPY sources exist in the build context
    if root is not None:
        for x in ins:
            if x.cmd == "COPY" and "from" not in _flags(x.args)[0]:
                for src in _flags(x.args)[1][:-1]:
                    if not (root / src).exists():
                        problems.append(f"COPY (line {x.line}): {src} is not in the build context")
    return problems


# -- metadata.json -------------------------------------------------------------------------------

#: the fields of Dataflow's TemplateMetadata and ParameterMetadata messages (the v1b3 API)
TEMPLATE_FIELDS = {
    "name",
    "description",
    "parameters",
    "streaming",
    "supportsAtLeastOnce",
    "supportsExactlyOnce",
    "defaultStreamingMode",
    "yamlDefinition",
}
PARAMETER_FIELDS = {
    "name",
    "label",
    "helpText",
    "isOptional",
    "regexes",
    "paramType",
    "defaultValue",
    "hiddenUi",
    "groupName",
    "parentName",
    "parentTriggerValues",
    "enumOptions",
    "customMetadata",
}
PARAM_TYPES = {
    "DEFAULT",
    "TEXT",
    "GCS_READ_BUCKET",
    "GCS_WRITE_BUCKET",
    "GCS_READ_FILE",
    "GCS_WRITE_FILE",
    "GCS_READ_FOLDER",
    "GCS_WRITE_FOLDER",
    "PUBSUB_TOPIC",
    "PUBSUB_SUBSCRIPTION",
    "BIGQUERY_TABLE",
    "JAVASCRIPT_UDF_FILE",
    "SERVICE_ACCOUNT",
    "MACHINE_TYPE",
    "KMS_KEY_NAME",
    "WORKER_REGION",
    "WORKER_ZONE",
    "BOOLEAN",
    "ENUM",
    "NUMBER",
    "KAFKA_READ_TOPIC",
    "KAFKA_WRITE_TOPIC",
}
PARAMETER_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def lint_metadata(text: str, options: Iterable[str], extras: Iterable[str] = ()) -> list[str]:
    """Problems of a Flex Template metadata file whose parameters must be exactly ``options`` (the
    job's option names, underscore spelling) plus the documented ``extras``."""
    try:
        meta: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"not valid JSON: {exc}"]
    if not isinstance(meta, dict):
        return ["not a JSON object"]
    problems = [f"unknown top-level field {k!r}" for k in meta if k not in TEMPLATE_FIELDS]
    for k in ("name", "description"):
        if not isinstance(meta.get(k), str) or not meta[k].strip():
            problems.append(f"{k} is missing or empty")
    params = meta.get("parameters")
    if not isinstance(params, list):
        return [*problems, "parameters is not a list"]
    names: list[str] = []
    for i, p in enumerate(params):
        where = f"parameters[{i}]"
        if not isinstance(p, dict):
            problems.append(f"{where} is not an object")
            continue
        problems += [f"{where}: unknown field {k!r}" for k in p if k not in PARAMETER_FIELDS]
        for k in ("name", "label", "helpText"):
            if not isinstance(p.get(k), str) or not p[k].strip():
                problems.append(f"{where}: {k} is missing or empty (gcloud refuses the template)")
        name = p.get("name", "")
        names.append(name)
        if isinstance(name, str) and not PARAMETER_NAME.match(name):
            problems.append(f"{where}: name {name!r} is not lower_snake_case")
        if "isOptional" in p and not isinstance(p["isOptional"], bool):
            problems.append(f"{where}: isOptional is not a boolean")
        if "paramType" in p and p["paramType"] not in PARAM_TYPES:
            problems.append(f"{where}: paramType {p['paramType']!r} is not one of Dataflow's")
        regexes = p.get("regexes", [])
        if not isinstance(regexes, list) or not all(isinstance(r, str) for r in regexes):
            problems.append(f"{where}: regexes is not a list of strings")
        else:
            for r in regexes:
                try:
                    re.compile(r)
                except re.error as exc:
                    problems.append(f"{where}: regex {r!r} does not compile: {exc}")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"parameters named twice: {dupes}")
    want = set(options) | set(extras)
    missing = sorted(set(options) - set(names))
    unknown = sorted(set(names) - want)
    if missing:
        problems.append(f"options without a parameter: {missing}")
    if unknown:
        problems.append(f"parameters that are no option: {unknown}")
    return problems


__all__ = [
    "BEAM_IMAGE",
    "LAUNCHER_IMAGE",
    "Instruction",
    "image_ref",
    "lint_dockerfile",
    "lint_metadata",
    "parse_dockerfile",
]
