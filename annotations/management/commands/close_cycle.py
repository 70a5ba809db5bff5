"""``manage.py close_cycle CYCLE --by EMAIL [--reason TEXT]``: close a calibration cycle for scoring.

The same service as the admin (annotations.lifecycle.cycle_close): staff only, written to the audit trail.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotations.lifecycle import cycle_close

from ._lifecycle import cycle_lifecycle_run


class Command(BaseCommand):
    help = "Close a calibration cycle for scoring (drafts, submissions and skips are refused afterwards)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cycle", help="the cycle's id or exact name")
        parser.add_argument("--by", required=True, metavar="EMAIL", help="the staff member recorded as closing it")
        parser.add_argument("--reason", default="", help="why (optional), written to the audit trail")

    def handle(self, *args: Any, **options: Any) -> None:
        cycle = cycle_lifecycle_run(cycle_close, cycle=options["cycle"], by=options["by"], reason=options["reason"])
        self.stdout.write(f"{cycle} closed for scoring.")
