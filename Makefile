# The two commands a new user needs: `make run` and `make test`. Both create .venv when missing.
# `make check` is the developer's quick loop: lint and every test not marked slow.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: mutate run test check lint format schema docs clean reliability fidelity audit baseline report-screenshot fuzz deploy-lock \
	bench bench-full goldens

# The fidelity audit runs over samples/ plus the shared corpus when it is present.
CORPUS ?= $(or $(BUNZAI_CORPUS),$(wildcard ../shared/corpus))
FIDELITY_INPUTS := samples $(if $(CORPUS),corpus=$(CORPUS)) --exclude '*.md' --exclude EXPECT.tsv
BASELINE := audit/baseline.tsv

# The venv is installed by uv (a build tool from PyPI, never imported by bunzai): from an empty cache
# it resolves and installs the same versions as pip, in 33 s of wall and 19 s of CPU where pip took
# 234 s and 111 s (load 5-8; docs/perf-notes/2026-12-02-fresh-clone-venv.md). Where uv cannot be installed or fails,
# pip does it as before. Neither byte-compiles the whole of site-packages: the tests compile what
# they import, once (the bytecode cache stays on for them, below).
UV_SPEC := uv~=0.13.0
EXTRAS := .[test,gcp]
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@if $(BIN)/python -m pip install -q '$(UV_SPEC)' && $(BIN)/uv pip install -q --python $(BIN)/python -e '$(EXTRAS)'; then :; else \
		echo "uv did not install the venv: pip does it" >&2; \
		$(BIN)/python -m pip install -q -U pip && $(BIN)/python -m pip install -q --no-compile -e '$(EXTRAS)'; \
	fi
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/bunzai normalize

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# pytest-xdist: one worker per core; loadgroup hands tests out one at a time (slow ones first, see
# tests/conftest.py) and keeps an xdist_group's tests on one worker. PYTEST_ARGS="-n0" runs serially.
PYTEST_ARGS ?= -n auto --dist loadgroup

# Every test process (each xdist worker, each CLI subprocess) compiles the project and pytest
# rewrites the tests' asserts: with bytecode caching off (PYTHONDONTWRITEBYTECODE, set in some
# containers) that is ~10 s of CPU per worker each time. Every target keeps it on (__pycache__/ is
# ignored): the venv is installed without compiling site-packages, so the first run of each module
# compiles it once and later runs read the cache.
export PYTHONDONTWRITEBYTECODE :=

test: $(STAMP) lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory audit

# lint + every test not marked slow (no pipeline runs, no package build): a couple of minutes
check: $(STAMP) lint
	$(BIN)/python -m pytest $(PYTEST_ARGS) -m "not slow"

# round-trip fidelity report over the samples (+ corpus): out/audit/report.html. Its own folder:
# out/fidelity/ is `make run`'s, listed with its sha256 in out/manifest.json
AUDIT_DIR := out/audit
fidelity: $(STAMP)
	$(BIN)/bunzai fidelity $(FIDELITY_INPUTS) -o $(AUDIT_DIR)

# fails when a codec change loses data the committed baseline says was kept
audit: fidelity
	$(BIN)/bunzai audit --report $(AUDIT_DIR)/report.json --baseline $(BASELINE)

# records the current run as the baseline (review the diff; run it with the corpus present)
baseline: fidelity
	$(BIN)/bunzai audit --report $(AUDIT_DIR)/report.json --baseline $(BASELINE) --write-baseline

# the README's picture of a report, made by bunzai over samples/ in headless Chromium (apt-get install
# chromium), with the digest of the report code it shows (a test fails when that code is newer)
report-screenshot: $(STAMP)
	$(BIN)/bunzai fidelity samples -o out/fidelity-samples
	$(BIN)/python -m jobs.screenshot out/fidelity-samples/report.html docs/img/fidelity-report.png --width 1280 --height 1000 \
		--code-digest docs/img/fidelity-report.code.sha256

# the byte-identity guard (tests/pipeline/goldens/): the outputs of a fixed normalize run over samples/
# as golden text (tests/pipeline/goldens.py says what each holds). Rewrite them only when a change means
# to alter outputs (a canonical line, a codec fix) and explain their diff: speed work leaves them as they are
goldens: $(STAMP)
	$(BIN)/python -m tests.pipeline.goldens --update

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

schema: $(STAMP)
	$(BIN)/bunzai schema docs/schema
	$(BIN)/bunzai formats --markdown > docs/FORMAT-SUPPORT.md
	$(BIN)/bunzai schema --markdown > docs/canonical-model.md
	$(BIN)/python -m pipeline.dataset.index docs

clean:
	rm -rf $(VENV) build dist *.egg-info out

# `make fuzz FUZZ_TIME=600 FUZZ_TARGETS="png zip"`: each harness in tests/fuzz/ for FUZZ_TIME seconds;
# a crasher lands in tests/fuzz/corpus/<target>/crash-* (commit it: pytest replays it from then on)
FUZZ_TIME ?= 60
FUZZ_TARGETS ?= png zip rpack risup exif json
fuzz: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[fuzz]'
	@for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t ($(FUZZ_TIME) s)"; \
		before=$$(ls tests/fuzz/corpus/$$t | grep -c '^crash-' || true); \
		$(BIN)/python tests/fuzz/fuzz_$$t.py -max_total_time=$(FUZZ_TIME) -print_final_stats=1 2>&1 \
			| grep -E "^(Done|stat::number_of_executed_units|==[0-9]+== ERROR|.*Crash:)" || true; \
		after=$$(ls tests/fuzz/corpus/$$t | grep -c '^crash-' || true); \
		if [ "$$after" -gt "$$before" ]; then echo "new crasher(s) in tests/fuzz/corpus/$$t/"; exit 1; fi; \
	done

BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	@touch $(BENCH_STAMP)

# quick figures (codec loop on 1k files, pipeline on 300, under 3 minutes); bench-full: 1k/10k/100k,
# memory and scaling (hours), rewriting the results block of BENCHMARKS.md and, from its raw
# figures, the sizing table of deploy/README.md (bench/sizing.py)
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench --quick

bench-full: $(BENCH_STAMP)
	@mkdir -p .bench
	$(BIN)/python -m bench --full --report BENCHMARKS.md --json .bench/results-full.json
	$(BIN)/python -m bench.sizing --results .bench/results-full.json --write deploy/README.md

reliability: $(STAMP)
	$(BIN)/python -m tests.hostile.report

# mutation testing of the modules that guard data (tests/mutation/targets.py: each with its own
# tests), with mutmut from the test extra: out/mutate/, and the measured part of docs/mutation.md.
# Exits 1 on a survivor that is neither pinned by a test nor explained. Not part of `make test`
# (tens of minutes); `make mutate MUTATE_TARGETS="inflate commit"` runs some.
MUTATE_TARGETS ?=
mutate: $(STAMP)
	$(BIN)/python -m tests.mutation $(MUTATE_TARGETS)

# The Dataflow image's dependencies (deploy/README.md): pyproject's runtime deps with the gcp extra
# and the build backend, resolved for the image (CPython 3.11 on glibc Linux), every file hashed.
# Needs the package index; keeps existing pins unless LOCK_ARGS=--upgrade.
LOCK_ARGS ?=
deploy-lock: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[deploy]'
	$(BIN)/uv pip compile pyproject.toml deploy/build-requirements.in --extra gcp \
		--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_36 \
		--custom-compile-command 'make deploy-lock' --quiet $(LOCK_ARGS) -o deploy/requirements.txt
