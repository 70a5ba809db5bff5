"""The task worker rides out a lost database connection (issue 25, item 1), and the queue records of a worker that
died are ended (item 6). These run a real `manage.py run_worker --batch` in-process with the database backend;
the outage is a patched query or commit that raises what PostgreSQL's restart raises. The real restart of a real
PostgreSQL under a running worker is tests/config/test_worker_postgres_restart.py."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone
from django_tasks import task
from django_tasks_db.models import DBTaskResult, DBTaskResultQuerySet

from config.management.commands.run_worker import recovery_start
from config.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db(transaction=True)
DATABASE_BACKEND = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
SHUTTING_DOWN = "terminating connection due to administrator command: the database system is shutting down"
calls: dict[str, int] = {}


@task()
def counted(key: str) -> str:
    """A task that counts how often it ran (the worker runs in this process)."""
    calls[key] = calls.get(key, 0) + 1
    return f"ran {key}"


@pytest.fixture(autouse=True)
def database_queue(settings) -> None:  # type: ignore[no-untyped-def]
    settings.TASKS = DATABASE_BACKEND
    calls.clear()


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:  # type: ignore[no-untyped-def]
    """Record the worker's waits instead of waiting."""
    waited: list[float] = []
    monkeypatch.setattr("time.sleep", waited.append)
    return waited


def run_worker(worker_id: str) -> None:
    call_command("run_worker", "--batch", "--no-startup-delay", "--no-reload", "--worker-id", worker_id, verbosity=0)


def status(result: Any) -> str:
    return DBTaskResult.objects.get(pk=result.id).status


def test_the_worker_survives_a_lost_connection_while_claiming_and_waits_longer_each_time(monkeypatch, sleeps):
    result = counted.enqueue("claim")
    real = DBTaskResultQuerySet.get_locked
    failures = {"left": 3}

    def shutting_down(self):  # type: ignore[no-untyped-def]
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError(SHUTTING_DOWN)
        return real(self)

    monkeypatch.setattr(DBTaskResultQuerySet, "get_locked", shutting_down)
    run_worker("w-claim")  # on db_worker this raised and the process ended
    assert calls == {"claim": 1}
    assert status(result) == "SUCCESSFUL"
    assert [s for s in sleeps if s >= 0.5][:3] == [0.5, 1.0, 2.0]  # backoff, doubling


def test_an_outcome_is_recorded_once_the_database_is_back(monkeypatch, sleeps):
    result = counted.enqueue("record")
    real_save = DBTaskResult.save
    failures = {"left": 5}  # more than django-tasks-db's own three quick retries

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "return_value" in (kwargs.get("update_fields") or ()) and failures["left"]:
            failures["left"] -= 1
            raise OperationalError(SHUTTING_DOWN)
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(DBTaskResult, "save", save)
    run_worker("w-record")
    row = DBTaskResult.objects.get(pk=result.id)
    assert calls == {"record": 1}, "the task ran again"
    assert (row.status, row.return_value) == ("SUCCESSFUL", "ran record")  # not FAILED by the outage after it ran


def test_a_claim_whose_commit_went_through_unseen_is_run_once(monkeypatch, sleeps):
    """The connection drops while the claim commits: the row is RUNNING under this worker, which saw an error.
    Nothing started it, so the worker queues it again once the database answers, then runs it (once)."""
    result = counted.enqueue("commit")
    real_claim, real_commit = DBTaskResult.claim, BaseDatabaseWrapper._commit
    state = {"claimed": False, "failed": False}

    def claim(self, worker_id):  # type: ignore[no-untyped-def]
        state["claimed"] = True
        return real_claim(self, worker_id)

    def commit(self):  # type: ignore[no-untyped-def]
        real_commit(self)
        if state["claimed"] and not state["failed"]:
            state["failed"] = True
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(DBTaskResult, "claim", claim)
    monkeypatch.setattr(BaseDatabaseWrapper, "_commit", commit)
    run_worker("w-commit")
    row = DBTaskResult.objects.get(pk=result.id)
    assert state["failed"] and calls == {"commit": 1}
    assert row.status == "SUCCESSFUL" and row.worker_ids == ["w-commit", "w-commit"]


def test_orphaned_records_fail_when_their_workers_lease_expires_and_live_ones_stay(settings):
    settings.HEALTH_WORKER_MAX_AGE = 60
    now = timezone.now()
    long_ago = now - timedelta(minutes=5)
    dead, busy, just_claimed = counted.enqueue("dead"), counted.enqueue("busy"), counted.enqueue("new")
    for result, worker_id in ((dead, "w-dead"), (busy, "w-busy"), (just_claimed, "w-new")):
        started = now if worker_id == "w-new" else long_ago
        DBTaskResult.objects.filter(pk=result.id).update(status="RUNNING", started_at=started, worker_ids=[worker_id])
    WorkerHeartbeat.objects.create(worker_id="w-dead", started_at=long_ago, beat_at=long_ago)  # killed 5 min ago
    WorkerHeartbeat.objects.create(worker_id="w-busy", started_at=long_ago, beat_at=now)  # a long task, alive

    stop = recovery_start(interval=0.05)  # what every run_worker runs
    try:
        deadline = timezone.now() + timedelta(seconds=10)
        while status(dead) == "RUNNING" and timezone.now() < deadline:
            stop.wait(0.05)
    finally:
        stop.set()
    row = DBTaskResult.objects.get(pk=dead.id)
    assert row.status == "FAILED", "the killed worker's record stayed RUNNING"
    assert row.finished_at is not None and row.exception_class_path == "config.worker.WorkerLost"
    assert "w-dead" in row.traceback and "not run again" in row.traceback
    assert (status(busy), status(just_claimed)) == ("RUNNING", "RUNNING")
    assert calls == {}  # ended, never run again


def test_a_record_is_reaped_once_even_by_several_workers():
    from config.worker import task_results_reap

    long_ago = timezone.now() - timedelta(minutes=5)
    result = counted.enqueue("once")
    DBTaskResult.objects.filter(pk=result.id).update(status="RUNNING", started_at=long_ago, worker_ids=["gone"])
    assert task_results_reap() == [str(result.id)]
    assert task_results_reap() == []
    DBTaskResult.objects.filter(pk=result.id).update(status="SUCCESSFUL")
    assert task_results_reap() == [] and status(result) == "SUCCESSFUL"
