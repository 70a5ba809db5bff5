"""manage.py import_data {cases,responses,theobert} FILE [FILE ...]"""
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from evaluations.importing import ImportFailed, import_file


class Command(BaseCommand):
    help = (
        "Import test cases, model responses or TheoBERT eval.json cases from JSON, JSONL or CSV. "
        "All files are imported in one transaction: any bad row in any file and nothing is written. "
        "Re-importing upserts by external id."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=["cases", "responses", "theobert"])
        parser.add_argument("files", nargs="+")
        parser.add_argument("--format", choices=["json", "jsonl", "csv"], help="Override the format the suffix implies.")
        parser.add_argument("--dry-run", action="store_true", help="Validate and count, then roll back.")
        bar = parser.add_mutually_exclusive_group()
        bar.add_argument("--progress", dest="progress", action="store_true", default=None, help="Always show a progress bar.")
        bar.add_argument("--no-progress", dest="progress", action="store_false", help="Never show a progress bar.")

    def handle(self, *args, **options) -> None:
        reports, errors = [], []
        with transaction.atomic():
            for path in options["files"]:
                try:
                    reports.append(
                        import_file(path=path, kind=options["kind"], fmt=options["format"],
                                    dry_run=options["dry_run"], progress=options["progress"])
                    )
                except ImportFailed as exc:
                    errors.extend(exc.errors)
            if errors:
                transaction.set_rollback(True)
        if errors:
            raise CommandError(ImportFailed(errors).summary(limit=200))
        for report in reports:
            self.stdout.write(("[dry run] " if options["dry_run"] else "") + str(report))
