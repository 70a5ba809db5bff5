"""Scoring runs: predictions from a source → the scorer's verdicts, stored in one transaction; and their summary."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, TypedDict

from django.db import transaction

from evaluations.models import TheoBertCase, TheoBertResult, TheoBertRun
from evaluations.theobert.scoring import CaseSpec, Prediction, score_case
from evaluations.theobert.sources import PredictionError, PredictionSource
from stats.bootstrap import bootstrap_mean_interval, named_seed_sequence

RANKED_KEPT = 25  # candidates stored per case: enough for near_miss (k+2) and total_miss (20)
SUMMARY_RESAMPLES = 500  # the stored summary's bootstrap (the audit page shows it)


class TheoBertGroupRow(TypedDict):
    """One group of a run's summary: overall, a type, category or difficulty, or a type × category × difficulty cell."""

    axis: str
    group: str
    cases: int
    passed: int
    pass_rate: float
    interval: list[float] | None
    mrr: float | None
    critical_failures: int
    errors: dict[str, int]


class TheoBertSummary(TypedDict):
    """A TheoBERT run's summary, as stored in TheoBertRun.summary."""

    run: int
    label: str
    cases: int
    groups: list[TheoBertGroupRow]


def case_specs(cases: Iterable[TheoBertCase], k: int | None = None) -> list[CaseSpec]:
    specs = [CaseSpec.of(case) for case in cases]
    return [replace(spec, k=k) for spec in specs] if k else specs


@transaction.atomic
def theobert_run_score(*, source: PredictionSource, kind: str, source_name: str, cases: Sequence[TheoBertCase] | None = None,
                       k: int | None = None, exclude: Iterable[str] = (), rescored_from: TheoBertRun | None = None,
                       user: Any = None, progress: Any = None) -> TheoBertRun:
    """Score every given case (all imported cases by default, minus `exclude`) and store the run; nothing is stored
    when any prediction cannot be scored (the error names the case)."""
    if k is not None and k < 1:
        raise ValueError("k must be at least 1")
    excluded = sorted(set(exclude))
    chosen = list(cases) if cases is not None else list(TheoBertCase.objects.exclude(case_id__in=excluded))
    if not chosen:
        raise PredictionError("no TheoBERT cases to score: import an eval.json first (manage.py import_data)")
    specs = case_specs(chosen, k)
    top = max(RANKED_KEPT, max(spec.k for spec in specs) + 3)
    run = TheoBertRun.objects.create(label=source.label, source=kind, source_name=source_name, k_override=k,
                                     excluded_cases=excluded, rescored_from=rescored_from,
                                     created_by=user if getattr(user, "pk", None) else None)
    by_id = {case.case_id: case for case in chosen}
    rows = []
    for spec, prediction in zip(specs, source.predict(specs, top=top, progress=progress), strict=True):
        rows.append(_result(run, by_id[spec.case_id], spec, prediction))
    TheoBertResult.objects.bulk_create(rows, batch_size=500)
    run.summary = theobert_run_summary(run, n_resamples=SUMMARY_RESAMPLES)
    run.save(update_fields=["summary"])
    return run


def theobert_run_summary_stored(run: TheoBertRun) -> TheoBertSummary:
    """The run's stored summary; a run scored before summaries were stored gets its summary computed once, here."""
    if run.summary is None:
        run.summary = theobert_run_summary(run, n_resamples=SUMMARY_RESAMPLES)
        TheoBertRun.objects.filter(pk=run.pk).update(summary=run.summary)
    return run.summary


def _result(run: TheoBertRun, case: TheoBertCase, spec: CaseSpec, prediction: Prediction) -> TheoBertResult:
    verdict = score_case(spec, prediction)
    ranked = [[word, None if math.isnan(p) else p] for word, p in prediction.ranked[:RANKED_KEPT]]
    return TheoBertResult(
        run=run, case=case, passed=verdict.passed, rank=verdict.rank, mrr=verdict.mrr, margin=verdict.margin,
        confidence=verdict.confidence, share_in_set=verdict.share_in_set, error_class=verdict.error_class,
        critical_failure=verdict.critical_failure, critical_tokens=list(verdict.critical_tokens), k=spec.k,
        ranked=ranked, probabilities=dict(prediction.probabilities),
    )


def theobert_run_summary(run: TheoBertRun, *, n_resamples: int = 1000, seed: int = 0) -> TheoBertSummary:
    """Pass rate (with a percentile bootstrap interval over cases), MRR, critical failures and error classes,
    overall and per type, category, difficulty and type × category × difficulty."""
    results = list(run.results.select_related("case"))
    groups: dict[tuple[str, str], list[TheoBertResult]] = defaultdict(list)
    for result in results:
        case = result.case
        groups[("overall", "all")].append(result)
        groups[("type", case.type)].append(result)
        groups[("category", case.category)].append(result)
        groups[("difficulty", case.difficulty)].append(result)
        groups[("cell", f"{case.type} × {case.category} × {case.difficulty}")].append(result)
    rows: list[TheoBertGroupRow] = []
    for (axis, name), members in sorted(groups.items()):
        passes = [1.0 if r.passed else 0.0 for r in members]
        interval = bootstrap_mean_interval(passes, n_resamples=n_resamples,
                                           seed=named_seed_sequence(seed, f"{axis}:{name}"))
        mrrs = [r.mrr for r in members if r.mrr is not None]
        errors: dict[str, int] = defaultdict(int)
        for r in members:
            if r.error_class:
                errors[r.error_class] += 1
        rows.append({
            "axis": axis, "group": name, "cases": len(members), "passed": int(sum(passes)),
            "pass_rate": sum(passes) / len(members), "interval": list(interval) if interval else None,
            "mrr": sum(mrrs) / len(mrrs) if mrrs else None,
            "critical_failures": sum(r.critical_failure for r in members), "errors": dict(sorted(errors.items())),
        })
    return {"run": run.pk, "label": run.label, "cases": len(results), "groups": rows}
