"""`manage.py restore DIR`: check a backup against its manifest, restore it into the configured database (replacing
what is there), and check the restored rows and snapshot files against the manifest (config/backup.py).
`--check` only compares the directory with its manifest."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.backup import BackupError, backup_check, backup_restore


class Command(BaseCommand):
    help = "Restore a backup written by `manage.py backup` (checked against its manifest before and after)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", help="The backup directory (with manifest.json)")
        parser.add_argument("--check", action="store_true", help="Only check the files against the manifest.")
        parser.add_argument("--yes", action="store_true", help="Do not ask before replacing the database.")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = options["directory"]
        try:
            manifest = backup_check(directory=directory)
            if options["check"]:
                self.stdout.write(f"backup {directory}: {len(manifest['files'])} files match the manifest "
                                  f"({manifest['engine']}, written {manifest['created_at']})")
                return
            if not options["yes"] and options.get("interactive", True) and self.stdin_is_tty():
                answer = input(f"Replace the configured database with the backup of {manifest['created_at']}? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    raise CommandError("nothing restored")
            summary = backup_restore(directory=directory)
        except BackupError as exc:
            raise CommandError("refused: " + "\n  ".join(exc.problems)) from None
        self.stdout.write(f"restored and verified: {summary} — every row count and file hash matches the manifest")

    @staticmethod
    def stdin_is_tty() -> bool:
        import sys
        return sys.stdin.isatty()
