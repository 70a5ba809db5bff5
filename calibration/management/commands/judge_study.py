"""``manage.py judge_study STUDY --model M [--dimension KEY …] [--limit N] [--base-url URL]``: score an imported
study's items with a judge model, in the foreground with a progress bar; the model becomes a judge rater of the
study. Run it again to resume: only items the model has not scored yet are sent."""
from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from calibration.models import StudyJudgeRun
from calibration.studies.judging import study_judge_run_execute, study_judge_run_request
from calibration.studies.selectors import study_by_ref
from evaluations.judge.config import money


class Command(BaseCommand):
    help = "Score an imported study's items with a judge model (the integrated pipeline's client and retries)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="Study id or exact name.")
        parser.add_argument("--model", required=True, help="The judge model (also its rater name in the study).")
        parser.add_argument("--dimension", action="append", dest="dimensions", help="Only this dimension (repeatable).")
        parser.add_argument("--limit", type=int, help="At most this many calls (a trial run).")
        parser.add_argument("--base-url", default="", help="The OpenAI-compatible endpoint (default: the settings').")

    def handle(self, *args: Any, **options: Any) -> None:
        ref = options["study"]
        study = study_by_ref(ref=ref)
        if study is None:
            raise CommandError(f"no study with id or name {ref!r}")
        try:
            run = study_judge_run_request(study=study, model=options["model"], requested_by=None,
                                          base_url=options["base_url"], dimensions=options["dimensions"],
                                          limit=options["limit"])
        except ValidationError as exc:
            raise CommandError("; ".join(f"{field}: {' '.join(errors)}"
                                         for field, errors in exc.message_dict.items())) from exc
        bar = tqdm(total=0, desc=f"{study.name} · {run.model}", unit="call", file=sys.stderr,
                   disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        run = study_judge_run_execute(run=run, on_progress=progress)
        bar.close()
        line = (f"run #{run.pk} {run.get_status_display().lower()}: {run.scored} scored, {run.failed} failed "
                f"of {run.total}; {run.prompt_tokens:,} + {run.completion_tokens:,} tokens, cost {money(run.cost)}")
        if run.errors:
            line += " — failures: " + ", ".join(f"{k} {v}" for k, v in sorted(run.errors.items()))
        if run.status != StudyJudgeRun.Status.FINISHED:
            raise CommandError(line + (f" ({run.error})" if run.error else ""))
        self.stdout.write(self.style.SUCCESS(line))
