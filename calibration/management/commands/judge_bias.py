"""``manage.py judge_bias verbosity [--run ID] [--cycle ID] [--format text|json]``: a bias check of a judge run
(methodology §6.2), printed and stored for the validation page. Without --run: the newest finished run."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.models import CalibrationCycle
from calibration.validation.verbosity import verbosity_check
from evaluations.judge.selectors import judge_run_latest_finished
from evaluations.models import JudgeRun


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(ci: Any) -> str:
    return "" if not ci else f"[{_num(ci[0])}, {_num(ci[1])}]"


class Command(BaseCommand):
    help = "Check a judge run for bias (verbosity: §6.2.2) and store the result."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("check", choices=["verbosity"])
        parser.add_argument("--run", type=int, help="Judge run id (default: the newest finished run).")
        parser.add_argument("--cycle", type=int, help="A cycle whose experts give the reference scores.")
        parser.add_argument("--format", dest="fmt", choices=["text", "json"], default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        run = JudgeRun.objects.filter(pk=options["run"]).first() if options["run"] else judge_run_latest_finished()
        if run is None:
            raise CommandError(f"no judge run {options['run']}" if options["run"] else "no finished judge run yet")
        cycle = None
        if options["cycle"]:
            cycle = CalibrationCycle.objects.filter(pk=options["cycle"]).first()
            if cycle is None:
                raise CommandError(f"no cycle {options['cycle']}")
        check = verbosity_check(run=run, cycle=cycle)
        if options["fmt"] == "json":
            self.stdout.write(json.dumps(check.payload, indent=2, default=str))
            return
        payload = check.payload
        self.stdout.write(f"verbosity bias of judge run {run.pk}" + (f" against the experts of cycle {cycle.pk}"
                                                                       if cycle else " (no expert reference)")
                          + f" — flag at |r| ≥ {payload['threshold']}; check #{check.pk} stored")
        self.stdout.write(f"{'group':<18} {'n':>5} {'r (length)':>11} {'95 % CI':>17} {'partial r':>10} "
                          f"{'95 % CI':>17} {'experts r':>10} {'/100 words':>10}  flag")
        for name, g in payload["groups"].items():
            partial = g.get("partial") or {}
            reference = g.get("reference_pearson") or {}
            self.stdout.write(
                f"{name:<18} {g['n']:>5} {_num(g['pearson']['r']):>11} {_ci(g['pearson']['ci']):>17} "
                f"{_num(partial.get('r')):>10} {_ci(partial.get('ci')):>17} {_num(reference.get('r')):>10} "
                f"{_num(g['slope_per_100_words'], 4):>10}  {'FLAGGED' if g['flagged'] else 'ok'} ({g['verdict']})"
                + (f"  ({g['warning']})" if g.get("warning") else ""))
