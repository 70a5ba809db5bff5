# FaithBench Calibration — everything a fresh machine with Python 3.11, pip and make needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check
# One stamp per lock content: a changed lock reinstalls, an unchanged one costs nothing.
STAMP      := $(VENV)/.installed-dev-$(shell cksum requirements-dev.lock | cut -d' ' -f1)
PROD_STAMP := $(VENV)/.installed-prod-$(shell cksum requirements.lock | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install install-theobert test-theobert install-prod run demo test test-tools browser lint typecheck check lock bench load serve serve-prepare clean messages backup

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

## make install: the development environment (tests, linters) from requirements-dev.lock, every file checked
## against its hash
$(STAMP): requirements-dev.lock | $(BIN)/python
	$(PIP) install --quiet --require-hashes -r requirements-dev.lock
	rm -f $(VENV)/.installed-dev-* $(VENV)/.installed-prod-*
	touch $(STAMP)

install: $(STAMP)

## make install-theobert: the optional TheoBERT extra (transformers, torch on the CPU) for `theobert_score --model`:
## requirements-theobert.lock with hashes, then torch alone (--no-deps; its dependencies are in that lock).
## TORCH_SPEC picks the build: torch==2.13.0 is a CPU wheel on this project's machines; elsewhere use
## `make install-theobert TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"` (PyPI's is CUDA, GBs).
TORCH_SPEC     ?= torch==2.13.0
TORCH_PIP_ARGS ?=
THEOBERT_STAMP := $(VENV)/.installed-theobert-$(shell cksum requirements-theobert.lock | cut -d' ' -f1)
$(THEOBERT_STAMP): requirements-theobert.lock $(STAMP)
	$(PIP) install --quiet --require-hashes -r requirements-theobert.lock
	$(PIP) install --quiet --no-deps $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(BIN)/python -c "import torch, transformers" || { echo "the TheoBERT extra did not import"; exit 1; }
	touch $(THEOBERT_STAMP)

install-theobert: $(THEOBERT_STAMP)

## The same extra for the tests, in a directory of its own: `make test` installs it into .theobert/ (pip --target),
## never into .venv, and the fill-mask tests (tests/evaluations/test_theobert_fillmask.py) append that directory to
## their sys.path. So `make test` never writes into the environment a running `make run` serves from (installing
## the extra there upgraded .venv's setuptools, whose _distutils_hack every process imports at start-up: the dev
## server saw a changed file, reloaded and dropped requests). Shared packages resolve from .venv first (same pins).
THEOBERT_TEST_DIR   := .theobert
THEOBERT_TEST_STAMP := $(THEOBERT_TEST_DIR)/.installed-$(shell cksum requirements-theobert.lock | cut -d' ' -f1)
$(THEOBERT_TEST_STAMP): requirements-theobert.lock | $(BIN)/python
	rm -rf $(THEOBERT_TEST_DIR)
	$(PIP) install --quiet --require-hashes --no-deps --target $(THEOBERT_TEST_DIR) -r requirements-theobert.lock
	$(PIP) install --quiet --no-deps --target $(THEOBERT_TEST_DIR) $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	touch $(THEOBERT_TEST_STAMP)

test-theobert: $(THEOBERT_TEST_STAMP)

## make install-prod: only what the server needs (requirements.lock, hashes required), e.g. in a deploy image
$(PROD_STAMP): requirements.lock | $(BIN)/python
	$(PIP) install --quiet --require-hashes -r requirements.lock
	touch $(PROD_STAMP)

install-prod: $(PROD_STAMP)

## make run: install, migrate SQLite, load the demo data, print the demo logins, then the whole product on
## http://127.0.0.1:8000 — the development web server and the task worker together (`manage.py run_local`:
## Ctrl-C stops both; a worker that stops is restarted and the console says so)
## The links the demo prints and mails name the address served (HOST, PORT), unless DJANGO_SITE_URL says otherwise.
DEMO_SITE_URL = $${DJANGO_SITE_URL:-http://$(HOST):$(PORT)}
run: demo
	DJANGO_SITE_URL=$(DEMO_SITE_URL) $(BIN)/python manage.py run_local $(HOST):$(PORT)

demo: install
	$(BIN)/python manage.py migrate --noinput
	DJANGO_SITE_URL=$(DEMO_SITE_URL) $(BIN)/python manage.py load_demo

## make test: install, provision the test tools (a browser for the browser tests, poppler's pdftotext, nginx), then
## the TheoBERT extra into .theobert/ (the fill-mask tests run a tiny BERT; see test-theobert above: not into .venv),
## then run the whole test suite in parallel over the machine's cores (SQLite unless DATABASE_URL is set)
PYTEST_ARGS ?=
test: install test-theobert test-tools
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

test-tools: install browser
	@command -v pdftotext >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's poppler-utils (pdftotext) for the tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; \
	  else echo "make test needs pdftotext: install poppler-utils (apt-get install -y poppler-utils)"; exit 1; fi; }
	@command -v msgfmt >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing GNU gettext (xgettext, msgfmt) for the catalogue tests (tests/i18n)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; \
	  else echo "make test needs GNU gettext: install it (apt-get install -y gettext)"; exit 1; fi; }
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's nginx for the download tests (tests/deploy/test_nginx_downloads.py)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; \
	  else echo "make test needs nginx: install it (apt-get install -y nginx)"; exit 1; fi; }

## The browser tests (pytest-playwright) drive, in this order of preference: the system's Chromium
## ($$E2E_CHROMIUM, or chromium / chromium-browser on PATH); Debian's, installed when we are root with apt-get;
## Playwright's own download (`playwright install chromium`, needs its CDN). Else one line says what to install.
browser: install
	@if [ -n "$$E2E_CHROMIUM" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  exit 0; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	elif $(BIN)/playwright install chromium >/dev/null 2>&1; then \
	  echo "using Playwright's own Chromium (playwright install chromium)"; \
	else \
	  echo "make test needs a Chromium for the browser tests: install chromium (apt-get install -y chromium) or run .venv/bin/playwright install --with-deps chromium"; \
	  exit 1; \
	fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy stats access accounts evaluations annotations calibration delphi casereview evidence audit config

check: install
	$(BIN)/python manage.py makemigrations --check --dry-run

## make lock: re-resolve both locks from pyproject.toml, with hashes, against PyPI alone (the machine's pip
## configuration — local indexes, wheel directories — is ignored, so the locks hold on any machine):
## requirements.lock = [project] dependencies (production); requirements-dev.lock = those plus the dev extra,
## constrained to the same versions.
LOCK_ENV := PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_EXTRA_INDEX_URL= PIP_INDEX_URL=https://pypi.org/simple
LOCK_OPTS := --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links --no-emit-trusted-host
lock: | $(BIN)/python
	$(PIP) install --quiet pip-tools
	$(LOCK_ENV) $(BIN)/pip-compile $(LOCK_OPTS) --output-file requirements.lock pyproject.toml
	$(LOCK_ENV) $(BIN)/pip-compile $(LOCK_OPTS) --extra dev --constraint requirements.lock --output-file requirements-dev.lock pyproject.toml
	$(LOCK_ENV) $(BIN)/pip-compile $(LOCK_OPTS) --output-file requirements-theobert.lock requirements-theobert.in

## make bench: the benchmarks (coverage.py in its quick mode: 4 designs); report_load.py needs PostgreSQL (BENCH_DATABASE_URL, a server where throwaway
## databases can be created) and serves through gunicorn behind nginx when nginx is installed (it says so when not)
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
bench: install
	$(BIN)/python benchmarks/import_responses.py
	$(BIN)/python benchmarks/irr_report.py
	$(BIN)/python benchmarks/alpha_memory.py
	$(BIN)/python benchmarks/irt_fit.py
	$(BIN)/python benchmarks/study_report.py
	$(BIN)/python benchmarks/study_upload.py   # 1,000,000 rows through the upload page and the worker
	$(BIN)/python benchmarks/coverage.py    # quick; benchmarks/coverage.py --full for the whole table
	$(BIN)/python benchmarks/judge_throughput.py
	$(BIN)/python benchmarks/pages.py
	$(BIN)/python benchmarks/report_snapshot.py
	$(BIN)/python benchmarks/rater_effects.py --quick
	$(BIN)/python benchmarks/calibrated_snapshot.py
	$(BIN)/python benchmarks/calibrated_leaderboard.py --quick   # --full figures: benchmarks/README.md
	$(BIN)/python benchmarks/api_tokens.py
	$(BIN)/python benchmarks/variance_budget.py --quick   # 2,000 repetitions: without --quick
	$(BIN)/python benchmarks/report_load.py --database-url $(BENCH_DATABASE_URL)
	$(BIN)/python benchmarks/load.py --database-url $(BENCH_DATABASE_URL) --seconds 15

## make serve: the production processes on this machine, against PostgreSQL (docs/deployment.md):
## migrate, create the cache table, collect static files, then the task worker and gunicorn side by side, supervised
## (`manage.py run_production`: a worker that stops is restarted; docs/deployment.md, "The task worker through database outages").
## Needs DATABASE_URL, DJANGO_SECRET_KEY and DJANGO_ALLOWED_HOSTS; compose.yaml runs the same two commands.
SERVE_SETTINGS ?= config.settings.prod
SERVE_WEB      := gunicorn -c config/gunicorn.conf.py config.wsgi
SERVE_WORKER   := python manage.py run_worker --no-reload
serve-prepare: install
	@test -n "$$DATABASE_URL" || { echo "make serve needs DATABASE_URL=postgres://user@host:5432/name"; exit 1; }
	DJANGO_SETTINGS_MODULE=$(SERVE_SETTINGS) $(BIN)/python manage.py migrate --noinput
	DJANGO_SETTINGS_MODULE=$(SERVE_SETTINGS) $(BIN)/python manage.py createcachetable
	DJANGO_SETTINGS_MODULE=$(SERVE_SETTINGS) $(BIN)/python manage.py collectstatic --noinput --verbosity 0

serve: serve-prepare
	export DJANGO_SETTINGS_MODULE=$(SERVE_SETTINGS) PATH="$(CURDIR)/$(BIN):$$PATH"; \
	exec python manage.py run_production --web "$(SERVE_WEB)" --worker "$(SERVE_WORKER)"

## make backup: the database and every stored snapshot file, with a manifest of SHA-256 hashes and row counts, into
## backups/faithbench-<UTC time>/ (BACKUP_DIR to choose); `manage.py restore DIR` checks and restores one
## (docs/deployment.md, "Backup and the restore drill")
BACKUP_DIR ?=
backup: install
	$(BIN)/python manage.py backup $(BACKUP_DIR)

## make load: benchmarks/load.py — experts against `make serve`'s processes on a throwaway PostgreSQL database
## (closed loop, 50 experts with think time, a database outage); LOAD_ARGS to change the defaults
LOAD_ARGS ?=
load: install
	$(BIN)/python benchmarks/load.py --database-url $(BENCH_DATABASE_URL) $(LOAD_ARGS)

clean:
	rm -rf $(VENV) $(THEOBERT_TEST_DIR) db.sqlite3 staticfiles .pytest_cache

## make messages: extract the interface's strings into the es/de/ko catalogues (needs GNU gettext's xgettext: `make
## test-tools` installs it), then compile them (no gettext needed for that, nor to serve: the .mo files are committed).
## Then translate the new empty entries following docs/glossary.csv (docs/languages.md).
MESSAGES_IGNORE := -i tests -i benchmarks -i staticfiles -i static -i examples -i fixtures -i docs -i build
messages: install test-tools
	$(BIN)/python manage.py makemessages -l es -l de -l ko --no-obsolete $(MESSAGES_IGNORE)
	$(BIN)/python manage.py compile_catalogues
