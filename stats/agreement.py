"""Observed agreement: percent exact agreement and within-one agreement over pairable units.

Agreement is pairwise and averaged per unit, as in Gwet (2014) and irrCAC's ``pa.coeff.raw``: for each
unit rated by at least two raters, the share of its rater pairs that agree; then the mean over those units.
A unit rated once has no pair and is left out (it is counted by the caller, never silently).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from stats.matrix import (
    UndefinedCoefficientError,
    as_reliability_matrix,
    resolve_categories,
    value_counts,
)
from stats.weights import tolerance_weights


def weighted_observed_agreement(counts: npt.ArrayLike, weights: npt.ArrayLike) -> float:
    """Return p_a = mean over units with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1)), r*_ik = Σ_l w_kl r_il.

    Source: Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed., eq. for p_a with missing ratings
    (irrCAC ``gwet.ac1.raw``). With identity weights it is the percent of agreeing rater pairs per unit.
    Example: counts ``[[2, 0], [1, 1]]``, identity weights → (1 + 0) / 2 = 0.5.
    """
    r = np.asarray(counts, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    r_i = r.sum(axis=1)
    pairable = r_i >= 2
    if not pairable.any():
        raise UndefinedCoefficientError("no unit was rated by two or more raters, so no pair can agree")
    r = r[pairable]
    r_i = r_i[pairable]
    r_star = r @ w.T
    per_unit = (r * (r_star - 1.0)).sum(axis=1) / (r_i * (r_i - 1.0))
    return float(per_unit.mean())


def percent_agreement(
    matrix: npt.ArrayLike, categories: Sequence[float] | None = None, *, tolerance: float = 0.0
) -> float:
    """Return the pairwise agreement over pairable units; ``tolerance`` widens "agree" to |a − b| ≤ tolerance.

    Source: Gwet (2014) p_a (irrCAC ``pa.coeff.raw``); cac.raw4raters gives 0.8181818.
    Example: ``percent_agreement([[1, 2, 3], [1, 2, 4]])`` → 2/3.
    """
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    return weighted_observed_agreement(value_counts(data, cats), tolerance_weights(cats, tolerance))


def within_one_agreement(matrix: npt.ArrayLike, categories: Sequence[float] | None = None) -> float:
    """Return the share of rater pairs (per pairable unit, averaged) whose ratings differ by at most one point.

    Source: adjacent agreement (Stemler 2004, PARE 9(4)) computed with Gwet's (2014) per-unit p_a.
    Example: ``within_one_agreement([[0, 0, 3], [1, 3, 3]])`` → 2/3.
    """
    return percent_agreement(matrix, categories, tolerance=1.0)


def pairable_units(matrix: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Return a boolean mask of the units rated by at least two raters (the only ones that carry pairs).

    Source: Krippendorff (2011) — units with m_u < 2 are "not pairable" and drop out of α.
    Example: ``pairable_units([[1, 1], [1, np.nan]])`` → ``[True, False]``.
    """
    data = as_reliability_matrix(matrix)
    return (~np.isnan(data)).sum(axis=0) >= 2
