"""manage.py export_data {cases,responses,theobert} FILE"""
from django.core.management.base import BaseCommand, CommandParser

from evaluations.importing import export_to_path


class Command(BaseCommand):
    help = (
        "Export test cases, model responses or TheoBERT cases as JSON, JSONL or CSV (by the file's suffix), "
        "in the format the importer reads. Held-out cases and responses to them are left out unless "
        "--include-held-out is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=["cases", "responses", "theobert"])
        parser.add_argument("file")
        parser.add_argument("--format", choices=["json", "jsonl", "csv"])
        parser.add_argument(
            "--include-held-out", action="store_true",
            help="Include held-out cases (for backups by the benchmark maintainers only; keep the file private).",
        )

    def handle(self, *args, **options) -> None:
        size = export_to_path(kind=options["kind"], path=options["file"], fmt=options["format"],
                              include_held_out=options["include_held_out"])
        scope = "including held-out" if options["include_held_out"] else "public only"
        self.stdout.write(f"wrote {options['file']} ({size:,} bytes, {scope})")
