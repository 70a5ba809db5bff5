"""Turn a cycle's stored scores into the plain records the report builder takes (the selector step)."""
from __future__ import annotations

import platform
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from annotations.models import Annotation, CalibrationCycle, CycleItem, GoldScore, SubScore
from evaluations.judge.selectors import judge_decisive_raw_scores
from evaluations.models import JudgeRun, RubricSubDimension

from ..selectors import cycle_assignment_completeness
from .build import Rating, UnitInfo, calibration_report_build

NO_TRADITION = "none"


@dataclass(frozen=True)
class ReportInputs:
    units: list[UnitInfo]
    ratings: list[Rating]
    judge: dict[tuple[str, str], int]
    gold: dict[tuple[str, str], int]
    rater_key: dict[str, str]  # pseudonym → email (shown to admins on the page, never exported)


def judge_run_for_cycle(*, cycle: CalibrationCycle, run_id: int | None = None) -> JudgeRun | None:
    """The judge run to compare with: the one asked for, else the newest finished run on the cycle's rubric."""
    runs = JudgeRun.objects.filter(rubric_id=cycle.rubric_id)
    if run_id is not None:
        return runs.filter(pk=run_id).first()
    return (runs.filter(status__in=[JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED], scored_items__gt=0)
            .order_by("-created_at", "-id").first())


def report_inputs(*, cycle: CalibrationCycle, run: JudgeRun | None) -> ReportInputs:
    """Units, expert ratings (submitted only), the judge's decisive scores and current gold, in seven queries."""
    subs: dict[str, list[str]] = {}
    for dimension, key in (RubricSubDimension.objects.filter(dimension__rubric_id=cycle.rubric_id)
                           .order_by("dimension__order", "order").values_list("dimension__key", "key")):
        subs.setdefault(dimension, []).append(key)
    items = CycleItem.objects.filter(cycle=cycle).values_list(
        "id", "response_id", "response__test_case__dimension", "response__test_case__tradition__key",
        "response__test_case__difficulty")
    units: list[UnitInfo] = []
    by_key: dict[tuple[str, str], UnitInfo] = {}
    response_to_item: dict[int, str] = {}
    for item_id, response_id, dimension, tradition, difficulty in items:
        response_to_item[response_id] = str(item_id)
        for key in subs.get(dimension, []):
            unit = UnitInfo(str(item_id), key, dimension, tradition or NO_TRADITION, difficulty)
            units.append(unit)
            by_key[unit.key] = unit

    experts = sorted(set(SubScore.objects.filter(
        annotation__assignment__cycle=cycle, annotation__status=Annotation.Status.SUBMITTED,
    ).values_list("annotation__assignment__expert_id", "annotation__assignment__expert__email")))
    pseudonym = {expert_id: f"R{index + 1:02d}" for index, (expert_id, _) in enumerate(experts)}
    rater_key = {pseudonym[expert_id]: email for expert_id, email in experts}
    ratings = []
    for item_id, expert_id, key, score in SubScore.objects.filter(
        annotation__assignment__cycle=cycle, annotation__status=Annotation.Status.SUBMITTED,
    ).values_list("annotation__assignment__item_id", "annotation__assignment__expert_id", "key", "score"):
        rated = by_key.get((str(item_id), key))
        if rated is not None:
            ratings.append(Rating(rated, pseudonym[expert_id], score))

    judge: dict[tuple[str, str], int] = {}
    if run is not None:
        raw = judge_decisive_raw_scores(run=run, response_ids=response_to_item)
        for response_id, scores in raw.items():
            item = response_to_item[response_id]
            judge.update({(item, key): score for key, score in scores.items() if (item, key) in by_key})

    gold = {
        (str(item_id), key): score
        for item_id, key, score in GoldScore.objects.filter(
            decision__item__cycle=cycle, decision__is_current=True).values_list("decision__item_id", "key", "score")
        if (str(item_id), key) in by_key
    }
    return ReportInputs(units=units, ratings=ratings, judge=judge, gold=gold, rater_key=rater_key)


def software_versions() -> dict[str, str]:
    """Versions of what computed the numbers, for the JSON export."""
    versions = {"python": platform.python_version()}
    for package in ("django", "numpy", "scipy", "krippendorff", "scikit-learn"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are in the lock file
            versions[package] = "unknown"
    return versions


def cycle_report(*, cycle: CalibrationCycle, run_id: int | None = None, n_resamples: int = 1000,
                 seed: int = 20260101) -> tuple[dict[str, Any], ReportInputs, JudgeRun | None]:
    """The calibration report of a cycle against a judge run (the newest suitable one by default)."""
    run = judge_run_for_cycle(cycle=cycle, run_id=run_id)
    inputs = report_inputs(cycle=cycle, run=run)
    meta = {
        "cycle": cycle.name, "cycle_id": cycle.pk, "rubric_version": cycle.rubric.version,
        "judge_run": run.pk if run else None,
        "judge_models": {"primary": run.primary_model, "fallback": run.fallback_model,
                         "secondary": run.secondary_model} if run else None,
        "judge_score_used": "the decisive result per response: secondary judge when self-preference applies, "
                            "else the fallback judge when the primary failed, else the primary judge",
        "software": software_versions(),
        "raters": "pseudonymous codes R01, R02, … (the key is shown to admins on the report page only)",
    }
    report = calibration_report_build(inputs.ratings, judge=inputs.judge, gold=inputs.gold, units=inputs.units,
                                      n_resamples=n_resamples, seed=seed, meta=meta)
    report["completeness"] = cycle_assignment_completeness(cycle=cycle)  # withdrawn assignments counted by reason
    return report, inputs, run
