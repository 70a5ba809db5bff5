"""Fault test (issue 25, item 1): PostgreSQL restarts under a running `manage.py run_worker` that is executing a
judge run, with a study report queued behind it. Both finish; every item is judged exactly once (0 lost, 0 results or
calls duplicated); each task record ran once; the worker never exits and its heartbeat is fresh again.

The machine's shared PostgreSQL is never restarted: the test starts a private throwaway cluster (initdb as the
`postgres` user on a free port), copies the migrated test database into it (pg_dump, so no second `migrate`), and
restarts that. It runs in CI's PostgreSQL pass (skipped with the reason on SQLite) and needs root (for `runuser`)
and PostgreSQL's server binaries; it takes about 30 s.
"""
from __future__ import annotations

import csv
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from evaluations.judge.fake_server import FakeLLMServer
from tests.evaluations.judge.conftest import MODELS, benchmark_files

pytestmark = pytest.mark.postgres
ROOT = Path(settings.BASE_DIR)
BINARIES = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
STUDY = "Restart study"
N_ITEMS = 40


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """A private PostgreSQL server in a temporary directory, owned by the `postgres` user."""

    bin: Path
    folder: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(self.bin / "pg_ctl"), "-D", str(self.data),
                        "-l", str(self.folder / "server.log"), "-w", *args], check=True, capture_output=True,
                       timeout=60)

    def start(self) -> None:
        self.pg_ctl("-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def query(self, name: str, sql: str) -> list[tuple]:
        with psycopg.connect(self.url(name), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(sql)  # type: ignore[arg-type]  # literal SQL of this test
            return cursor.fetchall() if cursor.description else []


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not BINARIES or not shutil.which("runuser") or os.geteuid() != 0:
        pytest.skip("needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) and root, to start a private "
                    "cluster that can be restarted without touching the shared one")
    folder = Path(tempfile.mkdtemp(prefix="fb-pg-restart-"))
    shutil.chown(folder, user="postgres")
    folder.chmod(0o700)
    server = Cluster(bin=Path(BINARIES[-1]), folder=folder, port=free_port())
    subprocess.run(["runuser", "-u", "postgres", "--", str(server.bin / "initdb"), "-D", str(server.data),
                    "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"], check=True, capture_output=True,
                   timeout=120)
    server.start()
    try:
        yield server
    finally:
        try:
            server.pg_ctl("-m", "immediate", "stop")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def copy_test_database(server: Cluster, name: str) -> None:
    """The migrated test database (pytest-django's, on the shared server), dumped into the private cluster."""
    from django.db import connection

    source = connection.settings_dict
    server.query("postgres", f"CREATE DATABASE {name}")
    dump = subprocess.Popen([str(server.bin / "pg_dump"), "--no-owner", "--no-privileges", "-h",
                             source["HOST"] or "127.0.0.1", "-p", str(source["PORT"] or 5432), "-U",
                             source["USER"] or "postgres", source["NAME"]],
                            stdout=subprocess.PIPE, env={**os.environ, "PGPASSWORD": source["PASSWORD"] or ""})
    subprocess.run([str(server.bin / "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-d", server.url(name)],
                   stdin=dump.stdout, check=True, capture_output=True, timeout=120)
    assert dump.wait(timeout=60) == 0


def study_csv(path: Path) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["study", "item", "dimension", "rater", "rater_kind", "score"])
        for item in range(1, 16):
            for rater, shift in (("h1", 0), ("h2", item % 2), ("h3", -(item % 3 == 0))):
                writer.writerow([STUDY, f"i{item}", "fluency", rater, "human", min(5, max(1, 1 + item % 5 + shift))])
    return path


QUEUE = f"""
import os
from calibration.models import Study
from calibration.studies.importing import study_import
from calibration.studies.tasks import study_snapshot_start
from evaluations.importing import import_file
from evaluations.selectors import rubric_active
from evaluations.tasks import judge_run_start
cases, responses, ratings, base_url = (os.environ["RESTART_" + k] for k in ("CASES", "RESPONSES", "RATINGS", "URL"))
import_file(path=cases, kind="cases", progress=False)
import_file(path=responses, kind="responses", progress=False)
study_import(path=ratings, study="{STUDY}", level="ordinal")
judge_run_start(rubric=rubric_active(), base_url=base_url, label="restart")
study_snapshot_start(study=Study.objects.get(name="{STUDY}"), requested_by=None, n_resamples=200)
"""


def test_postgres_restarts_under_a_judge_run_and_a_queued_report_and_both_finish(
        cluster: Cluster, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copy_test_database(cluster, "fb")  # `db`: the test database exists (its committed, migrated state is copied)
    cases, responses = benchmark_files(tmp_path, n_cases=N_ITEMS, models=[MODELS[0]], prefix="R")
    ratings = study_csv(tmp_path / "ratings.csv")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": cluster.url("fb"),
           "PYTHONUNBUFFERED": "1", "HEALTH_WORKER_BEAT_SECONDS": "1", "FAITHBENCH_LLM_API_KEY": "test-key",
           "FAITHBENCH_JUDGE_PRIMARY_MODEL": "google/gemini-3-flash-preview", "FAITHBENCH_MAX_IN_FLIGHT": "2",
           "FAITHBENCH_WRITE_BATCH_SIZE": "2", "FAITHBENCH_WRITE_FLUSH_SECONDS": "0.05"}
    log = tmp_path / "worker.log"
    with FakeLLMServer(latency=0.25) as server:
        # One process queues everything (each `manage.py` start costs seconds): the run, then the report behind it.
        files = {"RESTART_CASES": str(cases), "RESTART_RESPONSES": str(responses), "RESTART_RATINGS": str(ratings),
                 "RESTART_URL": server.base_url}
        queued = subprocess.run([sys.executable, "manage.py", "shell", "-c", QUEUE], cwd=ROOT, env={**env, **files},
                                capture_output=True, text=True, timeout=120)
        assert queued.returncode == 0, queued.stderr
        with open(log, "wb") as output:
            worker = subprocess.Popen([sys.executable, "manage.py", "run_worker", "--no-reload", "--no-startup-delay",
                                       "--interval", "0.2"], cwd=ROOT, env=env, stdout=output,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        try:
            def stored() -> int:
                return cluster.query("fb", "SELECT count(*) FROM evaluations_judgeresult")[0][0]

            deadline = time.monotonic() + 60
            while stored() < 6:
                assert worker.poll() is None, f"the worker stopped: {log.read_text()}"
                assert time.monotonic() < deadline, f"the judge run did not start: {log.read_text()}"
                time.sleep(0.1)
            before = stored()
            (waiting,), = cluster.query("fb", "SELECT status FROM calibration_reportsnapshot")
            assert waiting == "queued"  # the report waits behind the run through the outage
            cluster.pg_ctl("-m", "fast", "stop")  # every connection is terminated ("shutting down")
            time.sleep(3)  # an outage, not only a restart: connections are refused meanwhile
            restarted = time.time()
            cluster.start()
            assert before < N_ITEMS, "the run finished before the restart; nothing was tested"

            deadline = time.monotonic() + 60
            while True:
                (run_status,), = cluster.query("fb", "SELECT status FROM evaluations_judgerun")
                (report_status,), = cluster.query("fb", "SELECT status FROM calibration_reportsnapshot")
                if run_status == "finished" and report_status == "ready":
                    break
                assert worker.poll() is None, f"the worker died in the outage: {log.read_text()}"
                assert time.monotonic() < deadline, (
                    f"run {run_status}, report {report_status} 60 s after the restart: {log.read_text()}")
                time.sleep(0.2)

            assert worker.poll() is None, "the worker exited"
            output_text = log.read_text()
            assert "the database is unreachable" in output_text, "the worker never saw the outage"
            (processed, scored, calls), = cluster.query(
                "fb", "SELECT processed_items, scored_items, calls FROM evaluations_judgerun")
            assert processed == scored == N_ITEMS
            per_item = cluster.query("fb", "SELECT response_id, count(*) FROM evaluations_judgeresult "
                                           "GROUP BY response_id")
            assert len(per_item) == N_ITEMS and {n for _, n in per_item} == {1}  # 0 lost, 0 duplicated
            texts = [t for (t,) in cluster.query("fb", "SELECT text FROM evaluations_modelresponse")]
            assert [server.calls_for(t) for t in texts] == [1] * N_ITEMS, "an item was sent twice"
            assert calls == N_ITEMS
            tasks = cluster.query("fb", "SELECT status, jsonb_array_length(worker_ids::jsonb) FROM "
                                        "django_tasks_database_dbtaskresult")
            assert sorted(tasks) == [("SUCCESSFUL", 1), ("SUCCESSFUL", 1)]  # each task claimed and run once
            time.sleep(1.5)  # one more beat
            (beat,), = cluster.query("fb", "SELECT extract(epoch FROM max(beat_at)) FROM config_workerheartbeat")
            assert float(beat) > restarted, "the heartbeat did not resume after the restart"
        finally:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGINT)
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(worker.pid, signal.SIGKILL)
                    worker.wait()
