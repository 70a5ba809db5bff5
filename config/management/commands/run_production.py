"""`manage.py run_production --web CMD --worker CMD`: the production processes on one machine, as `make serve` starts
them — gunicorn and the task worker, supervised like `make run`'s (config/supervise.py): a worker that stops is
restarted (waiting longer while it keeps stopping right away), the web server stopping stops both with its exit code,
SIGTERM or Ctrl-C stops both. Compose runs the two as separate services with a restart policy instead."""
from __future__ import annotations

import shlex
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.supervise import Supervisor


class Command(BaseCommand):
    help = "Run the web server and the task worker together, restarting the worker when it stops (make serve)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--web", required=True, help='The web server command, e.g. "gunicorn -c config/gunicorn.conf.py config.wsgi".')
        parser.add_argument("--worker", required=True, help='The worker command, e.g. "python manage.py run_worker --no-reload".')

    def handle(self, *args: Any, **options: Any) -> None:
        web, worker = shlex.split(options["web"]), shlex.split(options["worker"])
        if not web:
            raise CommandError("--web: the web server command is empty")
        if not worker:
            raise CommandError("--worker: the task worker command is empty")
        code = Supervisor(web=web, worker=worker, name="run_production").run()
        if code:
            sys.exit(code)
