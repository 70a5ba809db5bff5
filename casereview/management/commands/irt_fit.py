"""manage.py irt_fit --dimension D [--rotation R] [--judge-run ID] [--equate-to FIT]: IRT difficulty of a dimension's
cases (graded response model), compared with the assigned tiers; anchor-item equating of a rotation onto another."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casereview.difficulty import (
    DifficultyError,
    difficulty_fit,
    fit_abilities,
)
from casereview.reports import difficulty_fit_find, difficulty_fits_list
from evaluations.domain import Dimension
from evaluations.judge.selectors import judge_run_get
from evaluations.spreadsheet import csv_writer


class Command(BaseCommand):
    help = ("Fit a graded response model to one dimension's case scores (experts' where annotated, else the judge's), "
            "print item difficulties against the assigned tiers and model abilities; --equate-to puts this rotation "
            "on an earlier fit's scale through their shared anchor cases (mean/sigma and Stocking–Lord).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dimension", choices=Dimension.values, help="The dimension to fit.")
        parser.add_argument("--rotation", default="", help="Fit one held-out rotation (its cases plus the anchors).")
        parser.add_argument("--judge-run", type=int, help="Judge run for cells without expert scores (default: newest finished).")
        parser.add_argument("--equate-to", type=int, metavar="FIT", help="An earlier fit (id) to equate this one to.")
        parser.add_argument("--items-csv", metavar="PATH", help="Write the items (thresholds, SEs, fit) as CSV.")
        parser.add_argument("--list", action="store_true", help="List stored fits and stop.")
        parser.add_argument("--json", action="store_true", help="Print the stored fit as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for fit in difficulty_fits_list():
                equated = f" equated to #{fit.equated_to_id}" if fit.equated_to_id else ""
                self.stdout.write(f"#{fit.pk} {fit.dimension} rotation={fit.rotation or '(all)'} {fit.items} cases × "
                                  f"{fit.persons} models {fit.requested_at:%Y-%m-%d %H:%M}{equated}")
            return
        if not options["dimension"]:
            raise CommandError("--dimension is required (or --list)")
        judge_run = None
        if options["judge_run"]:
            judge_run = judge_run_get(pk=options["judge_run"], related=())
            if judge_run is None:
                raise CommandError(f"--judge-run: no judge run {options['judge_run']}")
        base = None
        if options["equate_to"]:
            base = difficulty_fit_find(options["equate_to"])
            if base is None:
                raise CommandError(f"--equate-to: no fit #{options['equate_to']} (see --list)")
        try:
            fit = difficulty_fit(dimension=options["dimension"], judge_run=judge_run, rotation=options["rotation"],
                                 equate_to=base)
        except DifficultyError as exc:
            raise CommandError(str(exc)) from exc
        payload = fit.document
        if options["items_csv"]:
            with open(options["items_csv"], "w", newline="", encoding="utf-8") as handle:
                writer = csv_writer(handle)  # cells escaped like every CSV of ours (evaluations/spreadsheet.py)
                writer.writerow(["case", "tier", "anchor", "n", "a", "a_se", "b1", "b2", "b3", "difficulty",
                                 "difficulty_se", "infit", "outfit", "misfit", "expert_cells", "judge_cells"])
                for item in payload["items"]:
                    writer.writerow([
                        item["case"], item["tier"], item["anchor"], item["n"], item["a"], item["a_se"], *item["b"],
                        item["difficulty"], item["difficulty_se"], item["infit"], item["outfit"], item["misfit"],
                        item["sources"]["expert"], item["sources"]["judge"]])
        if options["json"]:
            self.stdout.write(json.dumps(payload, indent=2))
            return
        self.stdout.write(f"IRT fit #{fit.pk}: {fit.dimension}, rotation {fit.rotation or '(all)'}, {fit.items} cases × "
                          f"{fit.persons} models, {'converged' if payload['converged'] else 'NOT converged'} "
                          f"after {payload['iterations']} EM cycles; {payload['misfit']} misfitting item(s)")
        for tier in payload["tiers"]["tiers"]:
            mean = "—" if tier["mean_difficulty"] is None else f"{tier['mean_difficulty']:+.2f}"
            self.stdout.write(f"  assigned {tier['tier']:<7} {tier['cases']:>4} cases  mean IRT difficulty {mean}")
        rho = payload["tiers"]["spearman_rho"]
        self.stdout.write(f"  Spearman ρ (assigned tier vs IRT difficulty): {'—' if rho is None else f'{rho:.3f}'}")
        equating = payload.get("equating")
        models = [m["equated"] or m for m in fit_abilities(fit)]
        scale = (f"on the scale of fit #{equating['to_fit']} (rotation {equating['to_rotation'] or '(all)'}), "
                 f"Stocking–Lord A={equating['stocking_lord']['A']:.3f} B={equating['stocking_lord']['B']:+.3f}; "
                 f"mean/sigma A={equating['mean_sigma']['A']:.3f} B={equating['mean_sigma']['B']:+.3f}; "
                 f"{len(equating['anchors'])} anchors" if equating else "on this fit's own scale")
        self.stdout.write(f"Model ability (θ, 95 % interval), rotation {fit.rotation or '(all)'} {scale}:")
        for m in models:
            self.stdout.write(f"  {m['model']:<40} {m['theta']:+.2f} [{m['interval'][0]:+.2f}, {m['interval'][1]:+.2f}]")
