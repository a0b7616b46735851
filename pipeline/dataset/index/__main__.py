"""``python -m pipeline.dataset.index DOCS_DIR``: write the index's published schema and column table."""

import sys

from pipeline.dataset.index.docs import main

raise SystemExit(main(sys.argv[1:]))
