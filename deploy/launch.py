"""The Flex Templates' entry point (FLEX_TEMPLATE_PYTHON_PY_FILE in deploy/Dockerfile): one image,
two templates, both launched through this file.

The launcher runs ``python /template/launch.py --runner=DataflowRunner --name=value ...`` with the
template's parameters. The export template's (deploy/export-metadata.json) name the dataset the
job reads, ``--dataset=URL``, which no normalize parameter is: such a launch runs ``bunzai export``
with the URL as its DATASET_URL. Any other launch runs ``bunzai normalize`` (deploy/metadata.json).
Either pipeline is the installed ``bunzai`` package, exactly what the workers run from the same
image.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: the export template's parameter naming its dataset (export takes it as its one positional)
DATASET = "--dataset="


def job_argv(argv: Sequence[str]) -> tuple[str, list[str]]:
    """``("normalize" | "export", the job's arguments)`` for the launcher's arguments."""
    datasets = [a[len(DATASET) :] for a in argv if a.startswith(DATASET)]
    if not datasets:
        return "normalize", list(argv)
    return "export", [*datasets, *(a for a in argv if not a.startswith(DATASET))]


def main(argv: Sequence[str] | None = None) -> None:
    job, args = job_argv(sys.argv[1:] if argv is None else argv)
    if job == "export":
        from jobs.export import run
    else:
        from jobs.normalize import run
    raise SystemExit(run(args))


if __name__ == "__main__":
    main()
