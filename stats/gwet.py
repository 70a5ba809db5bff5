"""Gwet's AC1 (nominal) and AC2 (weighted: identity, linear, quadratic) for many raters with missing ratings.

Implemented from Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., ch. 2–3 (the formulas of
irrCAC's ``gwet.ac1.raw``), for n units, q categories and r_ik raters putting unit i in category k:

* r*_ik = Σ_l w_kl r_il;  p_a = mean over units with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1));
* π_k = mean over rated units of r_ik / r_i;  p_e = T_w / (q (q − 1)) · Σ_k π_k (1 − π_k), T_w = Σ_kl w_kl;
* AC = (p_a − p_e) / (1 − p_e).

q is the number of *possible* categories, so pass the full scale (0–3) as ``categories``: unlike κ, AC1
changes when an unused category is added.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from stats.agreement import weighted_observed_agreement
from stats.matrix import UndefinedCoefficientError, as_reliability_matrix, resolve_categories, value_counts
from stats.weights import WeightKind, agreement_weights


def gwet_ac_from_counts(
    counts: npt.ArrayLike, category_values: npt.ArrayLike | None = None, weights: WeightKind = "identity"
) -> float:
    """Return Gwet's AC1 (identity weights) or AC2 (linear/quadratic) from a units × categories count table.

    Source: Gwet (2014) 4th ed., ch. 2–3 (irrCAC ``gwet.ac1.raw``). ``category_values`` default 1..q.
    Example: irrCAC's ``distrib.6raters`` gives AC1 = 0.4448007.
    """
    r = np.asarray(counts, dtype=np.float64)
    q = r.shape[1]
    if q < 2:
        raise UndefinedCoefficientError("Gwet's AC needs at least two possible categories")
    values = np.arange(1, q + 1) if category_values is None else np.asarray(category_values, dtype=np.float64)
    w = agreement_weights(values, weights)
    r_i = r.sum(axis=1)
    rated = r_i > 0
    p_a = weighted_observed_agreement(r, w)
    pi = (r[rated] / r_i[rated, np.newaxis]).mean(axis=0)
    p_e = float(w.sum() / (q * (q - 1)) * (pi * (1.0 - pi)).sum())
    return (p_a - p_e) / (1.0 - p_e)


def gwet_ac(
    matrix: npt.ArrayLike, categories: Sequence[float] | None = None, weights: WeightKind = "identity"
) -> float:
    """Return Gwet's AC1/AC2 of a raters × units matrix (np.nan = missing) on the given category set.

    Source: Gwet (2014) 4th ed.; irrCAC's cac.raw4raters gives AC1 0.7754 and quadratic AC2 0.914.
    Example: ``gwet_ac([[1, 2, 1], [1, 2, 2]])`` → 0.333.
    """
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    return gwet_ac_from_counts(value_counts(data, cats), cats, weights)


def gwet_ac1(matrix: npt.ArrayLike, categories: Sequence[float] | None = None) -> float:
    """Return Gwet's AC1, the unweighted (nominal) coefficient.

    Source: Gwet (2008) Br J Math Stat Psychol 61:29–48; Gwet (2014) ch. 2. Example: cac.raw4raters → 0.7754.
    """
    return gwet_ac(matrix, categories, "identity")


def gwet_ac2(matrix: npt.ArrayLike, categories: Sequence[float] | None = None, weights: WeightKind = "quadratic") -> float:
    """Return Gwet's AC2 with linear or quadratic weights on the category values.

    Source: Gwet (2014) ch. 3. Example: cac.raw4raters, quadratic weights → 0.914 (p_a 0.9753788, p_e 0.7137044).
    """
    return gwet_ac(matrix, categories, weights)
