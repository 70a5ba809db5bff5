"""Bias and agreement checks of judge runs (methodology §6.2, §6.3.2, §8.4), printed and stored for the validation
page:

    manage.py judge_bias verbosity [--run ID] [--cycle ID]      length vs score (default: the newest finished run)
    manage.py judge_bias judges --run A --run B [--run C …]     agreement of different judge models
    manage.py judge_bias runs --run A --run B [--run C …]       agreement of repeated runs of one judge
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.selectors import cycle_get
from calibration.validation.agreement import agreement_check
from calibration.validation.payloads import agreement_payload, tradition_payload, verbosity_payload
from calibration.validation.store import check_label
from calibration.validation.verbosity import verbosity_check
from evaluations.judge.selectors import judge_run_get, judge_run_latest_finished, judge_runs_by_id
from evaluations.models import JudgeRun


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(ci: Any) -> str:
    return "" if not ci else f"[{_num(ci[0])}, {_num(ci[1])}]"


class Command(BaseCommand):
    help = "Check a judge run for bias (verbosity: §6.2.2) and store the result."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("check", choices=["verbosity", "tradition", "judges", "runs"])
        parser.add_argument("--run", type=int, action="append", dest="runs",
                            help="Judge run id (verbosity: default the newest finished run; judges/runs: two or more).")
        parser.add_argument("--series", type=int, metavar="RUN",
                            help="runs: every finished run of this run's series (judge_run --repeat N)")
        parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples of the α intervals.")
        parser.add_argument("--review-cycle", metavar="NAME",
                            help="judges/runs: put the high-spread responses in a new cycle for expert review")
        parser.add_argument("--cycle", type=int, help="A cycle whose experts give the reference scores.")
        parser.add_argument("--format", dest="fmt", choices=["text", "json"], default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        ids = list(options["runs"] or [])
        if options["series"]:
            from evaluations.judge.selectors import judge_run_series

            anchor = judge_run_get(pk=options["series"], related=())
            if anchor is None:
                raise CommandError(f"no judge run {options['series']}")
            ids += [r.pk for r in judge_run_series(run=anchor) if r.pk not in ids]
        found = judge_runs_by_id(ids=ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise CommandError(f"no judge run {', '.join(map(str, missing))}")
        if options["check"] in ("judges", "runs"):
            self._agreement([found[i] for i in ids], kind=options["check"], resamples=options["resamples"],
                            review_cycle=options["review_cycle"], fmt=options["fmt"])
            return
        if options["check"] == "tradition":
            self._tradition(cycle_id=options["cycle"], fmt=options["fmt"])
            return
        run = found[ids[0]] if ids else judge_run_latest_finished()
        if run is None:
            raise CommandError("no finished judge run yet")
        cycle = None
        if options["cycle"]:
            cycle = cycle_get(pk=options["cycle"])
            if cycle is None:
                raise CommandError(f"no cycle {options['cycle']}")
        check = verbosity_check(run=run, cycle=cycle)
        if options["fmt"] == "json":
            self.stdout.write(json.dumps(check.payload, indent=2, default=str))
            return
        payload = verbosity_payload(check)
        self.stdout.write(f"verbosity bias of judge run {run.pk}" + (f" against the experts of cycle {cycle.pk}"
                                                                       if cycle else " (no expert reference)")
                          + f" — flag at |r| ≥ {payload['threshold']}; check #{check.pk} stored")
        self.stdout.write(f"{'group':<18} {'n':>5} {'r (length)':>11} {'95 % CI':>17} {'partial r':>10} "
                          f"{'95 % CI':>17} {'experts r':>10} {'/100 words':>10}  flag")
        for name, g in payload["groups"].items():
            partial: Mapping[str, object] = g.get("partial") or {}
            reference: Mapping[str, object] = g.get("reference_pearson") or {}
            self.stdout.write(
                f"{name:<18} {g['n']:>5} {_num(g['pearson']['r']):>11} {_ci(g['pearson']['ci']):>17} "
                f"{_num(partial.get('r')):>10} {_ci(partial.get('ci')):>17} {_num(reference.get('r')):>10} "
                f"{_num(g['slope_per_100_words'], 4):>10}  {'FLAGGED' if g['flagged'] else 'ok'} ({g['verdict']})"
                + (f"  ({g['warning']})" if g.get("warning") else ""))
        overall = payload["groups"].get("all dimensions")
        per_model = overall.get("models") if overall else None
        if per_model:
            self.stdout.write("mean judge composite per model, raw and length-normalised (over all dimensions):")
            for model, m in per_model.items():
                self.stdout.write(f"  {model:<40} raw {_num(m['raw'])}  normalised {_num(m['length_normalised'])}  "
                                  f"({m['mean_words']:.0f} words on average)")

    def _tradition(self, *, cycle_id: int | None, fmt: str) -> None:
        from django.core.exceptions import ValidationError

        from calibration.validation.tradition import tradition_check

        cycle = cycle_get(pk=cycle_id) if cycle_id else None
        if cycle is None:
            raise CommandError("name the cross-tradition cycle: --cycle ID")
        try:
            check = tradition_check(cycle=cycle)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        payload = tradition_payload(check)
        if fmt == "json":
            self.stdout.write(json.dumps(payload, indent=2, default=str))
            return
        self.stdout.write(f"tradition fairness of cycle {cycle.pk}: out-group minus in-group mean score (0–3), flag "
                          f"beyond ±{payload['threshold_points']}; check #{check.pk} stored")
        self.stdout.write(f"{'scored':<14} {'by':<14} {'dimension':<16} {'items':>5} {'difference':>11} {'95 % CI':>17}")
        for g in payload["groups"]:
            self.stdout.write(f"{g['scored']:<14} {g['scoring']:<14} {g['dimension']:<16} {g['n_items']:>5} "
                              f"{_num(g['mean_difference']):>11} {_ci(g['ci']):>17}"
                              + ("  FLAGGED" if g["flagged"] else ""))
        gap = payload.get("judge_gap")
        if gap:
            self.stdout.write(f"the judge per tradition (report of cycle {gap['cycle']} v{gap['version']}; pooled α "
                              f"{_num(gap['pooled_alpha'])}): α gap, and judge − majority against the other traditions")
            for key, t in gap["traditions"].items():
                self.stdout.write(f"  {key:<14} α gap {_num(t['gap']):>7}   shift {_num(t['difference_to_other_traditions'])}"
                                  + ("  FLAGGED" if t["flagged"] else ""))

    def _agreement(self, runs: list[JudgeRun], *, kind: str, resamples: int, review_cycle: str | None,
                   fmt: str) -> None:
        if len(runs) < 2 or len({r.pk for r in runs}) < len(runs):
            raise CommandError("name two or more different runs: --run A --run B")
        models = {r.primary_model for r in runs}
        if kind == "runs" and len(models) > 1:
            raise CommandError(f"run-to-run compares runs of one judge; these have {', '.join(sorted(models))}")
        check = agreement_check(runs=runs, kind=kind, n_resamples=resamples)
        payload = agreement_payload(check)
        if fmt == "json":
            self.stdout.write(json.dumps(payload, indent=2, default=str))
            return
        self.stdout.write(f"{check_label(check)}: runs {', '.join(map(str, payload['runs']))} "
                          f"({', '.join(payload['models'])}), {payload['n_responses']} responses judged by all; "
                          f"check #{check.pk} stored")
        self.stdout.write(f"{'group':<18} {'units':>6} {'alpha':>7} {'95 % CI':>17}  "
                          f"verdict (α ≥ {payload['thresholds']['alpha_min']})")
        for name, g in payload["groups"].items():
            self.stdout.write(f"{name:<18} {g['n_units']:>6} {_num(g['alpha']):>7} {_ci(g['alpha_ci']):>17}  "
                              f"{g['verdict']}{'  FLAGGED' if g['flagged'] else ''}")
        self.stdout.write(f"mean per-response SD of the composite: {_num(payload['mean_item_sd'])}; "
                          f"{len(payload['review'])} response(s) with SD ≥ {payload['thresholds']['spread_review']} "
                          "listed for expert review")
        if review_cycle and payload["review"]:
            from django.core.exceptions import ValidationError

            from calibration.validation.agreement import review_cycle_commit

            try:
                cycle = review_cycle_commit(name=review_cycle, check=check)
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from exc
            self.stdout.write(f"queued for expert review: cycle {cycle.pk} ({cycle.name}), {cycle.items.count()} items")
