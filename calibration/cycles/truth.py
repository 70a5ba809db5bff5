"""What the experts' "truth" for a response is (ARCHITECTURE decision log, 2026-11, calibrated leaderboard).

Per response and sub-dimension: the current adjudicated gold score where there is one, else the mean of the
panel's submitted scores (skips, drafts and withdrawn assignments do not count). The response's composite is
the judge's formula (methodology §5.4.1, `evaluations.judge.leaderboard.case_composite`): Σ score/3 × weight/100 over
its dimension's sub-dimensions, a number in [0, 1]; a response missing a sub-dimension has no truth.

`response_truths(cycle=…, basis="panel")` is that rule; `basis="gold"` keeps only responses whose every
sub-dimension was adjudicated (the sensitivity check: gold-only against panel mean).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from statistics import median
from typing import Any, Literal

from django.db.models import QuerySet

from annotations.models import Annotation, Assignment, CalibrationCycle, GoldScore, SubScore
from evaluations.models import RubricSubDimension, RubricVersion

Basis = Literal["panel", "gold"]
SOURCE_GOLD = "gold"
SOURCE_PANEL = "panel_mean"
SOURCE_MIXED = "gold_and_panel"


@dataclass(frozen=True)
class ResponseTruth:
    response_id: int
    item_id: int
    dimension: str
    scores: dict[str, float]  # sub-dimension key → truth on the 0–3 scale
    composite: float  # Σ score/3 × weight/100, in [0, 1]
    source: str  # gold, panel_mean, or gold_and_panel (some sub-dimensions adjudicated)
    n_raters: int  # experts whose submitted scores count
    inclusion_probability: float | None
    inclusion_basis: str
    item_source: str  # the cycle item's source (random, edge_…, carried, cross)


def composite_of(scores: dict[str, float], sub_weights: dict[str, Decimal]) -> float | None:
    """Methodology §5.4.1 on (possibly fractional) 0–3 scores; None when a sub-dimension is missing."""
    if set(sub_weights) - set(scores):
        return None
    return float(sum(scores[key] / 3 * float(weight) / 100 for key, weight in sub_weights.items()))


def submitted_sub_scores() -> QuerySet[SubScore]:
    """The sub-scores the truth counts: submitted annotations of first assignments not withdrawn (skips and drafts
    have none; re-served test–retest scorings never count). Every reader of the experts' scores filters from here."""
    return SubScore.objects.counted().filter(annotation__status=Annotation.Status.SUBMITTED).exclude(
        annotation__assignment__status=Assignment.Status.WITHDRAWN)


def sub_weights(*, rubric_id: int) -> dict[str, dict[str, Decimal]]:
    """{dimension key: {sub-dimension key: weight}} of a rubric version (one query): the weights of `composite_of`
    (a dimension the rubric lacks reads as no sub-dimensions)."""
    weights: dict[str, dict[str, Decimal]] = defaultdict(dict)
    for dimension, key, weight in RubricSubDimension.objects.filter(dimension__rubric_id=rubric_id).values_list(
            "dimension__key", "key", "weight"):
        weights[dimension][key] = weight
    return weights


def response_truths(*, cycle: CalibrationCycle, basis: Basis = "panel") -> dict[int, ResponseTruth]:
    """{response id: its expert truth} for the cycle's items that have one (three queries)."""
    return response_truths_over(cycles=CalibrationCycle.objects.filter(pk=cycle.pk), rubric=cycle.rubric,
                                basis=basis)


def response_truths_over(*, cycles: QuerySet[CalibrationCycle], rubric: RubricVersion,
                         basis: Basis = "panel") -> dict[int, ResponseTruth]:
    """The same rule over several cycles at once (three queries): a response scored in more than one cycle takes
    its newest cycle's truth (by creation, then id); `rubric` gives the sub-dimension weights."""
    weights = sub_weights(rubric_id=rubric.pk)
    # An item without a submitted score or a gold score has no truth: the items come with those rows (no query of
    # their own), each row carrying its item's cycle order, response, dimension, source and inclusion probability.
    item_fields = ("cycle__created_at", "cycle_id", "id", "response_id", "response__test_case__dimension", "source",
                   "inclusion_probability", "inclusion_basis")
    items: dict[int, tuple[Any, ...]] = {}
    panel: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    raters: dict[int, set[int]] = defaultdict(set)
    via_assignment = [f"annotation__assignment__item__{name}" for name in item_fields]
    for *item, expert_id, key, score in submitted_sub_scores().filter(
        annotation__assignment__cycle__in=cycles).values_list(
        *via_assignment, "annotation__assignment__expert_id", "key", "score"
    ).iterator(chunk_size=5000):
        items[item[2]] = tuple(item)
        panel[item[2]][key].append(score)
        raters[item[2]].add(expert_id)
    gold: dict[int, dict[str, int]] = defaultdict(dict)
    for *item, key, score in GoldScore.objects.filter(
        decision__item__cycle__in=cycles, decision__is_current=True
    ).values_list(*[f"decision__item__{name}" for name in item_fields], "key", "score"):
        items[item[2]] = tuple(item)
        gold[item[2]][key] = score

    truths: dict[int, ResponseTruth] = {}
    for _created, _cycle_id, item_id, response_id, dimension, source, probability, inclusion_basis in sorted(
            items.values(), key=lambda row: row[:3]):
        subs = weights.get(dimension)
        if not subs:
            continue
        scores: dict[str, float] = {}
        kinds: set[str] = set()
        for key in subs:
            if key in gold[item_id]:
                scores[key] = float(gold[item_id][key])
                kinds.add(SOURCE_GOLD)
            elif basis == "panel" and panel[item_id].get(key):
                values = panel[item_id][key]
                scores[key] = sum(values) / len(values)
                kinds.add(SOURCE_PANEL)
        composite = composite_of(scores, subs)
        if composite is None:
            continue
        truths[response_id] = ResponseTruth(  # items in cycle order: a newer cycle's truth replaces an older one
            response_id=response_id, item_id=item_id, dimension=dimension, scores=scores, composite=composite,
            source=SOURCE_MIXED if len(kinds) > 1 else kinds.pop(), n_raters=len(raters[item_id]),
            inclusion_probability=probability, inclusion_basis=inclusion_basis, item_source=source,
        )
    return truths


def median_seconds_per_item(*, cycle: CalibrationCycle) -> float | None:
    """The median active seconds an expert spent on a submitted item of the cycle (for expert-hour estimates)."""
    seconds = [s for s in Annotation.objects.counted().filter(
        assignment__cycle=cycle, status=Annotation.Status.SUBMITTED, seconds_spent__gt=0,
    ).values_list("seconds_spent", flat=True)]
    return float(median(seconds)) if seconds else None
