"""The task worker's resilience: it rides out database restarts and network blips instead of dying, and the queue
records of workers that did die are ended (docs/deployment.md, "The task worker through database outages").

- `ResilientWorker` is django-tasks-db's `Worker` with one change of behaviour: a lost database connection
  (`OperationalError`, `InterfaceError`) while claiming a task or recording its outcome is not fatal. The worker
  closes its connection, waits (0.5 s, doubling up to `MAX_BACKOFF`), and tries again until the database answers.
  A task's outcome is recorded once the database is back; a task is never started twice by this worker.
- A claim whose commit was lost with the connection may still have committed: after an outage the worker puts its
  own claimed-but-never-started records back in the queue (`task_results_release`), since nothing ran them.
- `task_results_reap` ends the RUNNING records whose worker stopped beating for longer than its lease
  (`HEALTH_WORKER_MAX_AGE`): they become FAILED with the reason. They are not run again: the task may have run in
  part. Judge runs and report snapshots keep their own state and their own recovery (judge-run leases).
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections, transaction
from django.utils import timezone
from django_tasks_db.compat import TaskContext, TaskResultStatus, task_finished, task_started
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from .models import WorkerHeartbeat

logger = logging.getLogger("faithbench.worker")

DISCONNECTS = (OperationalError, InterfaceError)  # what a restarting or unreachable database raises
MIN_BACKOFF = 0.5
MAX_BACKOFF = 10.0
LOST_CLASS_PATH = "config.worker.WorkerLost"

T = TypeVar("T")


class Backoff:
    """Waits that double from MIN_BACKOFF to MAX_BACKOFF while the database stays away; reset once it answers."""

    def __init__(self, *, sleep: Callable[[float], None] | None = None) -> None:
        self.sleep = sleep or time.sleep  # looked up now, so a test's patched time.sleep is used
        self.delay = MIN_BACKOFF
        self.failures = 0

    def wait(self) -> float:
        waited = self.delay
        self.failures += 1
        self.sleep(waited)
        self.delay = min(MAX_BACKOFF, self.delay * 2)
        return waited

    def reset(self) -> None:
        self.delay, self.failures = MIN_BACKOFF, 0


def database_lost(exc: BaseException, backoff: Backoff, what: str) -> None:
    """Log the outage, drop this thread's broken connections and wait before the next attempt."""
    logger.warning("task worker: the database is unreachable while %s (%s: %s); trying again in %.1f s",
                   what, type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else "",
                   backoff.delay)
    connections.close_all()
    backoff.wait()


def until_database(call: Callable[[], T], *, what: str, backoff: Backoff | None = None,
                   give_up: Callable[[], bool] = lambda: False) -> T:
    """`call()`, repeated after a lost connection until the database answers (or `give_up()` says stop: the last
    error is raised). Only outside a transaction: inside one, the transaction's work is already lost."""
    backoff = backoff or Backoff()
    while True:
        try:
            result = call()
        except DISCONNECTS as exc:
            if any(c.in_atomic_block for c in connections.all(initialized_only=True)) or give_up():
                raise
            database_lost(exc, backoff, what)
            continue
        if backoff.failures:
            logger.warning("task worker: the database answers again (%s)", what)
        return result


class ResilientWorker(Worker):
    """django-tasks-db's worker, surviving database outages (see the module's docstring)."""

    def __init__(self, *, sleep: Callable[[float], None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backoff = Backoff(sleep=sleep)
        self.release_due = False

    def claim_next(self) -> tuple[DBTaskResult | None, bool]:
        """Lock and claim the next ready task (as the base worker does); (task or None, whether the query ran)."""
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        with exclusive_transaction(tasks.db):
            try:
                task_result = tasks.get_locked()
                if task_result is not None:
                    task_result.claim(self.worker_id)  # RUNNING, so no other worker takes it
            except OperationalError as exc:
                if is_locked_database_exception(exc):  # SQLite busy: no task this time
                    return None, False
                raise
        return task_result, True

    def run(self) -> None:
        logger.info("Starting worker worker_id=%s queues=%s", self.worker_id, ",".join(self.queue_names))
        if self.startup_delay and self.interval:
            time.sleep(random.random())  # noqa: S311 - spread workers started together, as the base does
        while self.running:
            try:
                if self.release_due:
                    released = task_results_release(worker_id=self.worker_id)
                    if released:
                        logger.warning("task worker: %d task(s) claimed before the outage but never started are "
                                       "queued again: %s", len(released), ", ".join(released))
                    self.release_due = False
                task_result, retrieved = self.claim_next()
            except DISCONNECTS as exc:
                self.release_due = True  # the claim's commit may have reached the database before the error
                if not self.running:
                    return
                database_lost(exc, self.backoff, "looking for a task")
                continue
            if self.backoff.failures:
                logger.warning("task worker: the database answers again after %d failed attempt(s)",
                               self.backoff.failures)
                self.backoff.reset()
            if task_result is not None:
                self.run_task(task_result)
            if self.batch and retrieved and task_result is None:
                logger.info("No more tasks to run for worker_id=%s - exiting gracefully.", self.worker_id)
                return
            if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                logger.info("Run maximum tasks (%d) on worker=%s - exiting gracefully.", self._run_tasks,
                            self.worker_id)
                return
            if self.running and not task_result:
                time.sleep(self.interval)

    def run_task(self, db_task_result: DBTaskResult) -> None:
        """Run a claimed task once and record its outcome, waiting for the database if it is away meanwhile."""
        self.running_task = True
        outcome: Callable[[], None]
        try:
            task = db_task_result.task
            task_result = db_task_result.task_result
            task_started.send(sender=task.get_backend(), task_result=task_result)
            if task.takes_context:
                value = task.call(TaskContext(task_result=task_result), *task_result.args, **task_result.kwargs)
            else:
                value = task.call(*task_result.args, **task_result.kwargs)
            outcome = lambda: db_task_result.set_successful(value)  # noqa: E731
        except BaseException as exc:  # recorded, as the base worker does (KeyboardInterrupt, SystemExit too)
            logger.exception("task %s failed", db_task_result.id)
            error = exc
            outcome = lambda: db_task_result.set_failed(error)  # noqa: E731
        try:
            until_database(outcome, what=f"recording the outcome of task {db_task_result.id}",
                           backoff=Backoff(sleep=self.backoff.sleep))
            try:
                task_finished.send(sender=type(db_task_result.task.get_backend()),
                                   task_result=db_task_result.task_result)
            except Exception:
                logger.exception("task %s: a task_finished receiver failed", db_task_result.id)
        finally:
            self.running_task = False
            self._run_tasks += 1


def _last_worker(row: DBTaskResult) -> str:
    return str(row.worker_ids[-1]) if row.worker_ids else ""


@transaction.atomic
def task_results_release(*, worker_id: str) -> list[str]:
    """Queue again this worker's RUNNING records: called only while it runs no task (after an outage), so these are
    claims whose commit went through although the worker saw an error, and that nothing has started."""
    rows = [r for r in DBTaskResult.objects.running().only("id", "worker_ids") if _last_worker(r) == worker_id]
    released = []
    for row in rows:
        if DBTaskResult.objects.filter(pk=row.pk, status=TaskResultStatus.RUNNING).update(
                status=TaskResultStatus.READY, started_at=None):
            released.append(str(row.pk))
    return released


@transaction.atomic
def task_results_reap(*, now: datetime | None = None, lease: float | None = None) -> list[str]:
    """End the RUNNING task records whose worker has not beaten for `lease` seconds (HEALTH_WORKER_MAX_AGE): FAILED,
    with the worker and its last beat as the reason. Conditional updates: any number of workers may reap at once,
    and a record that finished meanwhile is left alone. Returns the ids ended."""
    now = now or timezone.now()
    lease = float(settings.HEALTH_WORKER_MAX_AGE if lease is None else lease)
    cutoff = now - timedelta(seconds=lease)
    running = list(DBTaskResult.objects.running().filter(started_at__lt=cutoff).only("id", "worker_ids", "task_path"))
    if not running:
        return []
    beats = dict(WorkerHeartbeat.objects.filter(worker_id__in={_last_worker(r) for r in running})
                 .values_list("worker_id", "beat_at"))
    reaped = []
    for row in running:
        worker_id = _last_worker(row)
        last = beats.get(worker_id)
        if last is not None and last >= cutoff:
            continue  # its worker is alive: a long task, not an orphan
        seen = f"last seen {last.isoformat(timespec='seconds')}" if last else "no heartbeat on record"
        reason = (f"WorkerLost: the worker {worker_id or '?'} running this task stopped ({seen}; lease {lease:.0f} s). "
                  "The task was not run again, since it may have run in part; judge runs resume by themselves "
                  "(their own lease), a report version can be requested again.")
        if DBTaskResult.objects.filter(pk=row.pk, status=TaskResultStatus.RUNNING).update(
                status=TaskResultStatus.FAILED, finished_at=now, exception_class_path=LOST_CLASS_PATH,
                traceback=reason, return_value=None):
            reaped.append(str(row.pk))
    return reaped
