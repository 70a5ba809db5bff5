"""Send each person who chose the daily digest one email with what is new (run daily, e.g. from cron)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from accounts.notifications import digests_send


class Command(BaseCommand):
    help = ("Email every notification not yet emailed, one message per person (digest mode; immediate emails "
            "that failed are retried). Run once a day: `manage.py notify_due && manage.py send_digests`.")

    def handle(self, *args: Any, **options: Any) -> None:
        sent = digests_send()
        self.stdout.write(f"{sent} digest email(s) sent.")
