# FaithBench Calibration — everything a fresh machine with Python 3.11, pip and make needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum requirements.lock | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install run demo test lint typecheck check lock bench clean

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

## make test: install and run the whole test suite (SQLite unless DATABASE_URL is set)
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy stats accounts evaluations annotations calibration config

check: install
	$(BIN)/python manage.py makemigrations --check --dry-run

## make lock: re-resolve requirements.lock from pyproject.toml (needs the network to PyPI)
lock: install
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --extra dev --strip-extras --output-file requirements.lock pyproject.toml

bench: install
	$(BIN)/python benchmarks/import_responses.py
	$(BIN)/python benchmarks/irr_report.py
	$(BIN)/python benchmarks/judge_throughput.py
	$(BIN)/python benchmarks/pages.py

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache
