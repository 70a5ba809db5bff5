"""`manage.py backup [DIR]`: the database (PostgreSQL: pg_dump's custom format; SQLite: its backup API) and every
stored snapshot file, with a manifest of SHA-256 hashes and row counts (config/backup.py; docs/deployment.md,
"Backup and the restore drill")."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.backup import BackupError, backup_directory_default, backup_write


class Command(BaseCommand):
    help = "Back up the database and the stored snapshot files into a new directory, with a manifest of hashes"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", nargs="?", default="",
                            help="A new (or empty) directory; default: backups/faithbench-<UTC time>")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = options["directory"] or backup_directory_default("backups")
        try:
            summary = backup_write(directory=directory)
        except BackupError as exc:
            raise CommandError(f"no backup written: {exc}") from None
        for problem in summary.problems:
            self.stderr.write(f"warning: {problem}")
        self.stdout.write(f"backup written: {summary}")
        self.stdout.write(f"check it with: manage.py restore --check {summary.directory}")
