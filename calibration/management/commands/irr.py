"""``manage.py irr FILE``: inter-rater reliability of a long-format ratings CSV (unit,rater,value or any alias of the
rating-file vocabulary, ``stats.ratingfile``).

Thin on purpose: parsing and statistics live in ``stats.longformat``, ``stats.reliability`` and
``stats.report``; this command turns options into arguments and file problems into a CommandError
(one line naming the file and the line, non-zero exit).
"""
from __future__ import annotations

import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from stats.alpha import DEFAULT_ALPHA_MIN, LEVELS
from stats.bootstrap import DEFAULT_RESAMPLES
from stats.longformat import LongFormatError, read_long_csv
from stats.report import irr_report_build, irr_report_json, irr_report_table


class Command(BaseCommand):
    help = (
        "Krippendorff's alpha with a bootstrap CI, percent agreement, Fleiss' kappa, Gwet's AC1/AC2 and "
        "(for two raters) Cohen's kappa, from a CSV with columns unit,rater,value (or item,rater,score, in any order: "
        "the rating-file vocabulary of docs/rating-files.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="CSV with a header row and columns unit,rater,value or their aliases "
                            "(item, score …; extra columns allowed)")
        parser.add_argument("--level", choices=LEVELS, default="ordinal", help="alpha's level of measurement")
        parser.add_argument("--group-by", dest="group_by", metavar="COL", help="report each value of COL separately")
        parser.add_argument(
            "--strata", metavar="COL", help="column whose values the bootstrap resamples units within (e.g. dimension)"
        )
        parser.add_argument(
            "--bootstrap", type=int, default=DEFAULT_RESAMPLES, metavar="N", help="bootstrap resamples; 0 turns it off"
        )
        parser.add_argument("--seed", type=int, default=None, help="seed for a reproducible bootstrap")
        parser.add_argument(
            "--min-alpha", dest="min_alpha", type=float, default=DEFAULT_ALPHA_MIN,
            help="report the probability that alpha is below this value",
        )
        parser.add_argument(
            "--categories", metavar="LIST",
            help="comma-separated full category set in order, e.g. 0,1,2,3 (default: the values in the file)",
        )
        parser.add_argument("--format", choices=("table", "json"), default="table")
        parser.add_argument(
            "--diagnostics", action="store_true",
            help="per rater: bias against the rest of the panel with an interval, score shares, alpha without the rater",
        )
        parser.add_argument("--judge", metavar="RATER",
                            help="with --diagnostics: the rater who is the judge (Bland-Altman against the others' median)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 (off) or a positive number of resamples")
        if not math.isfinite(options["min_alpha"]):
            raise CommandError("--min-alpha must be a number such as 0.667")
        categories = options["categories"].split(",") if options["categories"] else None
        try:
            ratings = read_long_csv(
                options["file"],
                level=options["level"],
                group_by=options["group_by"],
                strata_by=options["strata"],
                categories=categories,
            )
        except LongFormatError as exc:
            raise CommandError(str(exc)) from exc
        report = irr_report_build(
            ratings,
            level=options["level"],
            n_resamples=options["bootstrap"],
            alpha_min=options["min_alpha"],
            seed=options["seed"],
            group_by=options["group_by"],
            diagnostics=options["diagnostics"],
            judge=options["judge"],
        )
        text = irr_report_json(report) if options["format"] == "json" else irr_report_table(report)
        self.stdout.write(text)
