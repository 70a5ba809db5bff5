"""The language cells of a cycle's report (issue 35): the cycle's units grouped by their case's language (primary
subtag: "es" holds es-419 and es-MX; a translation counts in its own language), and for each the experts' α
(ordinal) with its unit-bootstrap interval, stratified by dimension like the overall group, and the judge's α
against the expert majority. A language with fewer than `MIN_ITEMS` items, or scored by fewer than two experts,
gets words instead of a figure: α on a handful of items is a number without a meaning. Computed with the report
from the same rows and stored in its snapshot, only when the cycle's cases are in two or more languages (with one,
the cell is the overall group)."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from threadpoolctl import threadpool_limits

from evaluations.domain import language_name
from stats.bootstrap import named_seed
from stats.intervals import agreement_interval

from ..cycles.ratings import Rating, UnitInfo
from .build import CATEGORIES, against_reference, expert_matrix, majority_row, ratings_collect
from .schema import LanguageCell

MIN_ITEMS = 5  # fewer items in a language: no α, words instead
MIN_PAIRABLE_UNITS = 2  # an α needs units scored by two experts; an interval needs two of them


def _few(name: str, tag: str, n_items: int, n_experts: int, pairable: int) -> str | None:
    """Why a language's cell has no α, in words; None when it has enough."""
    label = f"{name} ({tag})"
    if n_items < MIN_ITEMS:
        return (f"Only {n_items} item{'s' if n_items != 1 else ''} in {label}: too few for α (at least {MIN_ITEMS} "
                "items are needed); these scores still count in the overall α.")
    if n_experts < 2 or pairable < MIN_PAIRABLE_UNITS:
        return (f"{label}: {n_experts} expert{'s' if n_experts != 1 else ''} scored its {n_items} items and "
                f"{pairable} unit{'s' if pairable != 1 else ''} were scored by two or more: too few for α.")
    return None


def _cell(tag: str, members: list[UnitInfo], experts: list[str], values: dict, judge: dict[tuple[str, str], int],
          *, n_resamples: int, seed: int) -> LanguageCell:
    keys = [u.key for u in members]
    data = expert_matrix(keys, experts, values)
    rated = ~np.isnan(data).all(axis=1) if data.size else np.zeros(0, dtype=bool)
    data = data[rated]
    n_items = len({u.item for u in members})
    pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum()) if data.size else 0
    name = language_name(tag)
    words = _few(name, tag, n_items, int(rated.sum()), pairable)
    alpha = judge_alpha = None
    alpha_ci = judge_ci = None
    n_judged = sum(1 for k in keys if k in judge)
    if words is None:
        strata = [u.dimension for u in members] if len({u.dimension for u in members}) > 1 else None
        expert_alpha = agreement_interval(data, "krippendorff_alpha", level="ordinal", categories=CATEGORIES,
                                          n_resamples=max(n_resamples, 1), strata=strata,
                                          seed=named_seed(seed, f"language:{tag}"))
        alpha = expert_alpha.estimate
        alpha_ci = None if n_resamples == 0 or expert_alpha.interval is None else list(expert_alpha.interval)
        judge_row = np.array([judge.get(k, np.nan) for k in keys], dtype=float)
        against = against_reference(judge_row, majority_row(data), strata=strata, n_resamples=n_resamples,
                                    seed=named_seed(seed, f"language-judge:{tag}"), intervals=("krippendorff_alpha",))
        judge_alpha, judge_ci, n_judged = against.alpha, against.alpha_ci, against.n_units
        if alpha is None:
            words = f"{name} ({tag}): α is undefined (every expert gave the same score on every unit)."
    return LanguageCell(language=tag, name=name, n_items=n_items, n_units=len(members), n_experts=int(rated.sum()),
                        n_pairable_units=pairable,
                        alpha=alpha, alpha_ci=alpha_ci, n_judged=n_judged, judge_alpha=judge_alpha,
                        judge_alpha_ci=judge_ci, words=words)


def language_cells(
    ratings: Iterable[Rating], *, judge: dict[tuple[str, str], int], units: Iterable[UnitInfo], n_resamples: int,
    seed: int,
) -> list[LanguageCell] | None:
    """One cell per case language that has units, in tag order; None when the cycle has one language only."""
    all_units, values, experts = ratings_collect(ratings, units)
    grouped: dict[str, list[UnitInfo]] = defaultdict(list)
    for unit in sorted(all_units.values(), key=lambda u: (u.language, u.dimension, u.item, u.sub_dimension)):
        grouped[unit.language or "en"].append(unit)
    if len(grouped) < 2:
        return None
    with threadpool_limits(limits=1, user_api="blas"):
        return [_cell(tag, members, experts, values, judge, n_resamples=n_resamples, seed=seed)
                for tag, members in sorted(grouped.items())]
