"""`manage.py run_worker`: django-tasks' database worker plus a heartbeat thread that /healthz reads.

Takes every option of `db_worker` (queues, --interval, --max-tasks, …). Run one or more per deployment;
each claims tasks with row locks, so any number can share the queue.
"""
from __future__ import annotations

from typing import Any

from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from config.health import worker_heartbeat_start, worker_heartbeats_prune


class Command(DbWorkerCommand):
    help = "Run the background task worker (django-tasks database backend) with a heartbeat for /healthz"

    def handle(self, *args: Any, **options: Any) -> None:
        options["worker_id"] = options.get("worker_id") or get_random_string(32)  # random per process by default
        worker_heartbeats_prune()
        stop = worker_heartbeat_start(worker_id=options["worker_id"])
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
