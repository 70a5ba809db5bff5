"""Agreement between judge runs on the same responses (methodology §6.3.2 judge comparison, §8.4 run-to-run):
several judge models side by side, or several runs of one judge. Per dimension, Krippendorff's α (ordinal) of the
runs' decisive raw sub-dimension scores with its bootstrap interval, read against the 0.67 / 0.80 thresholds, and
each response's spread (the standard deviation of its composite across runs); responses whose spread reaches
`SPREAD_REVIEW` are listed for expert review. Numbers from `stats.reliability`; stored as a bias-check `evidence.Snapshot`."""
from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from annotations.models import CalibrationCycle, CycleItem
from evaluations.judge.selectors import judge_decisive_raw_scores, judge_decisive_scored
from evaluations.models import JudgeRun, ModelResponse
from evaluations.selectors import rubric_active
from evidence.models import Snapshot
from stats.reliability import reliability_summary

from ..cycles.services import cycle_assignments_create
from .payloads import AgreementGroup, AgreementPayload, ReviewItem, agreement_payload
from .store import CheckKind, bias_check_record

ALPHA_MIN, ALPHA_GOOD = 0.667, 0.80
SPREAD_REVIEW = 0.15  # SD of the composite (0–1) across runs: about half a point on the 0–3 scale
ALL = "all dimensions"


def runs_agreement(*, runs: list[JudgeRun], n_resamples: int = 1000, seed: int = 0,
                   alpha_min: float = ALPHA_MIN) -> AgreementPayload:
    """α among the runs per dimension (and over all), with intervals and verdicts against `alpha_min` (0.667 for
    different judges; a judge's agreement with itself is held to 0.80), and the high-spread responses."""
    if len(runs) < 2:
        raise ValueError("compare at least two judge runs")
    raw = [judge_decisive_raw_scores(run=run) for run in runs]
    composites = [judge_decisive_scored(run=run) for run in runs]
    common = set.intersection(*(set(scores) for scores in raw))
    dimension_of = dict(ModelResponse.objects.filter(pk__in=list(common)).values_list("pk", "test_case__dimension"))
    units: dict[str, list[tuple[int, str]]] = {}
    for response_id in sorted(common):
        keys = sorted(set.intersection(*(set(r[response_id]) for r in raw)))
        for key in keys:
            units.setdefault(dimension_of[response_id], []).append((response_id, key))
            units.setdefault(ALL, []).append((response_id, key))
    groups: dict[str, AgreementGroup] = {}
    for name in sorted(units, key=lambda k: (k == ALL, k)):
        matrix = np.array([[r[rid][key] for rid, key in units[name]] for r in raw], dtype=float)
        summary = reliability_summary(matrix, level="ordinal", categories=[0, 1, 2, 3],
                                      rater_labels=[f"run {run.pk}" for run in runs], n_resamples=n_resamples,
                                      seed=seed)
        alpha, ci = summary["krippendorff_alpha"], summary.get("alpha_ci")
        low = ci[0] if ci else alpha
        verdict = ("undefined" if alpha is None else "pass" if low is not None and low >= alpha_min
                   else "fail" if ci and ci[1] < alpha_min else "uncertain" if ci else
                   ("pass" if alpha >= alpha_min else "fail"))
        groups[name] = {"n_units": len(units[name]), "alpha": alpha, "alpha_ci": ci, "verdict": verdict,
                        "flagged": alpha is None or alpha < alpha_min, "good": alpha is not None and alpha >= ALPHA_GOOD,
                        "exact_agreement": summary.get("percent_agreement")}
    spread = []
    for response_id in sorted(common):
        found = [c[response_id].composite for c in composites if response_id in c]
        values = [float(v) for v in found if v is not None]
        if len(values) == len(runs):
            spread.append((float(np.std(values, ddof=1)), response_id, dimension_of[response_id], values))
    spread.sort(reverse=True)
    review: list[ReviewItem] = [{"response": rid, "dimension": dim, "sd": sd, "composites": values}
              for sd, rid, dim, values in spread if sd >= SPREAD_REVIEW]
    return {"runs": [run.pk for run in runs], "models": [run.primary_model for run in runs],
            "thresholds": {"alpha_min": alpha_min, "alpha_good": ALPHA_GOOD, "spread_review": SPREAD_REVIEW},
            "n_responses": len(common), "groups": groups,
            "mean_item_sd": float(np.mean([s[0] for s in spread])) if spread else None,
            "review": review, "flagged": any(g["flagged"] for g in groups.values())}


def agreement_check(*, runs: list[JudgeRun], kind: str, requested_by: User | None = None,
                    n_resamples: int = 1000) -> Snapshot:
    """Compute and store the agreement of `runs` (kind: judges — different models — or runs of one judge)."""
    # a judge must agree with itself more than with another judge: run-to-run is held to the "good" mark
    payload = runs_agreement(runs=runs, n_resamples=n_resamples,
                             alpha_min=ALPHA_GOOD if kind == CheckKind.RUNS else ALPHA_MIN)
    return bias_check_record(kind=kind, judge_run=runs[0], flagged=payload["flagged"], n=payload["n_responses"],
                             payload=payload, requested_by=requested_by)


@transaction.atomic
def review_cycle_commit(*, name: str, check: Snapshot, created_by: User | None = None) -> CalibrationCycle:
    """Queue a judge comparison's high-spread responses for expert review: a cycle of exactly those responses
    (item source "edge_judge"), assigned to their traditions' panels like any cycle."""
    responses = [row["response"] for row in agreement_payload(check).get("review", [])]
    if not responses:
        raise ValidationError("this check lists no response for review")
    if CalibrationCycle.objects.filter(name=name).exists():
        raise ValidationError(f"a cycle named {name!r} already exists")
    cycle = CalibrationCycle.objects.create(
        name=name, rubric=check.judge_run.rubric if check.judge_run else rubric_active(), seed=check.pk,
        min_per_dimension=1, created_by=created_by,
        draw_report={"kind": "judge_disagreement_review", "check": check.pk, "items": len(responses)})
    # Picked on purpose (the judges disagree on them), not a random sample: no inclusion probability.
    CycleItem.objects.bulk_create(CycleItem(cycle=cycle, response_id=r, source=CycleItem.Source.EDGE_JUDGE,
                                            inclusion_basis=CycleItem.InclusionBasis.EDGE_CASE, stratum=["review"])
                                  for r in responses)
    cycle_assignments_create(cycle=cycle)
    return cycle
