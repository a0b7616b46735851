# The two commands a new user needs: `make run` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format schema docs clean reliability bench bench-full

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/bunzai normalize

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

schema: $(STAMP)
	$(BIN)/bunzai schema docs/schema
	$(BIN)/bunzai formats --markdown > docs/FORMAT-SUPPORT.md

clean:
	rm -rf $(VENV) build dist *.egg-info out

BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	@touch $(BENCH_STAMP)

# quick figures (1k-file corpus, under 3 minutes); bench-full: 1k/10k/100k, memory and scaling
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench --quick

bench-full: $(BENCH_STAMP)
	$(BIN)/python -m bench --full --report BENCHMARKS.md

reliability: $(STAMP)
	$(BIN)/python -m tests.hostile.report
