"""`manage.py run_local [ADDR:PORT]`: the whole product on one machine, as `make run` starts it — Django's development
server and the task worker (`manage.py run_worker`) side by side. Ctrl-C stops both; a worker that stops on its own
is restarted, and the console says so (config/supervise.py). Production runs the two as separate processes
(`make serve`, compose.yaml)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.supervise import Supervisor


class Command(BaseCommand):
    help = "Run the development web server and the task worker together (Ctrl-C stops both; the worker is restarted)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000", help="Where to serve (runserver's ADDR:PORT).")
        parser.add_argument("--worker-reload", action="store_true",
                            help="Restart the worker on code changes too (off: a reload mid-task abandons the task).")

    def handle(self, *args: Any, **options: Any) -> None:
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        web = [sys.executable, manage, "runserver", options["addrport"]]
        worker = [sys.executable, manage, "run_worker", "--reload" if options["worker_reload"] else "--no-reload"]
        code = Supervisor(web=web, worker=worker).run()
        if code:
            sys.exit(code)
