"""`manage.py worker_health`: exit 0 when a task worker on this host beat recently (within HEALTH_WORKER_MAX_AGE),
else 1 with the reason — compose's healthcheck of the worker service (each container has its own hostname).
`--any-host` asks about any worker, as /healthz does."""
from __future__ import annotations

import socket
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import DatabaseError
from django.utils import timezone

from config.health import worker_heartbeat_newest


class Command(BaseCommand):
    help = "Exit 0 if a task worker on this host has beaten recently (a healthcheck), else 1"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--any-host", action="store_true", help="Any worker, not only one on this host.")

    def handle(self, *args: Any, **options: Any) -> None:
        host = socket.gethostname()[:255]
        where = "anywhere" if options["any_host"] else f"on {host}"
        try:
            newest = worker_heartbeat_newest(hostname=None if options["any_host"] else host)
        except DatabaseError as exc:
            self.stderr.write(f"unhealthy: the database is unreachable ({type(exc).__name__})")
            sys.exit(1)
        if newest is None:
            self.stderr.write(f"unhealthy: no task worker has beaten {where}")
            sys.exit(1)
        age = (timezone.now() - newest).total_seconds()
        if age > settings.HEALTH_WORKER_MAX_AGE:
            self.stderr.write(f"unhealthy: the newest task worker heartbeat {where} is {age:.0f} s old "
                              f"(more than HEALTH_WORKER_MAX_AGE={settings.HEALTH_WORKER_MAX_AGE:.0f} s)")
            sys.exit(1)
        self.stdout.write(f"healthy: a task worker beat {where} {age:.0f} s ago")
