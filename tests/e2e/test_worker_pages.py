"""`make run` alone finishes the jobs that wait for the task worker: in real Chromium, against the real processes.

Not pytest-django's live server: its SQLite test database lives in the test process's memory (shared cache), which
no other process can open, so a real `manage.py run_worker` process could never see the queued task. Instead this
module does what a fresh clone's `make run` does, in a temporary directory: `migrate`, `load_demo`, and then
`manage.py run_local` (the Makefile's command: runserver and run_worker side by side, as processes) on a free port
against a file SQLite database, with the development settings — the django-tasks *database* backend, as in
production. An imported rating study gives the study report something to compute. The browser signs in as the demo
admin (password and the TOTP code `manage.py demo_totp` prints), computes a new version of the demo cycle's report
and watches the worker's progress on the page (a percentage strictly between 0 and 100 and a "group i of n" note,
not "queued 0 %" then done), sees that the form offers no second version meanwhile, then computes a study report.
Finally Ctrl-C (SIGINT) stops the web server and the worker.
"""
from __future__ import annotations

import csv
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
DEMO_ADMIN, DEMO_PASSWORD = "admin@faithbench.test", "faithbench-demo"
STUDY = "Worker e2e study"

pytestmark = pytest.mark.e2e


@dataclass
class Product:
    url: str
    env: dict[str, str]
    database: Path
    log: Path
    process: subprocess.Popen[bytes]

    def manage(self, *args: str, timeout: float = 600) -> str:
        done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def row_id(self, sql: str, *params: object) -> int:
        with sqlite3.connect(self.database) as connection:
            (value,) = connection.execute(sql, params).fetchone()
        return int(value)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=3) as response:
            return response.status == 200
    except OSError:  # refused while starting; 503 (HTTPError) while no worker has beaten yet
        return False


def study_csv(path: Path) -> Path:
    """20 items × 3 raters on a 1–5 scale, mostly agreeing: a study with a report worth computing."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["study", "item", "dimension", "rater", "rater_kind", "score"])
        for item in range(1, 21):
            for rater, shift in (("h1", 0), ("h2", item % 2), ("h3", -(item % 3 == 0))):
                writer.writerow([STUDY, f"i{item}", "fluency", rater, "human", min(5, max(1, 1 + item % 5 + shift))])
    return path


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """The local fake OpenAI-compatible endpoint, standing in for the provider the admin configured."""
    from evaluations.judge.fake_server import FakeLLMServer

    with FakeLLMServer() as server:
        yield server.base_url


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory, endpoint: str) -> Iterator[Product]:
    """A fresh clone's `make run`: migrate, load the demo, then web server + task worker (`manage.py run_local`),
    with the judge's endpoint and key configured as an admin would (the fake endpoint)."""
    folder = tmp_path_factory.mktemp("make-run")
    database = folder / "db.sqlite3"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev", "DATABASE_URL": f"sqlite:///{database}",
           "HEALTH_WORKER_BEAT_SECONDS": "1", "PYTHONUNBUFFERED": "1",
           "FAITHBENCH_LLM_BASE_URL": endpoint, "FAITHBENCH_LLM_API_KEY": "sk-e2e-fake"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    log = folder / "run_local.log"
    port = free_port()
    setup = Product(url=f"http://127.0.0.1:{port}", env=env, database=database, log=log,
                    process=None)  # type: ignore[arg-type]
    setup.manage("migrate", "--noinput")
    setup.manage("load_demo")
    setup.manage("import_ratings", str(study_csv(folder / "study.csv")), "--study", STUDY, "--level", "ordinal",
                 "--no-progress")
    with open(log, "wb") as output:
        process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "run_local", f"127.0.0.1:{port}"],
                                   cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    setup.process = process
    try:
        deadline = time.monotonic() + 120
        while not healthy(setup.url):  # the web server answers and a worker has beaten
            assert process.poll() is None, f"run_local stopped: {log.read_text()}"
            assert time.monotonic() < deadline, f"no healthy web server + worker after 120 s: {log.read_text()}"
            time.sleep(0.5)
        yield setup
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="module")
def signed_in(product: Product, browser) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """The demo admin's session (password, then the TOTP code `manage.py demo_totp` prints)."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{product.url}/accounts/login/")
    page.fill("input[name=login]", DEMO_ADMIN)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
    page.fill("input[name=code]", product.manage("demo_totp", DEMO_ADMIN).split()[0])
    page.press("input[name=code]", "Enter")
    page.wait_for_url(lambda url: "/accounts/" not in url)
    state = context.storage_state()
    context.close()
    yield state


def wait_for_progress_between(page, low: int, high: int) -> int:  # type: ignore[no-untyped-def]
    """Until the progress fragment shows a running percentage low ≤ p ≤ high; returns it."""
    handle = page.wait_for_function(
        """([low, high]) => {
             const percent = document.querySelector('[data-testid=snapshot-percent]');
             const status = document.querySelector('[data-testid=snapshot-status]');
             if (!percent || !status || status.dataset.status !== 'running') return false;
             const value = parseInt(percent.textContent, 10);
             return value >= low && value <= high ? value : false;
           }""", arg=[low, high], timeout=120_000, polling=100)
    return int(handle.json_value())


def test_make_run_computes_a_report_version_with_live_progress_and_no_second_queue(  # type: ignore[no-untyped-def]
        product: Product, signed_in: dict, new_context) -> None:
    from playwright.sync_api import expect

    cycle = product.row_id("SELECT id FROM calibration_calibrationcycle ORDER BY id LIMIT 1")
    context = new_context(storage_state=signed_in)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{product.url}/calibration/cycles/{cycle}/report/")
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("Version 1")  # computed by load_demo
    expect(page.locator("[data-testid=worker-notice]")).to_have_count(0)  # make run's worker is alive
    page.locator("summary", has_text="Compute a new version").click()
    # Many resamples, so that computing takes long enough to be watched.
    page.fill("input[name=n_resamples]", "10000")
    page.get_by_role("button", name="Compute version 2").click()

    expect(page.locator("[data-testid=snapshot-progress]")).to_contain_text("Version 2")
    # While version 2 is queued or running, nothing offers version 3.
    expect(page.get_by_role("button", name=re.compile("Compute version"))).to_have_count(0)
    expect(page.locator("[data-testid=compute-pending]")).to_contain_text("once version 2 has finished")
    # Live progress from the worker, polled by the page: somewhere inside the bootstrap, with its note.
    seen = wait_for_progress_between(page, 5, 99)
    assert 5 <= seen <= 99
    expect(page.locator("[data-testid=snapshot-note]")).to_contain_text(re.compile(r"group \d+ of \d+|rendering"))
    expect(page.locator("[data-testid=worker-notice]")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "report-version-progress.png"))

    # Done: the page reloads itself onto the new version, and offers version 3 again.
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("Version 2", timeout=240_000)
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("10000 bootstrap resamples")
    expect(page.locator("button[type=submit]", has_text="Compute version 3")).to_be_attached()  # in <details>
    assert product.row_id("SELECT COUNT(*) FROM calibration_reportsnapshot "
                          "WHERE kind = 'cycle_report' AND cycle_id = ? AND status = 'ready'", cycle) == 2


def test_make_run_computes_a_study_report(product: Product, signed_in: dict, new_context) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    study = product.row_id("SELECT id FROM calibration_study WHERE name = ?", STUDY)
    context = new_context(storage_state=signed_in)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{product.url}/calibration/studies/{study}/report/")
    expect(page.locator("[data-testid=no-snapshot]")).to_be_visible()
    page.get_by_role("button", name="Compute version 1").click()
    expect(page.get_by_role("button", name=re.compile("Compute version"))).to_have_count(0)
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("Version 1", timeout=240_000)
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("3 human raters")
    expect(page.locator("[data-testid=worker-notice]")).to_have_count(0)


def test_make_run_finishes_a_judge_run_started_from_its_page(product: Product, signed_in: dict,  # type: ignore[no-untyped-def]
                                                              new_context) -> None:
    from playwright.sync_api import expect

    context = new_context(storage_state=signed_in)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{product.url}/judge/runs/")
    page.get_by_role("link", name="Start a judge run").click()
    page.get_by_label("Limit").fill("6")
    page.get_by_role("button", name="Show the estimate").click()
    expect(page.locator("[data-testid=judge-run-estimate]")).to_contain_text("6 items")
    page.get_by_role("button", name=re.compile(r"^Start 1 run")).click()
    page.wait_for_url(re.compile(r"/judge/runs/\d+/$"))
    # make run's worker takes it: no "waiting for a worker" notice, and the page polls to the end
    expect(page.locator("[data-testid=worker-notice]")).to_have_count(0)
    expect(page.locator("[data-testid=run-outcome]")).to_contain_text("Finished — 6 of 6 scored", timeout=240_000)
    run = int(page.url.rstrip("/").rsplit("/", 1)[1])
    assert product.row_id("SELECT scored_items FROM evaluations_judgerun WHERE id = ?", run) == 6


def test_ctrl_c_stops_the_web_server_and_the_worker(product: Product) -> None:
    """Last in this module: SIGINT to the process group, as a terminal's Ctrl-C, stops both processes."""
    os.killpg(product.process.pid, signal.SIGINT)
    assert product.process.wait(timeout=60) == 0, product.log.read_text()
    log = product.log.read_text()
    assert "SIGINT: stopping the web server and the task worker" in log and "[run_local] stopped" in log
    assert not healthy(product.url)
