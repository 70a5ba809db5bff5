"""``manage.py judge_pairwise --model M [--cases FILTER] [--limit PAIRS] [--base-url URL] [--resume RUN]``: a pairwise
judge run for position bias (methodology §6.2.1) — every pair of responses to a case asked in both orders — in the
foreground with a progress bar, then the position check, printed and stored for the validation page."""
from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from calibration.validation.position import position_check, position_thin_words
from evaluations.judge.config import money
from evaluations.judge.pairwise import pairwise_run_create, pairwise_run_execute
from evaluations.judge.selectors import pairwise_run_get
from evaluations.models import PairwiseRun


def _num(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Run the judge on pairs of responses in both orders and report its position bias (§6.2.1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", help="The judge model (default: the configured primary judge).")
        parser.add_argument("--cases", help='Case filter, e.g. "dimension=doctrinal,difficulty=hard".')
        parser.add_argument("--limit", type=int, help="At most this many pairs (each asked twice).")
        parser.add_argument("--base-url", default="", help="The endpoint (default: the settings').")
        parser.add_argument("--resume", type=int, metavar="RUN", help="Send what a pairwise run has not judged yet.")

    def handle(self, *args: Any, **options: Any) -> None:
        from evaluations.judge.config import PipelineConfig

        if options["resume"]:
            run = pairwise_run_get(pk=options["resume"])
            if run is None:
                raise CommandError(f"no pairwise run {options['resume']}")
        else:
            try:
                run = pairwise_run_create(model=options["model"] or PipelineConfig.from_settings().primary_model,
                                          cases=options["cases"], limit=options["limit"], base_url=options["base_url"])
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from exc
        bar = tqdm(total=run.total, initial=run.done, unit="call", desc=f"pairwise run {run.pk}", file=sys.stderr,
                   disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.update(done - bar.n)

        run = pairwise_run_execute(run=run, on_progress=progress)
        bar.close()
        self.stdout.write(f"pairwise run {run.pk} ({run.model}) {run.get_status_display().lower()}: {run.done} of "
                          f"{run.total} calls, {run.failed} unreadable or failed; cost {money(run.cost)}")
        if run.status != PairwiseRun.Status.FINISHED:
            raise CommandError(run.error or "the run did not finish")
        check = position_check(run=run)
        self.stdout.write(f"position bias — flag at a reversal rate ≥ {check.document['threshold']:.0%}; "
                          f"check #{check.pk} stored")
        if check.document.get("trial"):  # issue 32: too few pairs over all dimensions
            self.stdout.write(f"trial run: {position_thin_words(check.n or 0)} judged in both orders — no rate or "
                              "verdict, and the validation status does not use this check")
        self.stdout.write(f"{'group':<18} {'pairs':>6} {'reversals':>9} {'rate':>7} {'95 % CI':>17} "
                          f"{'first chosen':>12}  verdict")
        for name, g in check.document["groups"].items():
            ci = g["reversal_ci"]
            self.stdout.write(f"{name:<18} {g['n_pairs']:>6} {g['reversals']:>9} {_num(g['reversal_rate']):>7} "
                              f"{'' if not ci else f'[{_num(ci[0])}, {_num(ci[1])}]':>17} "
                              f"{_num(g['first_position_share']):>12}  {g['verdict']}"
                              + ("  FLAGGED" if g["flagged"] else ""))
