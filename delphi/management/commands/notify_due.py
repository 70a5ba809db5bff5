"""Notifications that time makes due: Delphi rounds still waiting for a panelist's answer."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from delphi.services import delphi_round_reminders_send


class Command(BaseCommand):
    help = ("Remind panelists of Delphi rounds open for more than --days days (default "
            "FAITHBENCH_DELPHI_REMINDER_DAYS, 3) that they have not answered; each round reminds each person once.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=float, default=None, help="remind after this many days (default: setting)")

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["days"] if options["days"] is not None else settings.DELPHI_REMINDER_DAYS
        if days < 0:
            self.stderr.write("--days must be 0 or more.")
            raise SystemExit(2)
        sent = delphi_round_reminders_send(older_than=timedelta(days=days))
        self.stdout.write(f"{sent} Delphi reminder(s) created.")
