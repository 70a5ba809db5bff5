"""``manage.py import_ratings FILE --study NAME [--format long|judge-bench|wide]``: ratings made elsewhere."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from calibration.studies.importing import FORMATS, StudyImportFailed, study_import
from calibration.studies.scales import scale_option
from stats.alpha import LEVELS


class Command(BaseCommand):
    help = ("Import ratings into a study (created if new), all or nothing; re-importing updates changed scores. "
            "Formats: long (CSV or JSONL with item,rater,score and optionally study,dimension,rater_kind,group, in any "
            "order, under the aliases of docs/rating-files.md: unit for item, value for score …), judge-bench "
            "(a JUDGE-BENCH dataset JSON), wide (one CSV row per item, one column per rater).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--study", required=True, help="the study's name")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default="long")
        parser.add_argument("--level", choices=LEVELS, default="ordinal",
                            help="level of measurement of the dimensions (long and wide; judge-bench says its own)")
        parser.add_argument("--id-column", default="", help="wide: the column naming the item (default: the "
                            "header's item column by the vocabulary: item, unit, item_id, unit_id)")
        parser.add_argument("--rater-columns", default="", help="wide: the raters' columns, comma-separated")
        parser.add_argument("--judge-columns", default="", help="wide: which of those columns are judges")
        parser.add_argument("--dimension", default="score", help="wide, and long files without a dimension column: "
                            "the dimension the scores rate")
        parser.add_argument("--rater-kind", choices=("human", "judge"), default="human",
                            help="long files without a rater_kind column: the raters' kind")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--scale-min", type=float, default=None,
                            help="the scale's minimum (default: inferred from the file and printed)")
        parser.add_argument("--scale-max", type=float, default=None, help="the scale's maximum (as --scale-min)")
        parser.add_argument("--categories", default="", help="nominal: the category codes, comma-separated")

    def handle(self, *args: Any, **options: Any) -> None:
        split = [c.strip() for c in options["rater_columns"].split(",") if c.strip()]
        try:
            scale = scale_option(options["scale_min"], options["scale_max"], options["categories"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            summary = study_import(
                path=options["file"], study=options["study"], fmt=options["fmt"], level=options["level"],
                id_column=options["id_column"], rater_columns=split, dimension=options["dimension"],
                judge_columns=[c.strip() for c in options["judge_columns"].split(",") if c.strip()],
                rater_kind=options["rater_kind"], progress=not options["no_progress"],
                scale=scale,
            )
        except StudyImportFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(str(summary))
        for key, stated in summary.scales.items():
            self.stdout.write(f"scale of {key}: {stated}")
        for warning in summary.warnings:
            self.stdout.write(f"warning: {warning}")
