"""manage.py theobert_score (--predictions FILE | --model DIR) [--k N]: score the imported TheoBERT cases."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from evaluations.models import TheoBertRun
from evaluations.selectors import theobert_cases
from evaluations.theobert.services import theobert_run_score, theobert_run_summary
from evaluations.theobert.sources import PredictionError, PredictionsFile


class Command(BaseCommand):
    help = ("Score the imported TheoBERT cases with the automatic scorer of theobert-eval.md, from a predictions "
            "file or a local Hugging Face fill-mask model (the 'theobert' extra), and print the results per type, "
            "category and difficulty with bootstrap intervals.")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--predictions", metavar="FILE", help="JSON predictions or the suite's results file.")
        source.add_argument("--model", metavar="DIR", help="A local masked-LM directory (config.json, weights, vocab).")
        parser.add_argument("--k", type=int, default=None, help="One k for every case (default: each case's own k).")
        parser.add_argument("--cases", default="", help="Comma-separated case ids (default: every imported case).")
        parser.add_argument("--exclude", default="", help="Comma-separated case ids to leave out.")
        parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples for the intervals.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["k"] is not None and options["k"] < 1:
            raise CommandError("--k must be at least 1")
        queryset = theobert_cases()
        wanted = [c.strip() for c in options["cases"].split(",") if c.strip()]
        if wanted:
            queryset = queryset.filter(case_id__in=wanted)
            unknown = sorted(set(wanted) - set(queryset.values_list("case_id", flat=True)))
            if unknown:
                raise CommandError(f"--cases: no imported TheoBERT case {', '.join(unknown)}")
        excluded = [c.strip() for c in options["exclude"].split(",") if c.strip()]
        cases = list(queryset.exclude(case_id__in=excluded))
        if not cases:
            raise CommandError("no TheoBERT cases to score: import an eval.json first (manage.py import_data)")
        try:
            if options["predictions"]:
                source: Any = PredictionsFile(options["predictions"])
                kind, name = TheoBertRun.Source.FILE, options["predictions"]
            else:
                from evaluations.theobert.fillmask import FillMaskModel

                source = FillMaskModel(options["model"])
                kind, name = TheoBertRun.Source.MODEL, options["model"]
            with tqdm(total=len(cases), desc="scoring", unit="case", disable=options["no_progress"],
                      file=self.stderr._out) as bar:
                run = theobert_run_score(source=source, kind=kind, source_name=name, cases=cases, k=options["k"],
                                         exclude=excluded, progress=bar)
        except PredictionError as exc:
            raise CommandError(str(exc)) from exc
        summary = theobert_run_summary(run, n_resamples=options["resamples"])
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(f"TheoBERT run #{run.pk}: {run.label}, {summary['cases']} cases")
        for row in summary["groups"]:
            if row["axis"] == "cell":
                continue
            low, high = row["interval"] or (float("nan"), float("nan"))
            mrr = "" if row["mrr"] is None else f"  MRR {row['mrr']:.3f}"
            self.stdout.write(
                f"  {row['axis']:<10} {row['group']:<24} {row['passed']:>4}/{row['cases']:<4} "
                f"pass {row['pass_rate']:.1%} [{low:.1%}, {high:.1%}]{mrr}  critical {row['critical_failures']}"
            )
