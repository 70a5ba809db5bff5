"""`manage.py prune_audit [--days N]`: remove audit rows older than the retention time (the prune is recorded)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.services import audit_prune, audit_retention_days


class Command(BaseCommand):
    help = "Delete audit rows older than AUDIT_RETENTION_DAYS (or --days); the prune itself is recorded."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None,
                            help=f"keep this many days (default AUDIT_RETENTION_DAYS, now {audit_retention_days()})")

    def handle(self, *args: Any, days: int | None = None, **options: Any) -> None:
        if days is not None and days < 1:
            raise CommandError("--days must be at least 1")
        deleted = audit_prune(days=days)
        self.stdout.write(f"audit: pruned {deleted} row(s) older than {days or audit_retention_days()} days")
