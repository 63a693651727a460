# Felt developer entry points. `make run` and `make test` are all a new machine needs
# (Debian 12-like, python3 >= 3.11 with venv, gcc). See README.md.

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# A compiled install and a pure one (FELT_PURE_PYTHON=1, see setup.py) have stamps of their
# own, so switching between them reinstalls.
BUILD_KIND := $(if $(filter-out 0,$(FELT_PURE_PYTHON)),pure,compiled)
STAMP  := $(VENV)/.install-$(BUILD_KIND).stamp

# Re-install when the project's metadata or native code changes, including the modules that
# setup.py compiles with mypyc (an edit to them needs a rebuild to take effect); felt.compiled
# lists those and prints their paths when run (-P: without libs/felt/ on sys.path).
COMPILED_SOURCES := $(shell $(PYTHON) -P libs/felt/compiled.py)
ifeq ($(strip $(COMPILED_SOURCES)),)
$(error $(PYTHON) could not list the compiled modules (libs/felt/compiled.py): Felt needs Python >= 3.11)
endif
INSTALL_DEPS := pyproject.toml setup.py $(wildcard libs/felt/core/native/*.c libs/felt/core/native/*.h) \
	libs/felt/compiled.py $(COMPILED_SOURCES)

PYTEST_ARGS ?=
# `make test` runs the suite on this many pytest-xdist workers, a test file per worker at a time
# (--dist loadfile: a file's module-scoped stacks and fixed ports stay on one worker). Most of
# the suite waits on processes, sockets and browsers, so two workers halve it even on two cores.
# Each worker gets a Redis DB of its own (tests/conftest.py); TEST_WORKERS=0 runs in-process.
TEST_WORKERS ?= 2
XDIST_ARGS := $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile,)
# checkov (the security scan of deploy/, tests/unit/test_deploy.py) pins packaging<24, which
# pytest 9 cannot share: it gets a venv of its own inside $(VENV)/, from PyPI.
CHECKOV_VENV  := $(VENV)/checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.install.stamp
# mypy checks these directories (config in pyproject.toml), each once it holds Python code.
MYPY_DIRS := libs/felt libs/felt_dev libs/felt_styles services tests bench examples

.PHONY: help install test unit lint run bench proto proto-check proto-lint proto-publish clean web web-deps

help:
	@echo "make install  - create $(VENV)/ and install felt with its dev dependencies"
	@echo "make test     - run the whole test suite (starts a private Redis if REDIS_URL is unset)"
	@echo "make unit     - run the fast, pure tests only (tests/unit: no Redis, no network)"
	@echo "make lint     - ruff check, ruff format --check, mypy --strict, make proto-lint, make proto-check"
	@echo "make run      - run Felt (every service and the gateway, http://127.0.0.1:8080)"
	@echo "make bench    - run every bench/*.py"
	@echo "make proto    - regenerate protobuf/gRPC code (scripts/gen_protos.sh)"
	@echo "make proto-check - fail if the committed generated code is stale"
	@echo "make proto-lint  - buf lint + buf format + buf breaking (against protos/published.binpb) of protos/ (installs buf)"
	@echo "make web      - build the web client (npm ci + vite build into web/dist/)"
	@echo "make clean    - remove $(VENV)/, build outputs and caches"

install: $(STAMP) $(CHECKOV_STAMP)

$(CHECKOV_STAMP): deploy/checkov-requirements.txt | $(STAMP)
	rm -rf $(CHECKOV_VENV)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --disable-pip-version-check -q \
		-r deploy/checkov-requirements.txt
	@touch $@

define ENSURE_VENV
if ! $(PY) -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then \
	echo "creating $(VENV)/ with $(PYTHON)"; \
	rm -rf $(VENV); \
	$(PYTHON) -m venv $(VENV); \
fi
endef

$(STAMP): $(INSTALL_DEPS)
	@$(ENSURE_VENV)
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev]'
	@rm -f $(VENV)/.install*.stamp
	@touch $@

# `make run` needs only what running needs: the runtime dependencies and the `run` extra
# (honcho, the embedded servers' binaries), uncompiled, so that a first start never waits for
# the test tools or the mypyc build. A full install (`make install`, compiled) that is current
# is used as it is; a later `make install` adds the dev tools and compiles the hot path.
RUN_STAMP := $(VENV)/.install-run.stamp
DEV_STAMP := $(firstword $(wildcard $(VENV)/.install-compiled.stamp $(VENV)/.install-pure.stamp))

$(RUN_STAMP): $(INSTALL_DEPS)
	@if [ -n "$(DEV_STAMP)" ] && [ -z "$$(find $(INSTALL_DEPS) -newer $(DEV_STAMP))" ]; then \
		echo "make run: using the installed environment ($(notdir $(DEV_STAMP)))"; \
	else \
		$(ENSURE_VENV); \
		echo "make run: installing the runtime into $(VENV)/ (uncompiled; 'make install' compiles)"; \
		extras=run; \
		$(PYTHON) -P libs/felt_dev/devserver.py --have-binaries || extras=run,servers; \
		$(PY) -m pip install --disable-pip-version-check -q --no-compile 'setuptools>=69' wheel; \
		FELT_PURE_PYTHON=1 $(PY) -m pip install --disable-pip-version-check -q --no-compile \
			--no-build-isolation -e ".[$$extras]"; \
	fi
	@touch $@

test: install web
	@rc=0; $(BIN)/pytest $(XDIST_ARGS) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5): failing" >&2; fi; \
	exit $$rc

unit: install
	$(BIN)/pytest tests/unit -q $(PYTEST_ARGS)

lint: install proto-lint proto-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy $(foreach d,$(MYPY_DIRS),$(if $(shell find $(d) -name '*.py' -print -quit 2>/dev/null),$(d)))

# Redis and PostgreSQL come from REDIS_URL / DATABASE_URL, else felt_dev.devserver starts private
# ones for the lifetime of the command; scripts/run.sh migrates the lobby's database and starts
# the Procfile's processes under honcho; the web client is built first (make web) (Ctrl-C stops them all, then the private servers).
run: $(RUN_STAMP) web
	$(PY) -m felt_dev.devserver --postgres -- bash scripts/run.sh

bench: install
	@mkdir -p bench/out
	@shopt -s nullglob; files=(bench/[!_]*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "no bench/*.py yet"; exit 0; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; $(PY) "$$f"; done

# Generated code (libs/poker) is committed; proto-check regenerates it into a temp dir and
# fails on any difference. buf (npm) is installed into the venv dir, pinned.
BUF_VERSION := 1.75.0
BUF := $(VENV)/buf/node_modules/.bin/buf

proto: install web-deps
	PYTHON=$(PY) bash scripts/gen_protos.sh

proto-check: install web-deps
	PYTHON=$(PY) bash scripts/gen_protos.sh --check

$(BUF):
	npm install --prefix $(VENV)/buf --no-save --no-audit --no-fund @bufbuild/buf@$(BUF_VERSION)

# protos/published.binpb is the protos as published (a buf image, no source info): buf breaking
# fails on any change that breaks a client or a stored event built against it (a field
# removed, renumbered, retyped or renamed). Adding is never breaking, so the image needs no
# update for a new field; `make proto-publish` rebuilds it to protect the new ones too.
proto-lint: $(BUF)
	$(BUF) lint
	$(BUF) format --diff --exit-code
	$(BUF) breaking --against protos/published.binpb

proto-publish: $(BUF)
	$(BUF) build --exclude-source-info -o protos/published.binpb

# The web client (web/, see docs/web.md): npm ci from the lockfile when it changes, then a
# vite build into web/dist/ (the gateway serves it) when a source changes (~3 s).
WEB_DEPS := web/node_modules/.package-lock.json
WEB_SOURCES := web/index.html web/vite.config.ts web/tsconfig.json web/scripts/size.mjs \
	$(shell find web/src web/public -type f 2>/dev/null)

web-deps: $(WEB_DEPS)

$(WEB_DEPS): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

web: web/dist/index.html

web/dist/index.html: $(WEB_DEPS) $(WEB_SOURCES)
	cd web && npx tsc --noEmit -p . && npm run --silent build

clean:
	rm -rf $(VENV) build dist *.egg-info libs/*.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -rf web/node_modules web/dist
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
	find libs -name '*.so' -delete
