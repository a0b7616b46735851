# The two commands a new user needs: `make run` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format schema docs clean reliability deploy-lock

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -e '.[test,gcp]'
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

reliability: $(STAMP)
	$(BIN)/python -m tests.hostile.report

# The Dataflow image's dependencies (deploy/README.md): pyproject's runtime deps with the gcp extra
# and the build backend, resolved for the image (CPython 3.11 on glibc Linux), every file hashed.
# Needs the package index; keeps existing pins unless LOCK_ARGS=--upgrade.
LOCK_ARGS ?=
deploy-lock: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[deploy]'
	$(BIN)/uv pip compile pyproject.toml deploy/build-requirements.in --extra gcp \
		--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_36 \
		--custom-compile-command 'make deploy-lock' --quiet $(LOCK_ARGS) -o deploy/requirements.txt
