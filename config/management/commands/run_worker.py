"""`manage.py run_worker`: django-tasks' database worker, a heartbeat thread that /healthz reads, and a recovery
thread that takes back judge runs whose worker died (their lease expired) and queues them again.

Takes every option of `db_worker` (queues, --interval, --max-tasks, …). Run one or more per deployment;
each claims tasks with row locks, and each run is reclaimed by one worker only, so any number can share the queue.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any

from django.db import DatabaseError, connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from config.health import worker_heartbeat_start, worker_heartbeats_prune
from evaluations.tasks import judge_runs_recover

logger = logging.getLogger(__name__)


class Command(DbWorkerCommand):
    help = "Run the background task worker (django-tasks database backend) with a heartbeat for /healthz"

    def handle(self, *args: Any, **options: Any) -> None:
        options["worker_id"] = options.get("worker_id") or get_random_string(32)  # random per process by default
        if options.get("reload") and not options.get("batch") and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true":
            # --reload: this process only restarts the child that runs tasks; the child beats (a parent that beat
            # would report a worker alive while its child is dead or restarting).
            super().handle(*args, **options)
            return
        worker_heartbeats_prune()
        stop = worker_heartbeat_start(worker_id=options["worker_id"])
        recovery = recovery_start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
            recovery.set()


RECOVERY_SECONDS = 10.0


def recovery_start(*, interval: float = RECOVERY_SECONDS) -> threading.Event:
    """Every `interval` seconds, queue again the judge runs whose worker stopped; set the event to stop."""
    stop = threading.Event()

    def recover_forever() -> None:
        while not stop.wait(interval):
            try:
                requeued = judge_runs_recover()
                if requeued:
                    logger.warning("judge runs %s: their worker stopped; queued again", requeued)
            except DatabaseError:
                logger.warning("judge run recovery: database unreachable", exc_info=True)
            finally:
                connections.close_all()

    threading.Thread(target=recover_forever, name="judge-run-recovery", daemon=True).start()
    return stop
