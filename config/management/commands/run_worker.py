"""`manage.py run_worker`: django-tasks' database worker made resilient (config/worker.py: it waits for a database
that restarts or drops the connection instead of dying), a heartbeat thread that /healthz reads, and a recovery
thread that takes back judge runs whose worker died (their lease expired) and ends the queue records of dead workers.

Takes every option of `db_worker` (queues, --interval, --max-tasks, …). Run one or more per deployment;
each claims tasks with row locks, and each run is reclaimed by one worker only, so any number can share the queue.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any

from django.core.management.base import CommandError
from django.db import DatabaseError, connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from config.health import worker_heartbeat_start, worker_heartbeats_prune
from config.worker import ResilientWorker, task_results_reap, until_database
from evaluations.tasks import judge_runs_recover

logger = logging.getLogger(__name__)


class Command(DbWorkerCommand):
    help = "Run the background task worker (django-tasks database backend) with a heartbeat for /healthz"

    def handle(self, *args: Any, **options: Any) -> None:
        options["worker_id"] = options.get("worker_id") or get_random_string(32)  # random per process by default
        if options.get("reload") and not options.get("batch") and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true":
            # --reload: this process only restarts the child that runs tasks; the child beats (a parent that beat
            # would report a worker alive while its child is dead or restarting).
            self.configure_logging(options["verbosity"])
            run_with_reloader(lambda: None)  # exits with the child's code; the child runs this handle again
            return
        # A worker started while the database is down waits for it instead of exiting.
        until_database(worker_heartbeats_prune, what="starting")
        stop = until_database(lambda: worker_heartbeat_start(worker_id=options["worker_id"]), what="starting")
        recovery = recovery_start()
        try:
            self.work(**options)
        finally:
            stop.set()
            recovery.set()

    def work(self, *, verbosity: int, queue_name: str, interval: float, batch: bool, backend_name: str,
             startup_delay: bool, reload: bool, max_tasks: int | None, worker_id: str, exclude_queues: str,
             **options: Any) -> None:
        """What db_worker's handle does, with the resilient worker."""
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = ResilientWorker(queue_names=queue_names, interval=interval, batch=batch, backend_name=backend_name,
                                 startup_delay=startup_delay, max_tasks=max_tasks, worker_id=worker_id,
                                 excluded_queue_names=excluded)
        worker.configure_signals()
        if reload and not batch and os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
            run_with_reloader(worker.run)  # the reloader's child: runs the worker and watches the code
        else:
            worker.run()


RECOVERY_SECONDS = 10.0


def recovery_start(*, interval: float = RECOVERY_SECONDS) -> threading.Event:
    """Every `interval` seconds, queue again the judge runs whose worker stopped and end the task records of dead
    workers; set the event to stop."""
    stop = threading.Event()

    def recover_forever() -> None:
        while not stop.wait(interval):
            try:
                requeued = judge_runs_recover()
                if requeued:
                    logger.warning("judge runs %s: their worker stopped; queued again", requeued)
                reaped = task_results_reap()
                if reaped:
                    logger.warning("task records %s: their worker stopped; marked failed", reaped)
            except DatabaseError:
                logger.warning("worker recovery: database unreachable", exc_info=True)
            finally:
                connections.close_all()

    threading.Thread(target=recover_forever, name="worker-recovery", daemon=True).start()
    return stop
