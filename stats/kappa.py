"""Cohen's κ (two raters; unweighted, linear, quadratic) and Fleiss' κ (many raters, missing ratings allowed).

Cohen's κ is scikit-learn's ``cohen_kappa_score`` with ``labels=`` set to the full category set, so a
category neither rater used still counts, after an explicit check that every value is one of those labels
(scikit-learn would otherwise drop an out-of-range pair silently). scikit-learn's weights use the distance
between label *positions* (|i − j| or (i − j)²), which equals the value distance for equally spaced codes
such as 0–3.

Fleiss' κ is the generalisation to a varying number of raters per unit given by Gwet (2014), Handbook of
Inter-Rater Reliability, 4th ed., ch. 2 (irrCAC ``fleiss.kappa.raw``): p_a averages the per-unit agreement
over units with two or more ratings, and the category shares π_k average r_ik / r_i over all rated units.
With every unit rated by the same number of raters it is exactly Fleiss (1971).
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from stats.agreement import weighted_observed_agreement
from stats.matrix import UndefinedCoefficientError, as_reliability_matrix, resolve_categories, value_counts

KappaWeights = Literal["linear", "quadratic"] | None


def cohen_kappa(
    rater_a: npt.ArrayLike,
    rater_b: npt.ArrayLike,
    categories: Sequence[float],
    weights: KappaWeights = None,
) -> float:
    """Return Cohen's κ between two raters over the units both rated; ``weights`` None, "linear" or "quadratic".

    κ = (p_o − p_e) / (1 − p_e); weighted κ = 1 − Σ w_ij o_ij / Σ w_ij e_ij (Cohen 1960; Cohen 1968).
    Source: scikit-learn ``cohen_kappa_score``. Example: the 2 × 2 table 20/5/10/15 (Wikipedia "Cohen's
    kappa") gives κ = 0.4.
    """
    a = np.asarray(rater_a, dtype=np.float64).ravel()
    b = np.asarray(rater_b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"the two raters rate different numbers of units ({a.size} and {b.size})")
    cats = np.asarray(categories, dtype=np.float64)
    both = ~np.isnan(a) & ~np.isnan(b)
    for name, values in (("first", a), ("second", b)):
        rated = values[~np.isnan(values)]
        outside = rated[~np.isin(rated, cats)]
        if outside.size:
            raise ValueError(
                f"the {name} rater's value {outside[0]:g} is not one of the categories "
                f"[{', '.join(f'{c:g}' for c in cats)}]"
            )
    if not both.any():
        raise UndefinedCoefficientError("no unit was rated by both raters")
    # Imported here: scikit-learn takes ~0.4 s to import, which every web worker's first request paid
    # (the URLconf reaches this module through the report API) whether it computed a κ or not.
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(a[both], b[both], labels=cats, weights=weights, replace_undefined_by=np.nan)
    if np.isnan(value):
        raise UndefinedCoefficientError(
            "both raters used one and the same category for every unit, so chance agreement is 1"
        )
    return float(value)


def fleiss_kappa_from_counts(counts: npt.ArrayLike) -> float:
    """Return Fleiss' κ from a units × categories table of rater counts (rows may sum to different totals).

    κ = (p_a − p_e) / (1 − p_e), p_e = Σ_k π_k², π_k = mean_i r_ik / r_i (Fleiss 1971, eq. 2–5; Gwet 2014
    for unequal r_i). Example: Wikipedia's "Fleiss' kappa" table (10 subjects, 14 raters) gives 0.210.
    """
    r = np.asarray(counts, dtype=np.float64)
    r_i = r.sum(axis=1)
    rated = r_i > 0
    if not (r_i >= 2).any():
        raise UndefinedCoefficientError("no unit was rated by two or more raters")
    p_a = weighted_observed_agreement(r, np.eye(r.shape[1]))
    pi = (r[rated] / r_i[rated, np.newaxis]).mean(axis=0)
    p_e = float((pi**2).sum())
    if p_e >= 1.0 - 1e-12:
        raise UndefinedCoefficientError("all ratings fall in one category, so chance agreement is 1")
    return (p_a - p_e) / (1.0 - p_e)


def fleiss_kappa(matrix: npt.ArrayLike, categories: Sequence[float] | None = None) -> float:
    """Return Fleiss' κ of a raters × units matrix (np.nan = missing), generalised to unequal raters per unit.

    Source: Gwet (2014) ch. 2 / irrCAC ``fleiss.kappa.raw``; cac.raw4raters gives 0.76117.
    Example: ``fleiss_kappa([[1, 2, 1], [1, 2, 2]])`` → 0.333.
    """
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    return fleiss_kappa_from_counts(value_counts(data, cats))
