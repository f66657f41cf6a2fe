# Bingo hall: developer and CI entry points.
#
#   make venv       create .venv (Python 3.11) and install requirements-dev.txt
#   make demo       migrate, seed, start worker + beat and serve on $PORT (embedded unless REDIS_URL is set);
#                   the caller's voice is made in the background
#   make demo-network  a central ($PORT) and two venues (the next two ports), embedded, linked, playing network
#                   games by themselves
#   make test       ruff, ruff format --check, import-linter, mypy, pytest against PostgreSQL + Redis, then on
#                   SQLite (embedded)
#   make test-sqlite  only the second run: the embedded hall (SQLite, in-memory broker and layer)
#   make browser    install Debian's chromium (+ fonts) for the Playwright tests, and gettext
#   make voice      install espeak-ng (Debian) and generate the caller's voice clips into var/voice
#   make multihost  install PostgreSQL 15, pgBackRest and redis-server (Debian) for the multi-host test
#   make bench      every benchmark under bench/ at a reduced size (a few minutes; PostgreSQL + Redis)
#   make messages   collect the marked texts into locale/{es,en} and compile them (needs gettext)
#   make lint | typecheck | fmt | worker | beat | broadcaster | serve | services | check-services | clean

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

VENV    := .venv
BIN     := $(VENV)/bin
PY      := $(BIN)/python
STAMP   := $(VENV)/.installed
REQS    := $(wildcard requirements*.txt) deploy/requirements-prod.txt

PORT    ?= 8000
export PORT

# The test run talks to real services; these are the defaults unless the caller set them.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/hall
TEST_REDIS_URL    ?= redis://127.0.0.1:6379/0

.PHONY: help venv demo demo-network test test-sqlite bench browser voice multihost lint typecheck fmt messages worker beat broadcaster serve services check-services clean

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

# --- environment ----------------------------------------------------------------------------------------

venv: $(STAMP)

# The interpreter: python3.11 if present, else python3 when that is 3.11; anything else is an error.
$(PY):
	@py=""; \
	for cand in python3.11 python3; do \
	  if command -v "$$cand" >/dev/null 2>&1 && \
	     "$$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then \
	    py="$$cand"; break; \
	  fi; \
	done; \
	if [[ -z "$$py" ]]; then echo "error: Python 3.11 not found (tried python3.11, python3)" >&2; exit 1; fi; \
	echo ">> creating $(VENV) with $$(command -v $$py) ($$($$py --version))"; \
	"$$py" -m venv $(VENV)

# Re-install only when a requirements file is newer than the last successful install.
$(STAMP): $(REQS) | $(PY)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements-dev.txt
	@touch $@

# --- running the hall -----------------------------------------------------------------------------------

# The demo serves at once: it makes the caller's voice in the background (demo/voice.py, `make voice`'s script),
# the screens playing the clips made so far; without espeak-ng (not root, no package) it plays silently.
demo: venv
	$(PY) manage.py demo

demo-network: venv
	$(PY) manage.py demo_network

# Run two of each for a hall with no single worker or beat (issue 30): each worker its node name, e.g.
# `make worker NODE=w2`; on Redis the beats elect one leader (celery-redbeat, config.beat).
NODE ?= worker
worker: venv
	$(BIN)/celery -A config worker -Q draws,celery -l info -n $(NODE)@%h

beat: venv
	$(BIN)/celery -A config beat -l info

# The machines' progressive broadcast, in a loop of its own (exactly one per hall is enough).
broadcaster: venv
	$(PY) manage.py broadcast_progressives

serve: venv
	$(BIN)/uvicorn config.asgi:application --host 0.0.0.0 --port $(PORT) --ws-per-message-deflate false

# --- quality gates --------------------------------------------------------------------------------------

# import-linter holds the layering of DESIGN §2–3 (contracts in pyproject.toml [tool.importlinter]).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: venv
	$(BIN)/mypy .

# The es/en catalogues: every marked text (English msgid) collected, then compiled to the committed .mo files.
messages: venv
	$(BIN)/python manage.py makemessages -l es -l en --no-location --no-obsolete \
		--ignore ".venv/*" --ignore "tests/*" --ignore "bench/*" --ignore "var/*" --ignore "deploy/*"
	$(BIN)/python manage.py makemessages -d djangojs -l es -l en --no-location --no-obsolete \
		--ignore ".venv/*" --ignore "tests/*" --ignore "bench/*" --ignore "var/*" --ignore "deploy/*" \
		--ignore "staticfiles/*"
	$(BIN)/python manage.py compilemessages -l es -l en --ignore ".venv/*"

# Start PostgreSQL / Redis if installed but stopped (needs root), then wait for them.
services:
	bash scripts/start_services.sh

check-services: venv
	export DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	       REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" && \
	$(PY) scripts/check_services.py

# Both pytest runs go on TEST_WORKERS processes (pytest-xdist; 1: one process, as before), a test file per
# worker at a time: 3 on 2 cores, as the e2e tests wait on the processes they start (measured on a fresh clone:
# PostgreSQL 36 -> 24.5 min, SQLite 16 -> 7 min from 2 workers to 3). Worker gwN has a test database of its own
# (pytest-django's _gwN suffix), Redis database (REDIS_URL's) + N and files of its own (config/test_workers.py):
# the PostgreSQL run uses Redis databases REDIS_URL's to REDIS_URL's + TEST_WORKERS - 1.
TEST_WORKERS ?= 3
XDIST = $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# Unreachable PostgreSQL or Redis fails the run: nothing is skipped.
test: venv browser voice multihost
	$(MAKE) lint
	$(BIN)/mypy .
	export DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	       REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" && \
	$(PY) scripts/check_services.py && \
	$(BIN)/pytest $(XDIST)
	$(MAKE) test-sqlite

# The embedded hall's run: tests/sqlite and the demo's code paths (tests/conftest.py SQLITE_SUITE) on
# SQLite, with the settings of `make demo` (no DATABASE_URL / REDIS_URL), including the self-playing demo.
test-sqlite: venv
	env -u DATABASE_URL -u REDIS_URL HALL_TEST_DB=sqlite $(BIN)/pytest $(XDIST)

browser:
	bash scripts/ensure_chromium.sh

voice: venv
	PY=$(PY) bash scripts/ensure_voice.sh

# The multi-host test's private servers (tests/e2e/test_multihost.py, bench/multihost.py).
multihost:
	bash scripts/ensure_multihost.sh

# --- benchmarks -----------------------------------------------------------------------------------------
# Each script prints the product's figures beside a plain baseline it runs itself, and ends with one
# summary line; --quick is the reduced size. Each uses a database of its own (created, and dropped first
# with --fresh) on BENCH_PG and Redis database BENCH_REDIS_DB. Full sizes: see README and the scripts.
BENCH_PG       ?= postgres://postgres@127.0.0.1:5432
BENCH_REDIS    ?= redis://127.0.0.1:6379
BENCH_REDIS_DB ?= 9

bench: venv
	$(PY) bench/detection.py --quick
	$(PY) bench/electronic_detection.py --quick
	DATABASE_URL=$(BENCH_PG)/hall_bench_cards $(PY) bench/card_generation.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_contrib $(PY) bench/contributions.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_tables $(PY) bench/table_bets.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_draw REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/draw_step.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_edraw REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/electronic_draw_step.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_console REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/console.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_screens REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/screens.py --quick
	DATABASE_URL=$(BENCH_PG)/hall_bench_machines REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/machines.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_cashier REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/cashier_ledger.py --quick --fresh
	$(PY) bench/cashier_ledger.py --quick --sqlite
	DATABASE_URL=$(BENCH_PG)/hall_bench_terminals REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/terminal_fanout.py --quick
	DATABASE_URL=$(BENCH_PG)/hall_bench_termsim REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/terminal_simulator.py --quick --fresh
	DATABASE_URL=$(BENCH_PG)/hall_bench_network REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/network.py --quick --fresh
	REDIS_URL=$(BENCH_REDIS)/$(BENCH_REDIS_DB) \
	    $(PY) bench/door_opening.py --quick --database $(BENCH_PG)/hall_bench_door_opening

# --- housekeeping ---------------------------------------------------------------------------------------

clean:
	rm -rf $(VENV) var/ .mypy_cache .ruff_cache .pytest_cache .hypothesis .import_linter_cache
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
