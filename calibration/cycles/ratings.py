"""A cycle's ratings as the plain records every analysis of the cycle takes — the units (item × sub-dimension with
its facets), the experts' submitted scores under pseudonyms, the judge's decisive scores (averaged over a series of
repeated runs) and current gold — with the majority rule (the lower median) and the shape of the judge's validation
cell a cycle's report stores. The report (`calibration/reports`) and the validation checks (`calibration/validation`)
both read them here, so neither imports the other."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from annotations.models import Annotation, CalibrationCycle, CycleItem, GoldScore, SubScore
from evaluations.judge.selectors import judge_decisive_raw_scores, judge_run_latest_finished, judge_run_series
from evaluations.models import JudgeRun, RubricSubDimension

NO_TRADITION = "none"  # the tradition of tradition-neutral cases in units and cells


@dataclass(frozen=True)
class UnitInfo:
    """What a unit is: an item (by its id) and one sub-dimension, with the item's facets."""

    item: str
    sub_dimension: str
    dimension: str
    tradition: str  # "none" for tradition-neutral cases
    difficulty: str
    language: str = "en"  # issue 35: the case's language, its primary subtag ("es" for es-419)

    @cached_property  # asked for tens of thousands of times per report; a frozen dataclass has a __dict__
    def key(self) -> tuple[str, str]:
        return (self.item, self.sub_dimension)


@dataclass(frozen=True)
class Rating:
    unit: UnitInfo
    rater: str
    score: int


def majority(scores: Sequence[int]) -> int:
    """Median of the experts' scores; between two middle scores, the lower one (see module docstring)."""
    ordered = sorted(scores)
    return ordered[(len(ordered) - 1) // 2]


@dataclass
class ValidationCell:
    """The judge against the expert majority in one dimension × tradition (computed with the report by
    calibration/reports/cells.py, read by the validation room)."""

    dimension: str
    tradition: str
    n_units: int
    n_items: int
    n_experts: int
    n_judged: int
    alpha: float | None
    alpha_ci: list[float] | None
    status: str  # validated / acceptable / uncertain / not validated / no data


@dataclass(frozen=True)
class ReportInputs:
    units: list[UnitInfo]
    ratings: list[Rating]
    judge: dict[tuple[str, str], int]
    gold: dict[tuple[str, str], int]
    rater_key: dict[str, str]  # pseudonym → email (shown to admins on the page, never exported)
    judge_runs: list[int] = field(default_factory=list)  # the runs whose scores `judge` holds (a series: averaged)


def judge_run_for_cycle(*, cycle: CalibrationCycle, run_id: int | None = None) -> JudgeRun | None:
    """The judge run to compare with: the one asked for (any status), else the newest finished run on the cycle's
    rubric (`judge_run_latest_finished`)."""
    if run_id is not None:
        return JudgeRun.objects.filter(rubric_id=cycle.rubric_id, pk=run_id).first()
    return judge_run_latest_finished(rubric_id=cycle.rubric_id)


def judge_runs_averaged(*, run: JudgeRun) -> list[JudgeRun]:
    """The runs whose scores stand for `run` in a report: its series' finished runs (§8.4), else itself."""
    runs = judge_run_series(run=run) if run.status == JudgeRun.Status.FINISHED else []
    return runs if len(runs) >= 2 else [run]


def judge_scores_averaged(*, run: JudgeRun, response_ids: Iterable[int],
                          runs: list[JudgeRun] | None = None) -> dict[tuple[int, str], int]:
    """{(response id, sub-dimension): the judge's decisive raw score}; for a run in a series of repeated runs
    (§8.4), the mean over the series' finished runs that scored it, rounded half up to the 0–3 scale."""
    runs = runs if runs is not None else judge_runs_averaged(run=run)
    wanted = set(response_ids)
    sums: dict[tuple[int, str], list[int]] = {}
    for member in runs:
        for response_id, scores in judge_decisive_raw_scores(run=member, response_ids=wanted).items():
            for key, score in scores.items():
                sums.setdefault((response_id, key), []).append(score)
    return {unit: int(math.floor(sum(values) / len(values) + 0.5)) for unit, values in sums.items()}


def report_inputs(*, cycle: CalibrationCycle, run: JudgeRun | None) -> ReportInputs:
    """Units, expert ratings (submitted only), the judge's decisive scores and current gold, in seven queries."""
    subs: dict[str, list[str]] = {}
    for dimension, key in (RubricSubDimension.objects.filter(dimension__rubric_id=cycle.rubric_id)
                           .order_by("dimension__order", "order").values_list("dimension__key", "key")):
        subs.setdefault(dimension, []).append(key)
    items = CycleItem.objects.filter(cycle=cycle).values_list(
        "id", "response_id", "response__test_case__dimension", "response__test_case__tradition__key",
        "response__test_case__difficulty", "response__test_case__language")
    units: list[UnitInfo] = []
    by_key: dict[tuple[str, str], UnitInfo] = {}
    response_to_item: dict[int, str] = {}
    for item_id, response_id, dimension, tradition, difficulty, language in items:
        response_to_item[response_id] = str(item_id)
        for key in subs.get(dimension, []):
            unit = UnitInfo(str(item_id), key, dimension, tradition or NO_TRADITION, difficulty,
                            (language or "en").split("-")[0].lower())
            units.append(unit)
            by_key[unit.key] = unit

    # First scorings only: a re-served (test–retest) item never counts twice.
    experts = sorted(set(SubScore.objects.counted().filter(
        annotation__assignment__cycle=cycle, annotation__status=Annotation.Status.SUBMITTED,
    ).values_list("annotation__assignment__expert_id", "annotation__assignment__expert__email")))
    pseudonym = {expert_id: f"R{index + 1:02d}" for index, (expert_id, _) in enumerate(experts)}
    rater_key = {pseudonym[expert_id]: email for expert_id, email in experts}
    ratings = []
    for item_id, expert_id, key, score in SubScore.objects.counted().filter(
        annotation__assignment__cycle=cycle, annotation__status=Annotation.Status.SUBMITTED,
    ).values_list("annotation__assignment__item_id", "annotation__assignment__expert_id", "key", "score"):
        rated = by_key.get((str(item_id), key))
        if rated is not None:
            ratings.append(Rating(rated, pseudonym[expert_id], score))

    judge: dict[tuple[str, str], int] = {}
    averaged = judge_runs_averaged(run=run) if run is not None else []
    if run is not None:
        for (response_id, key), score in judge_scores_averaged(run=run, response_ids=response_to_item,
                                                               runs=averaged).items():
            item = response_to_item[response_id]
            if (item, key) in by_key:
                judge[(item, key)] = score

    gold = {
        (str(item_id), key): score
        for item_id, key, score in GoldScore.objects.filter(
            decision__item__cycle=cycle, decision__is_current=True).values_list("decision__item_id", "key", "score")
        if (str(item_id), key) in by_key
    }
    return ReportInputs(units=units, ratings=ratings, judge=judge, gold=gold, rater_key=rater_key,
                        judge_runs=[r.pk for r in averaged])
