"""manage.py import_data {cases,responses,theobert} FILE [FILE ...]"""
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.importing import ImportFailed, import_files


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
        try:
            reports = import_files(paths=options["files"], kind=options["kind"], fmt=options["format"],
                                   dry_run=options["dry_run"], progress=options["progress"])
        except ImportFailed as exc:
            raise CommandError(exc.summary(limit=200)) from exc
        for report in reports:
            self.stdout.write(("[dry run] " if options["dry_run"] else "") + str(report))
