"""``manage.py reopen_cycle CYCLE --by EMAIL --reason TEXT``: reopen a closed calibration cycle.

The same service as the admin (annotations.lifecycle.cycle_reopen): staff only, a reason is required and
written to the audit trail; withdrawn assignments stay withdrawn.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotations.lifecycle import cycle_reopen

from ._lifecycle import cycle_lifecycle_run


class Command(BaseCommand):
    help = "Reopen a closed calibration cycle for scoring, with a reason for the audit trail."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cycle", help="the cycle's id or exact name")
        parser.add_argument("--by", required=True, metavar="EMAIL", help="the staff member recorded as reopening it")
        parser.add_argument("--reason", required=True, help="why the cycle is reopened (required)")

    def handle(self, *args: Any, **options: Any) -> None:
        cycle = cycle_lifecycle_run(cycle_reopen, cycle=options["cycle"], by=options["by"], reason=options["reason"])
        self.stdout.write(f"{cycle} reopened.")
