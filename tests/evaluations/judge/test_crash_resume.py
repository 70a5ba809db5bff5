"""A real crash: SIGKILL the `judge_run --wait` process mid-run, resume it, and count the endpoint's calls."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

from evaluations.judge.fake_server import FakeLLMServer, text_key

from .conftest import MODELS, benchmark_files

ROOT = Path(settings.BASE_DIR)


def manage(env: dict[str, str], *args: str, **kwargs) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True, **kwargs)


def query(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db, timeout=10) as conn:
        return conn.execute(sql).fetchall()


def test_sigkilled_worker_resumes_without_resending_finished_items(tmp_path):
    db = tmp_path / "crash.sqlite3"
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": f"sqlite:///{db}",
        "FAITHBENCH_LLM_API_KEY": "test-key", "FAITHBENCH_MAX_IN_FLIGHT": "4", "FAITHBENCH_WRITE_BATCH_SIZE": "4",
        "FAITHBENCH_WRITE_FLUSH_SECONDS": "0.05", "FAITHBENCH_JUDGE_PRIMARY_MODEL": "google/gemini-3-flash-preview",
    }
    manage(env, "migrate", "--noinput", "-v0")
    cases, responses = benchmark_files(tmp_path, n_cases=60, models=[MODELS[0]], prefix="K")
    manage(env, "import_data", "cases", str(cases), "--no-progress")
    manage(env, "import_data", "responses", str(responses), "--no-progress")
    texts = [text for (text,) in query(db, "SELECT text FROM evaluations_modelresponse")]

    with FakeLLMServer(latency=0.1) as server:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "judge_run", "--wait", "--base-url", server.base_url, "--label", "crash"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if worker.poll() is not None:
                raise AssertionError(f"worker ended before the kill: {worker.communicate()}")
            done = query(db, "SELECT count(*) FROM evaluations_judgeresult")[0][0] if db.exists() else 0
            if done >= 12:
                break
            time.sleep(0.01)
        worker.send_signal(signal.SIGKILL)
        worker.communicate(timeout=30)
        assert worker.returncode == -signal.SIGKILL

        (run_id, status, processed), = query(db, "SELECT id, status, processed_items FROM evaluations_judgerun")
        finished = {text for (text,) in query(
            db, "SELECT r.text FROM evaluations_judgeresult j JOIN evaluations_modelresponse r ON r.id = j.response_id")}
        assert status == "running" and 12 <= processed == len(finished) < 60
        calls_before = {text: server.calls_for(text) for text in texts}
        assert all(calls_before[text] == 1 for text in finished)

        resumed = manage(env, "judge_run", "--resume", str(run_id), "--force", "--wait")
        assert "60 = 60 scored + 0 failed + 0 filtered + 0 pending" in resumed.stdout

        for text in finished:
            assert server.calls_for(text) == 1, "an item finished before the crash was sent again"
        unfinished_resent = [t for t in texts if t not in finished and server.calls_for(t) > 1]
        # Only items in flight (or waiting in the unflushed batch) at the kill may be sent twice.
        assert len(unfinished_resent) <= 4 + 4
        assert {r.key for r in server.records()} == {text_key(t) for t in texts}
    (status, processed, scored), = query(db, "SELECT status, processed_items, scored_items FROM evaluations_judgerun")
    assert (status, processed, scored) == ("finished", 60, 60)
    assert query(db, "SELECT count(*) FROM evaluations_judgeresult")[0][0] == 60
