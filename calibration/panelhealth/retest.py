"""Intra-rater (test–retest) agreement on the panel health page: the real pairs of a first scoring and its blind
re-scoring (annotations/retests.py) → `stats.raters.test_retest` → formatted rows, with words where a figure cannot
be given. The re-scorings are read here only: every other reader leaves them out (`Assignment.objects.counted()`).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import QuerySet

from annotations.models import Annotation, Assignment, CalibrationCycle, Panel, SubScore
from stats.raters import RetestResult, test_retest

from .format import fmt, fmt_interval

MIN_PAIRS = 10  # test_retest's own minimum: below it, words instead of a figure


@dataclass(frozen=True)
class RetestRow:
    name: str
    n_items: int
    n_pairs: int
    exact: str
    exact_interval: str
    kappa: str
    kappa_interval: str
    note: str


@dataclass(frozen=True)
class RetestFigures:
    rows: list[RetestRow]
    panel: RetestRow | None
    note: str


@dataclass(frozen=True)
class RetestPair:
    expert_id: int
    item_id: int
    key: str
    first: int
    second: int


def _submitted(qs: QuerySet[SubScore]) -> QuerySet[SubScore]:
    return qs.filter(annotation__status=Annotation.Status.SUBMITTED).exclude(
        annotation__assignment__status=Assignment.Status.WITHDRAWN)


def retest_pairs(*, panel: Panel, cycles: list[CalibrationCycle]) -> list[RetestPair]:
    """Every sub-dimension scored both times — first assignment and its re-served one both submitted (two queries)."""
    second = _submitted(SubScore.objects.filter(
        annotation__assignment__retest_of__isnull=False, annotation__assignment__panel=panel,
        annotation__assignment__cycle__in=cycles)).values_list(
        "annotation__assignment__retest_of_id", "annotation__assignment__expert_id",
        "annotation__assignment__item_id", "key", "score")
    seconds = {(first_id, key): (expert_id, item_id, score) for first_id, expert_id, item_id, key, score in second}
    if not seconds:
        return []
    firsts = _submitted(SubScore.objects.filter(
        annotation__assignment_id__in={first_id for first_id, _ in seconds})).values_list(
        "annotation__assignment_id", "key", "score")
    pairs = []
    for first_id, key, score in firsts:
        found = seconds.get((first_id, key))
        if found is not None:
            pairs.append(RetestPair(found[0], found[1], key, score, found[2]))
    return sorted(pairs, key=lambda p: (p.expert_id, p.item_id, p.key))


def _row(name: str, result: RetestResult) -> RetestRow:
    return RetestRow(name=name, n_items=result.n_items, n_pairs=result.n_pairs, exact=fmt(result.exact),
                     exact_interval=fmt_interval(result.exact_interval), kappa=fmt(result.kappa),
                     kappa_interval=fmt_interval(result.kappa_interval), note=result.note)


def retest_figures(*, panel: Panel, cycles: list[CalibrationCycle], names: dict[int, str]) -> RetestFigures:
    """Each expert's and the panel's intra-rater agreement (exact, quadratic κ) with 95 % intervals, or why not."""
    pairs = retest_pairs(panel=panel, cycles=cycles)
    if not pairs:
        on = [c for c in cycles if c.retest_enabled]
        if not on:
            note = ("Test–retest is off in every cycle of this scope (a cycle setting), so no item was re-served and "
                    "intra-rater agreement is not reported.")
        else:
            days, share = min(c.retest_min_days for c in on), min(c.retest_share for c in on)
            note = (f"No re-served item has been scored a second time yet: an expert gets about {float(share):.0%} of "
                    f"their submitted items again, each at least {days} days after submitting it (none before they "
                    f"have submitted {math.ceil(0.5 / float(share))} items), so intra-rater agreement is not "
                    "reported.")
        return RetestFigures(rows=[], panel=None, note=note)
    by_expert: dict[int, list[RetestPair]] = defaultdict(list)
    for pair in pairs:
        by_expert[pair.expert_id].append(pair)
    rows = [_row(names.get(expert_id, "expert"),
                 test_retest([p.first for p in ps], [p.second for p in ps], [p.item_id for p in ps]))
            for expert_id, ps in sorted(by_expert.items())]
    # The panel pools every expert's pairs; a cluster is one re-served item of one expert.
    panel_row = _row("Panel (all experts)", test_retest([p.first for p in pairs], [p.second for p in pairs],
                                                       [f"{p.expert_id}:{p.item_id}" for p in pairs]))
    few = sum(1 for r in rows if r.n_pairs < MIN_PAIRS)
    note = (f"{len(pairs)} sub-scores scored twice by {len(rows)} expert(s), blind, on {panel_row.n_items} re-served "
            "item(s). Re-served scores are not counted anywhere else.")
    if few:
        note += (f" {few} expert(s) have fewer than {MIN_PAIRS} re-scored sub-scores: their figures are words, not "
                 "numbers, until more re-served items are scored.")
    return RetestFigures(rows=rows, panel=panel_row, note=note)
