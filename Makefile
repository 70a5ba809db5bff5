# FaithBench Calibration — everything a fresh machine with Python 3.11, pip and make needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum requirements.lock | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install run demo test test-tools lint typecheck check lock bench clean

$(STAMP): requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

## make run: install, migrate SQLite, load the demo data, print the demo logins, serve http://127.0.0.1:8000
run: demo
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo

## make test: install (and Chromium for the browser tests if missing) and run the whole test suite,
## in parallel over the machine's cores (SQLite unless DATABASE_URL is set)
PYTEST_ARGS ?=
test: install test-tools
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

## The test suite drives Debian's Chromium (browser tests) and reads PDFs back with poppler's pdftotext.
## A test tool's own browser download cannot work here, so both come from Debian when they are missing.
test-tools:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v pdftotext >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's$$missing for the tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing for the tests:$$missing (apt-get install -y$$missing)"; exit 1; fi; \
	fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy stats accounts evaluations annotations calibration config

check: install
	$(BIN)/python manage.py makemigrations --check --dry-run

## make lock: re-resolve requirements.lock from pyproject.toml (needs the network to PyPI)
lock: install
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --extra dev --strip-extras --output-file requirements.lock pyproject.toml

## make bench: the benchmarks; report_load.py needs PostgreSQL (BENCH_DATABASE_URL, a server where throwaway
## databases can be created) and serves through gunicorn
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
bench: install
	$(BIN)/python benchmarks/import_responses.py
	$(BIN)/python benchmarks/irr_report.py
	$(BIN)/python benchmarks/judge_throughput.py
	$(BIN)/python benchmarks/pages.py
	$(BIN)/python benchmarks/report_snapshot.py
	$(BIN)/python benchmarks/report_load.py --database-url $(BENCH_DATABASE_URL)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache
