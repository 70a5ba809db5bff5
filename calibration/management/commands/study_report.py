"""``manage.py study_report NAME [--format json|text]``: a study's reliability, humans and judges."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from calibration.studies.selectors import study_by_name, study_names, study_reliability
from stats.bootstrap import DEFAULT_RESAMPLES


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Reliability of an imported study: per dimension the humans' α (with interval), ICC, and each judge."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--format", dest="fmt", choices=["json", "text"], default="text")
        parser.add_argument("--bootstrap", type=int, default=DEFAULT_RESAMPLES, help="resamples; 0 turns it off")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_by_name(name=options["study"])
        if study is None:
            names = ", ".join(study_names(limit=20)) or "none yet"
            raise CommandError(f"no study named {options['study']!r} (studies: {names})")
        if options["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 or more")
        report = study_reliability(study=study, n_resamples=options["bootstrap"], seed=options["seed"])
        if options["fmt"] == "json":
            self.stdout.write(json.dumps(report, indent=2, default=float, allow_nan=False))
            return
        self.stdout.write(f"{report['study']}")
        for key, dim in report["dimensions"].items():
            humans = dim["humans"] or {}
            ci = humans.get("alpha_ci") or [None, None]  # [low, high]
            self.stdout.write(f"  {key} ({dim['level']}, {dim['n_items']} items, {dim['n_humans']} humans): "
                              f"alpha {_fmt(humans.get('krippendorff_alpha'))} "
                              f"[{_fmt(ci[0])}, {_fmt(ci[1])}]")
            for judge in dim["judges"]:
                self.stdout.write(f"    judge {judge['rater']}: rho {_fmt(judge['spearman_rho'])}, "
                                  f"tau-b {_fmt(judge['kendall_tau_b'])}, "
                                  f"mean difference {_fmt(judge['mean_signed_difference'])}, "
                                  f"kappa (linear) {_fmt(judge['cohen_kappa_linear'])}, "
                                  f"alpha with the judge {_fmt(judge['alpha_with_judge'])}")
