"""Cancelling judge runs while their worker commits result batches (issue 15 part 10): every cancel answers
(no "database is locked"), every run ends cancelled, and nothing is stored twice.

`cancel_race(rounds, directory)` runs in the caller's database: tests/evaluations/judge/test_cancel_race.py calls it
in-process on PostgreSQL, and on a SQLite *file* database (the deployment's default, whose locking an in-memory test
database does not have) through `python -m tests.evaluations.judge.cancel_race DB_PATH ROUNDS`, which prints JSON.
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def cancel_race(rounds: int, directory: Path) -> dict[str, Any]:
    from django.conf import settings
    from django.db import connection

    from evaluations.judge.fake_server import FakeLLMServer
    from evaluations.judge.pipeline import judge_run_execute
    from evaluations.judge.services import judge_run_cancel, judge_run_create
    from evaluations.models import JudgeResult, JudgeRun, RubricVersion
    from tests.evaluations.judge.conftest import import_benchmark, no_sleep

    import_benchmark(directory, n_cases=40, prefix="R")
    rubric = RubricVersion.objects.get(version="1.0")
    outcomes: list[dict[str, Any]] = []
    rng = random.Random(7)
    with FakeLLMServer(latency=0.04) as server:
        saved = settings.FAITHBENCH
        settings.FAITHBENCH = {**saved, "LLM_BASE_URL": server.base_url, "LLM_API_KEY": "k", "MAX_IN_FLIGHT": 4,
                               "WRITE_BATCH_SIZE": 4, "WRITE_FLUSH_SECONDS": 0.01, "REQUEST_TIMEOUT": 10.0}
        try:
            for _ in range(rounds):
                run = judge_run_create(rubric=rubric)
                errors: list[str] = []

                def work(run_id: int = run.pk, errors: list[str] = errors) -> None:
                    try:
                        judge_run_execute(run=JudgeRun.objects.get(pk=run_id), client_options={"sleep": no_sleep})
                    except BaseException as exc:  # noqa: BLE001 — reported
                        errors.append(f"worker: {type(exc).__name__}: {exc}")
                    finally:
                        connection.close()

                worker = threading.Thread(target=work)
                worker.start()
                time.sleep(rng.uniform(0.05, 0.5))  # somewhere in the middle of the run's batches
                try:
                    cancelled = judge_run_cancel(run=run).status
                except BaseException as exc:  # noqa: BLE001 — reported
                    cancelled = f"{type(exc).__name__}: {exc}"
                worker.join(timeout=120)
                run.refresh_from_db()
                pairs = list(JudgeResult.objects.filter(run=run).values_list("response_id", "role"))
                outcomes.append({"cancel": cancelled, "final": run.status, "errors": errors,
                                 "results": len(pairs), "distinct": len(set(pairs)),
                                 "processed": run.processed_items, "total": run.total_items})
        finally:
            settings.FAITHBENCH = saved
    return {"rounds": outcomes}


def main(db_path: str, rounds: int) -> dict[str, Any]:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as directory:
        return cancel_race(rounds, Path(directory))


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
