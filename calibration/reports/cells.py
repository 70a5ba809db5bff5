"""The validation cells of a cycle's report (methodology §6.4–6.5 made live): for every dimension × tradition the
judge's agreement with the expert majority — α with its interval against the 0.67 target and the 0.80 mark of a
validated judge — with how many units, items and experts it rests on. Computed with the report, from the same
rows, and stored in its snapshot; the validation page reads them."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from threadpoolctl import threadpool_limits

from stats.bootstrap import named_seed

from ..cycles.ratings import Rating, UnitInfo, ValidationCell
from .build import TARGETS, against_reference, expert_matrix, majority_row, ratings_collect

VALIDATED = 0.80  # §6.4: α ≥ 0.80 for a judge to stand in for the panel; 0.67 is the acceptable minimum
MIN_UNITS = 30  # fewer judged units than this: the interval of a handful of units says too little to validate


def validation_status_of(alpha: float | None, ci: list[float] | None, n: int | None = None) -> str:
    """validated (interval ≥ 0.80), acceptable (interval ≥ 0.67), not validated (interval < 0.67), uncertain
    (the interval straddles 0.67), too few units (fewer than 30 judged, whatever α), or no data."""
    if alpha is None:
        return "no data"
    if n is not None and n < MIN_UNITS:
        return "too few units"
    low, high = ci if ci else (alpha, alpha)
    if low >= VALIDATED:
        return "validated"
    if low >= TARGETS["alpha"]:
        return "acceptable"
    if high < TARGETS["alpha"]:
        return "not validated"
    return "uncertain"


def validation_cells(
    ratings: Iterable[Rating], *, judge: dict[tuple[str, str], int], units: Iterable[UnitInfo], n_resamples: int,
    seed: int,
) -> list[ValidationCell]:
    """One cell per dimension × tradition that has units, in (dimension, tradition) order."""
    all_units, values, experts = ratings_collect(ratings, units)
    cells: dict[tuple[str, str], list[UnitInfo]] = defaultdict(list)
    for unit in sorted(all_units.values(), key=lambda u: (u.dimension, u.tradition, u.item, u.sub_dimension)):
        cells[(unit.dimension, unit.tradition)].append(unit)
    out = []
    with threadpool_limits(limits=1, user_api="blas"):
        for (dimension, tradition), members in sorted(cells.items()):
            keys = [u.key for u in members]
            data = expert_matrix(keys, experts, values)
            judge_row = np.array([judge.get(k, np.nan) for k in keys], dtype=float)
            # α and its interval only: the other coefficients' bootstraps would be thrown away (same bits either way).
            against = against_reference(judge_row, majority_row(data), strata=None, n_resamples=n_resamples,
                                         seed=named_seed(seed, f"validation:{dimension}:{tradition}"),
                                         intervals=("krippendorff_alpha",))
            out.append(ValidationCell(
                dimension=dimension, tradition=tradition, n_units=len(members),
                n_items=len({u.item for u in members}),
                n_experts=int((~np.isnan(data)).any(axis=1).sum()) if data.size else 0,
                n_judged=against.n_units, alpha=against.alpha, alpha_ci=against.alpha_ci,
                status=validation_status_of(against.alpha, against.alpha_ci, against.n_units),
            ))
    return out
