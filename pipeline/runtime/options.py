"""The normalize job's options and the validated ``NormalizeConfig`` the graph is built from.

The job's own options (``NormalizeOptions``) are parsed here and never handed to Beam: Beam gets
only the arguments that are Beam options, and any argument that is neither is refused (exit 2,
with a did-you-mean). Beam ships its options to every worker, which parses them again without
this module loaded: options of ours among them came back as "Discarding unparseable args". The
values reach the workers inside the graph (``NormalizeConfig``), and the manifest records them.

``--storage-options`` carries credentials. It travels only inside ``Storage``, which never prints
it. The manifest records that it was given, never its value.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from apache_beam.options.pipeline_options import (
    DebugOptions,
    GoogleCloudOptions,
    PipelineOptions,
    SetupOptions,
    StandardOptions,
    TestOptions,
    WorkerOptions,
    _BeamArgumentParser,
)

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES
from bunzai_codecs.exitcodes import Exit, describe
from bunzai_codecs.fidelity.patterns import DEFAULT_SAMPLE, sample_of
from pipeline.runtime.errors import UsageError
from pipeline.runtime.secrets import literal_secrets, parse_storage_options, split_secrets
from pipeline.runtime.storage import Storage, is_local_url

DEFAULT_OUTPUT = "out"
DEFAULT_SHARD_BYTES = 128 << 20
#: ``--fidelity`` modes, cheapest first: each one's checks include the previous one's
FIDELITY_MODES = ("off", "native", "full")
DEFAULT_FIDELITY = "full"
#: ``--fidelity-sample``: one input in K has every cross row observed (``fidelity.DEFAULT_SAMPLE``)
DEFAULT_FIDELITY_SAMPLE = f"1/{DEFAULT_SAMPLE}"


def _flag(text: str) -> bool:
    """A switch that also takes a value: Flex Template parameters always arrive as ``--name=value``."""
    v = text.strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")


class NormalizeOptions:
    """``bunzai normalize`` options (run ``bunzai normalize --help``).

    Each option with a dash also answers to its underscore spelling (``--max_file_bytes``), the
    form Beam's own options take and Dataflow Flex Template parameters are passed in
    (deploy/metadata.json names every option). Not a Beam ``PipelineOptions``: see the module's
    docstring.
    """

    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--input",
            dest="inputs",
            action="append",
            default=None,
            metavar="URL",
            help="a file, folder or glob on any fsspec store; chains such as zip://**::s3://bucket/dump.zip "
            "work too. Repeatable. Default: the bundled samples/ folder (on Dataflow: required, and no local paths).",
        )
        parser.add_argument(
            "--output",
            default=DEFAULT_OUTPUT,
            metavar="URL",
            help=f"output folder URL (default: ./{DEFAULT_OUTPUT}; on Dataflow: required, a gs:// or s3:// folder)",
        )
        parser.add_argument(
            "--export",
            default="",
            metavar="FMT[,FMT]",
            help="also write every entity in these formats (of its kind): format ids from `bunzai formats`, or all",
        )
        parser.add_argument(
            "--storage-options",
            "--storage_options",
            dest="storage_options",
            default=None,
            metavar="JSON",
            help='fsspec options, flat ({"endpoint_url": ...}) or per protocol ({"s3": {...}, "gcs": {...}}); '
            "never written to any output or log",
        )
        parser.add_argument(
            "--max-file-bytes",
            "--max_file_bytes",
            dest="max_file_bytes",
            type=int,
            default=MAX_INPUT_BYTES,
            metavar="N",
            help=f"reject larger inputs without reading them (default and maximum: {MAX_INPUT_BYTES})",
        )
        parser.add_argument(
            "--since",
            default=None,
            metavar="MANIFEST_URL",
            help="the previous run's manifest.json: inputs with the same uri, size and checksum are not "
            "decoded again; their results are carried forward",
        )
        parser.add_argument(
            "--shard-bytes",
            "--shard_bytes",
            dest="shard_bytes",
            type=int,
            default=DEFAULT_SHARD_BYTES,
            metavar="N",
            help=f"target size of each shard (default {DEFAULT_SHARD_BYTES}); a canonical shard holds one "
            "unit of inputs, about this many bytes of input but at most 32 MiB",
        )
        parser.add_argument(
            "--fidelity",
            default=DEFAULT_FIDELITY,
            choices=FIDELITY_MODES,
            help="fidelity checks per input: full (default) = the decode row, the same-format round "
            "trip, canonical stability and every cross-format conversion; native = the same without "
            "the cross-format rows; off = no fidelity rows, shards or report",
        )
        parser.add_argument(
            "--fidelity-sample",
            "--fidelity_sample",
            dest="fidelity_sample",
            default=DEFAULT_FIDELITY_SAMPLE,
            metavar="1/K",
            help=f"--fidelity full: observe every cross-format row of one input in K (by the digest of "
            f"its uri) and predict the others' from the observed rows of their pattern (same source "
            f"format, target and filled paths; each row's basis says which); 1/1 observes every row "
            f"(default {DEFAULT_FIDELITY_SAMPLE}; docs/fidelity.md)",
        )
        parser.add_argument(
            "--bigquery-table",
            "--bigquery_table",
            dest="bigquery_table",
            default=None,
            metavar="PROJECT:DATASET.TABLE",
            help="also load the entity index (index/*.parquet) into this BigQuery table once the run "
            "is committed (Beam's BigQuery sink, file loads; the table is replaced); needs the gcp extra "
            "and a gs:// --temp_location",
        )
        parser.add_argument(
            "--allow-empty",
            "--allow_empty",
            dest="allow_empty",
            nargs="?",
            const=True,
            default=False,
            type=_flag,
            metavar="true|false",
            help="an input that matches no file (or does not exist) is not an error: the run goes on "
            "with what the others matched, even nothing (by default such a run fails, exit 3, and "
            "changes nothing)",
        )


def _add_local_args(parser: argparse.ArgumentParser) -> None:
    """Options about this terminal, not about the run (no template parameter, not in the manifest)."""
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress display (the summary is still printed)"
    )
    parser.add_argument("--debug", action="store_true", help="a failure shows its traceback")


def _add_audit_args(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Options of this process once the pipeline has finished, not of the pipeline: taken out of
    the arguments before Beam sees them (so they are no Flex Template parameter either: a launcher
    that only submits the job cannot audit it)."""
    parser.add_argument(
        "--audit-against",
        "--audit_against",
        dest="audit_against",
        default=None,
        metavar="PREVIOUS_OUTPUT",
        help="once the run is written, audit its fidelity rows against a previous run (its output "
        "folder, its fidelity/report.json, or a TSV baseline) as `bunzai audit` does, print the "
        "result and exit 1 on a regression",
    )
    parser.add_argument(
        "--audit-tolerance",
        "--audit_tolerance",
        dest="audit_tolerance",
        default=None,
        metavar="POINTS",
        help="with --audit-against: percentage points a format pair's kept share may drop (default 0.1)",
    )


def split_audit(argv: Sequence[str]) -> tuple[list[str], str | None, float | None]:
    """``argv`` without ``--audit-against`` / ``--audit-tolerance``, and their values."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    _add_audit_args(parser)
    try:
        ns, rest = parser.parse_known_args(list(argv))
    except argparse.ArgumentError as exc:
        raise UsageError(str(exc)) from None
    tolerance: float | None = None
    if ns.audit_tolerance is not None:
        try:
            tolerance = float(ns.audit_tolerance)
        except ValueError:
            raise UsageError(f"--audit-tolerance: not a number: {ns.audit_tolerance!r}") from None
    return rest, ns.audit_against, tolerance


@dataclass(frozen=True)
class NormalizeConfig:
    """What the graph is built from: validated, defaults filled, secrets held in ``storage``."""

    inputs: tuple[str, ...]
    output: str
    export: tuple[str, ...] = ()
    storage: Storage = field(default_factory=Storage)
    max_file_bytes: int = MAX_INPUT_BYTES
    since: str | None = None
    shard_bytes: int = DEFAULT_SHARD_BYTES
    #: ``off``, ``native`` or ``full`` (see ``FIDELITY_MODES``)
    fidelity: str = DEFAULT_FIDELITY
    #: ``--fidelity-sample 1/K``: K (1: every cross row observed)
    fidelity_sample: int = DEFAULT_SAMPLE
    #: a previous run (or baseline) to audit this run's fidelity rows against once it is written
    audit_against: str | None = None
    #: the audit's kept-share tolerance in percentage points (None: the audit's default)
    audit_tolerance: float | None = None
    #: deprecation notes for format ids ``--export`` named (``registry.MOVED``); printed, not recorded
    notes: tuple[str, ...] = ()
    #: an input that matches nothing is not an error
    allow_empty: bool = False
    #: ``PROJECT:DATASET.TABLE`` the entity index is loaded into (pipeline/dataset/index/)
    bigquery_table: str | None = None
    #: local display options (``--quiet``, ``--debug``): not recorded anywhere
    quiet: bool = field(default=False, compare=False)
    debug: bool = field(default=False, compare=False)

    def public(self) -> dict[str, Any]:
        """The options as the manifest records them: everything but the storage options' values."""
        return {
            "inputs": list(self.inputs),
            "output": self.output,
            "export": list(self.export),
            "maxFileBytes": self.max_file_bytes,
            "since": self.since,
            "shardBytes": self.shard_bytes,
            "fidelity": self.fidelity,
            "fidelitySample": f"1/{self.fidelity_sample}",
            "auditAgainst": self.audit_against,
            "allowEmpty": self.allow_empty,
            "bigqueryTable": self.bigquery_table,
            "storageOptions": "given (not recorded)" if self.storage.options else None,
        }


def writable(format_id: str) -> bool:
    """Whether the format's codec can encode (some formats are read-only)."""
    return type(registry.get(format_id)).encode is not Codec.encode


def export_formats(text: str) -> tuple[str, ...]:
    """``--export``: format ids (each checked), or ``all`` = every format bunzai can write."""
    if not text.strip():
        return ()
    if text.strip() == "all":
        return tuple(f for f in sorted(registry.CODECS) if writable(f))
    out: list[str] = []
    for f in (x.strip() for x in text.split(",")):
        if not f:
            continue
        if f not in registry.CODECS:
            known = ", ".join(sorted(registry.CODECS))
            raise UsageError(f"--export: unknown format {f!r}; known: {known}, all")
        if not writable(f):
            raise UsageError(f"--export: bunzai reads {f} but cannot write it")
        if f not in out:
            out.append(f)
    return tuple(out)


def moved_notes(format_ids: Iterable[str]) -> tuple[str, ...]:
    """The deprecation note of each format id whose old meaning moved (``registry.MOVED``), once."""
    notes = (registry.moved_note(f) for f in format_ids)
    return tuple(dict.fromkeys(n for n in notes if n is not None))


def default_inputs() -> tuple[str, ...]:
    """``./samples`` when it exists, else the samples folder of this checkout."""
    here = Path("samples")
    if here.is_dir():
        return ("samples",)
    bundled = Path(__file__).resolve().parents[2] / "samples"
    if bundled.is_dir():
        return (str(bundled),)
    raise UsageError("no --input given and there is no samples/ folder here")


#: runners whose workers are other machines: nothing on this machine's disk reaches them (Beam
#: takes runner names in any case, with or without "Runner", or as a dotted class path)
REMOTE_RUNNERS = ("dataflow", "testdataflow")


def is_remote(options: PipelineOptions) -> bool:
    name = runner_name(options).rsplit(".", 1)[-1].lower().removesuffix("runner")
    return name in REMOTE_RUNNERS


def check_remote(o: argparse.Namespace, options: PipelineOptions) -> None:
    """On Dataflow every URL must name a store the workers reach, and the workers run the bunzai
    image: the job is packaged as a custom SDK container (deploy/README.md), never from this
    checkout, so the bundled samples/ and ./out defaults do not apply."""
    if not o.inputs:
        raise UsageError("--input is required on Dataflow (the bundled samples/ exist only on this machine)")
    if o.output is None or o.output == DEFAULT_OUTPUT:
        raise UsageError("--output is required on Dataflow: a gs:// (or s3://...) folder")
    urls = [("--input", u) for u in o.inputs] + [("--output", o.output)]
    if o.since:
        urls.append(("--since", o.since))
    for flag, url in urls:
        if is_local_url(url):
            raise UsageError(
                f"{flag} {url} is on this machine's disk, which Dataflow workers cannot read: "
                "use gs://, s3:// or another store they reach"
            )
    worker = options.view_as(WorkerOptions)
    if not worker.sdk_container_image:
        raise UsageError(
            "--sdk_container_image is required on Dataflow: the bunzai image built from "
            "deploy/Dockerfile (the stock Beam image lacks bunzai)"
        )
    setup = options.view_as(SetupOptions)
    if setup.sdk_location in (None, "default"):
        setup.sdk_location = "container"  # the image's own Beam: nothing is staged or installed


class _Parser(argparse.ArgumentParser):
    """argparse that raises ``UsageError`` instead of printing and exiting."""

    def error(self, message: str) -> Any:
        raise UsageError(message)


class _BeamParser(_BeamArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)


def own_parser() -> argparse.ArgumentParser:
    """The job's own options (and the local ones), parsed apart from Beam's; no abbreviations, so
    ``--inp`` is refused rather than read as ``--input``."""
    parser = _Parser(prog="bunzai normalize", add_help=False, allow_abbrev=False)
    NormalizeOptions._add_argparse_args(parser)
    _add_local_args(parser)
    return parser


def beam_parser() -> argparse.ArgumentParser:
    """Every option of every Beam ``PipelineOptions`` class loaded so far (Beam's own way of
    knowing them: a runner's module adds its options when it is imported)."""
    parser = _BeamParser(allow_abbrev=False)
    seen: dict[str, type[PipelineOptions]] = {}
    for cls in PipelineOptions.__subclasses__():
        seen.setdefault(str(cls), cls)
    for cls in seen.values():
        cls._add_argparse_args(parser)
    return parser


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--")]


def refuse_unknown(
    unknown: Sequence[str],
    beam: argparse.ArgumentParser,
    *,
    own: Sequence[str],
    prog: str,
    positional: str,
) -> None:
    """One line naming the first argument nobody knows, with the closest known option: of the job's
    own (``own``) first, then Beam's. A bare argument gets ``positional`` (what the job takes instead)."""
    if not unknown:
        return
    flags = [a for a in unknown if a.startswith("-")]
    if not flags:
        raise UsageError(f"unexpected argument {unknown[0]!r}: {positional}")
    name = flags[0].split("=", 1)[0]
    more = f" (and {len(flags) - 1} more)" if len(flags) > 1 else ""
    hint = ""
    for known in (list(own), _option_strings(beam)):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        if close:
            hint = f" (did you mean {close[0]}?)"
            break
    raise UsageError(f"unknown option {name}{hint}{more}; see {prog} --help")


def beam_options(
    beam_args: Sequence[str], own: argparse.ArgumentParser, *, prog: str, positional: str
) -> PipelineOptions:
    """Beam's options from the arguments the job's parser ``own`` left: an unknown runner, or an
    argument neither ``own`` nor Beam knows, is a ``UsageError`` (see :func:`refuse_unknown`)."""
    options = PipelineOptions(list(beam_args))
    check_runner(options)
    beam = beam_parser()
    _, unknown = beam.parse_known_args(list(beam_args))
    known = [*_option_strings(own), "--storage-options"]
    refuse_unknown(unknown, beam, own=known, prog=prog, positional=positional)
    return options


def check_runner(options: PipelineOptions) -> None:
    """An unknown ``--runner`` is a usage error; a known one's module is loaded (and with it the
    options it adds, which the unknown-argument check must know)."""
    from apache_beam.runners.runner import create_runner

    r = options.view_as(StandardOptions).runner
    if r is None or not isinstance(r, str):
        return
    try:
        create_runner(r)
    except (ValueError, ImportError, AttributeError) as exc:
        known = ", ".join(StandardOptions.KNOWN_RUNNER_NAMES)
        why = f" ({exc})" if isinstance(exc, ImportError) else ""
        raise UsageError(f"--runner: unknown runner {r!r}{why}; known: {known}") from None


def parse(argv: Sequence[str] | None) -> tuple[NormalizeConfig, PipelineOptions]:
    """The config and the options Beam gets: Beam's own options only (no storage options, none of
    the job's). An argument that is neither the job's nor Beam's is a ``UsageError``."""
    rest, secret = split_secrets(list(argv or []))
    rest, audit_against, audit_tolerance = split_audit(rest)
    parser = own_parser()
    o, beam_args = parser.parse_known_args(rest)
    options = beam_options(
        beam_args, parser, prog="bunzai normalize", positional="inputs are given with --input URL"
    )
    storage_options = parse_storage_options(secret)
    if is_remote(options):
        check_remote(o, options)
        literal = literal_secrets(storage_options)
        if literal:
            raise UsageError(
                f"--storage-options: {', '.join(literal)} on Dataflow must be a "
                "gcp-secret:projects/P/secrets/NAME/versions/V reference (a literal value would travel "
                "inside the job graph); see deploy/README.md"
            )
    if o.max_file_bytes is None or not (0 < o.max_file_bytes <= MAX_INPUT_BYTES):
        raise UsageError(f"--max-file-bytes must be between 1 and {MAX_INPUT_BYTES}")
    if o.shard_bytes is None or o.shard_bytes <= 0:
        raise UsageError("--shard-bytes must be positive")
    if o.fidelity not in FIDELITY_MODES:  # argparse checks the choices; a direct caller may not
        raise UsageError(f"--fidelity must be one of {', '.join(FIDELITY_MODES)}")
    try:
        fidelity_sample = sample_of(str(o.fidelity_sample))
    except ValueError as exc:
        raise UsageError(f"--fidelity-sample: {exc}") from None
    if "::" in (o.output or ""):
        raise UsageError("--output must be a folder URL, not a chain")
    output = (o.output or DEFAULT_OUTPUT).rstrip("/") or "/"
    audit_against = check_audit_against(audit_against, output, o.fidelity, audit_tolerance)
    bigquery_table = check_bigquery(o.bigquery_table, options)
    cfg = NormalizeConfig(
        inputs=tuple(o.inputs) if o.inputs else default_inputs(),
        output=output,
        export=export_formats(o.export or ""),
        storage=Storage(storage_options),
        max_file_bytes=o.max_file_bytes,
        since=o.since,
        shard_bytes=o.shard_bytes,
        fidelity=o.fidelity,
        fidelity_sample=fidelity_sample,
        audit_against=audit_against,
        audit_tolerance=audit_tolerance,
        allow_empty=bool(o.allow_empty),
        bigquery_table=bigquery_table,
        quiet=bool(o.quiet),
        debug=bool(o.debug),
    )
    if (o.export or "").strip() != "all":  # `all` names no id: nothing to note
        cfg = replace(cfg, notes=moved_notes(cfg.export))
    return cfg, options


def _same_place(url: str) -> str:
    """A URL compared as a place: a local path made absolute, trailing slashes dropped."""
    url = url.rstrip("/") or "/"
    if "::" in url or not is_local_url(url):
        return url
    return os.path.abspath(url.removeprefix("file://") or "/")


def check_audit_against(
    previous: str | None, output: str, fidelity: str, tolerance: float | None
) -> str | None:
    """``--audit-against``: needs this run's fidelity rows, and a previous run that this run does
    not overwrite (the audit reads it after the run is written)."""
    if tolerance is not None and (previous is None or not 0 <= tolerance <= 100):
        raise UsageError("--audit-tolerance takes percentage points (0 to 100) and needs --audit-against")
    if previous is None:
        return None
    if not previous.strip():
        raise UsageError("--audit-against needs the previous run's output folder")
    if fidelity == "off":
        raise UsageError("--audit-against compares fidelity rows: it cannot run with --fidelity off")
    prev, out = _same_place(previous), _same_place(output)
    if prev == out or prev.startswith(out.rstrip("/") + "/"):
        raise UsageError(
            f"--audit-against {previous} is inside --output {output}: this run replaces it; give the "
            "previous run's own folder"
        )
    return previous


def check_bigquery(table: str | None, options: PipelineOptions) -> str | None:
    """``--bigquery-table``: ``PROJECT:DATASET.TABLE``; Beam's file loads stage their files under a
    gs:// ``--temp_location`` and need the gcp extra."""
    if table is None or not table.strip():  # a template's empty parameter: no load
        return None
    from pipeline.dataset.index.bigquery import check_bigquery_table

    try:
        check_bigquery_table(table)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    temp = options.view_as(GoogleCloudOptions).temp_location or ""
    if not is_remote(options) and not temp.startswith("gs://"):  # Dataflow always has one
        raise UsageError(
            "--bigquery-table needs a gs:// --temp_location (BigQuery loads its files from there)"
        )
    try:
        import apache_beam.io.gcp.bigquery  # noqa: F401
    except ImportError:
        raise UsageError("--bigquery-table needs apache-beam[gcp]: pip install 'bunzai[gcp]'") from None
    return table


def runner_name(options: PipelineOptions) -> str:
    r = options.view_as(StandardOptions).runner
    if r is None:
        return "DirectRunner"
    return r if isinstance(r, str) else type(r).__name__


def submits_only(options: PipelineOptions) -> bool:
    """Whether ``run()`` only submits (or, dry or as a template, translates) the job: Beam on
    Dataflow with ``--dry_run``, ``--template_location`` or ``--dataflow_job_file``, or inside a
    Flex Template launcher, which must return once the job is handed over."""
    if not is_remote(options):
        return False
    return bool(
        options.view_as(TestOptions).dry_run
        or options.view_as(GoogleCloudOptions).template_location
        or options.view_as(DebugOptions).dataflow_job_file
        or os.environ.get("FLEX_TEMPLATE_PYTHON_PY_FILE")
    )


#: what each exit code means for ``bunzai normalize`` (the job's ``--help``)
EXIT_CODES = (
    describe(
        (
            Exit.OK,
            Exit.REGRESSION,
            Exit.USAGE,
            Exit.INPUT,
            Exit.FAILED,
            Exit.UNBALANCED,
            Exit.INTERRUPTED,
            Exit.TERMINATED,
        ),
        {
            Exit.OK: "rejects are results",
            Exit.REGRESSION: "--audit-against; the run is committed",
            Exit.INPUT: "an input does not exist, matches no file or cannot be listed; nothing written",
            Exit.FAILED: "the output cannot be written, a store error, a worker crash; nothing committed",
            Exit.UNBALANCED: "a bug; nothing committed",
        },
    )
    + " The output folder changes only when a run is complete and balanced."
)


def help_text() -> str:
    parser = argparse.ArgumentParser(
        prog="bunzai normalize",
        description="Normalize every roleplay file under the inputs into canonical JSONL, exports, "
        "fidelity rows, rejects and a manifest (an Apache Beam pipeline; any Beam option is accepted, "
        "e.g. --runner, --direct_running_mode=multi_processing --direct_num_workers=4).",
        epilog=EXIT_CODES,
    )
    NormalizeOptions._add_argparse_args(parser)
    _add_audit_args(parser.add_argument_group("after the run (this process, not the pipeline)"))
    _add_local_args(parser)
    return parser.format_help()


__all__ = [
    "DEFAULT_FIDELITY",
    "FIDELITY_MODES",
    "NormalizeConfig",
    "NormalizeOptions",
    "export_formats",
    "help_text",
    "is_remote",
    "parse",
    "runner_name",
    "split_audit",
    "submits_only",
]
