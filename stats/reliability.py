"""The IRR summary of one panel's ratings: every coefficient the report shows, as JSON-ready plain data.

A coefficient that has no value for the data (no pairable unit, one category only, one rater) is ``None``
and the ``warnings`` list says why; NaN never leaves this module. Cohen's κ is reported only when exactly
two raters rated. Fleiss' κ uses Gwet's (2014) generalisation to a varying number of raters per unit
(see :mod:`stats.kappa`), so missing ratings need no imputation and no unit is dropped for them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from stats.agreement import weighted_observed_agreement
from stats.alpha import DEFAULT_ALPHA_MIN, Level, check_level, krippendorff_alpha, leave_one_rater_out
from stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bootstrap_alpha
from stats.gwet import gwet_ac_from_counts
from stats.kappa import fleiss_kappa_from_counts
from stats.matrix import (
    FloatArray,
    UndefinedCoefficientError,
    as_reliability_matrix,
    resolve_categories,
    value_counts,
)
from stats.pairwise import KappaWeights, cohen_kappa_from_confusion, pairwise_confusion
from stats.weights import tolerance_weights


def reliability_summary(
    matrix: npt.ArrayLike,
    *,
    level: Level = "ordinal",
    categories: Sequence[float] | None = None,
    rater_labels: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha_min: float = DEFAULT_ALPHA_MIN,
    strata: Sequence[object] | None = None,
    seed: int | np.random.Generator | None = None,
) -> dict[str, Any]:
    """Return α (with bootstrap CI and P(α < α_min)), agreement, Fleiss' κ, Gwet's AC1/AC2 and Cohen's κ.

    Sources: Krippendorff (2011); Hayes & Krippendorff (2007); Fleiss (1971) / Gwet (2014); Gwet (2014);
    Cohen (1960, 1968). ``n_resamples=0`` turns the bootstrap off. Example: the 2011 paper's 4 × 12 data at
    the ordinal level → ``{"krippendorff_alpha": 0.8154, "n_pairable_units": 11, ...}``.
    """
    level = check_level(level)
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    cat_list = cats.tolist()
    labels = list(rater_labels) if rater_labels is not None else [str(i) for i in range(data.shape[0])]
    warnings: list[str] = []

    rated_rows = (~np.isnan(data)).any(axis=1)
    alpha = krippendorff_alpha(data, level, cat_list)
    warnings.extend(alpha.warnings)
    summary: dict[str, Any] = {
        "level": level,
        "categories": [_plain(c) for c in cat_list],
        "n_units": alpha.n_units,
        "n_raters": int(rated_rows.sum()),
        "n_ratings": int((~np.isnan(data)).sum()),
        "n_pairable_units": alpha.n_pairable_units,
        "n_unpairable_units": alpha.n_unpairable_units,
        "n_values_pairable": alpha.n_values_pairable,
        "krippendorff_alpha": alpha.alpha,
        "alpha_ci": None,
        "alpha_below_min_probability": None,
        "alpha_min": alpha_min,
    }

    if n_resamples > 0 and alpha.alpha is not None:
        boot = bootstrap_alpha(
            data, level, categories=cat_list, n_resamples=n_resamples, confidence=confidence,
            strata=strata, alpha_min=alpha_min, seed=seed,
        )
        warnings.extend(f"bootstrap: {w}" for w in boot.warnings)
        if boot.ci_low is not None and boot.ci_high is not None:
            summary["alpha_ci"] = [boot.ci_low, boot.ci_high]
        summary["alpha_below_min_probability"] = boot.below_min_probability
        summary["bootstrap"] = {
            "n_resamples": boot.n_resamples,
            "n_degenerate": boot.n_degenerate,
            "confidence": confidence,
            "method": "percentile; units resampled with replacement"
            + (" within strata" if strata is not None else ""),
            "n_strata": boot.n_strata,
            "seed": seed if isinstance(seed, int) else None,
        }
    elif n_resamples > 0:
        warnings.append("alpha_ci: no bootstrap because alpha itself is undefined")
        summary["bootstrap"] = None
    else:
        warnings.append("alpha_ci: bootstrap turned off (0 resamples)")
        summary["bootstrap"] = None

    def coefficient(name: str, compute: Callable[[], float]) -> float | None:
        try:
            value = compute()
        except UndefinedCoefficientError as exc:
            warnings.append(f"{name}: undefined — {exc}")
            return None
        if not math.isfinite(value):
            warnings.append(f"{name}: undefined for these data")
            return None
        return value

    # The same functions as percent_agreement, fleiss_kappa and gwet_ac, on one table of value counts.
    counts = value_counts(data, cats)
    summary["percent_agreement"] = coefficient(
        "percent_agreement", lambda: weighted_observed_agreement(counts, tolerance_weights(cats, 0.0))
    )
    summary["within_one_agreement"] = coefficient(
        "within_one_agreement", lambda: weighted_observed_agreement(counts, tolerance_weights(cats, 1.0))
    )
    summary["fleiss_kappa"] = coefficient("fleiss_kappa", lambda: fleiss_kappa_from_counts(counts))
    summary["gwet_ac1"] = coefficient("gwet_ac1", lambda: gwet_ac_from_counts(counts, cats, "identity"))
    summary["gwet_ac2"] = {
        "linear": coefficient("gwet_ac2 (linear)", lambda: gwet_ac_from_counts(counts, cats, "linear")),
        "quadratic": coefficient("gwet_ac2 (quadratic)", lambda: gwet_ac_from_counts(counts, cats, "quadratic")),
    }

    rated = np.flatnonzero(rated_rows)
    if rated.size == 2:
        summary["cohen_kappa"] = _cohen_kappas(data[rated], cat_list, coefficient)
        summary["cohen_kappa_raters"] = [labels[rated[0]], labels[rated[1]]]
    elif rated.size < 2:
        warnings.append("fewer than two raters rated anything, so no agreement can be measured")

    if rated.size >= 3:
        summary["leave_one_rater_out"] = [
            {"rater": r.rater, "alpha_without": r.alpha_without, "change": r.change}
            for r in leave_one_rater_out(data[rated], level, cat_list, [labels[i] for i in rated])
        ]
    else:
        summary["leave_one_rater_out"] = []
    summary["warnings"] = warnings
    return summary


def _cohen_kappas(
    pair: FloatArray, categories: list[float], coefficient: Callable[[str, Callable[[], float]], float | None]
) -> dict[str, float | None]:
    """Unweighted, linear and quadratic κ of a two-rater matrix, from one confusion table (stats.pairwise).

    Equal to :func:`stats.kappa.cohen_kappa` (scikit-learn) to 1e-12, without its per-call validation cost.
    """
    confusion = pairwise_confusion(pair, categories)[0, 1]

    def kappa(weights: KappaWeights) -> float:
        if confusion.sum() == 0:
            raise UndefinedCoefficientError("no unit was rated by both raters")
        value = float(cohen_kappa_from_confusion(confusion, categories, weights))
        if math.isnan(value):
            raise UndefinedCoefficientError(
                "both raters used one and the same category for every unit, so chance agreement is 1"
            )
        return value

    return {
        "unweighted": coefficient("cohen_kappa (unweighted)", lambda: kappa(None)),
        "linear": coefficient("cohen_kappa (linear)", lambda: kappa("linear")),
        "quadratic": coefficient("cohen_kappa (quadratic)", lambda: kappa("quadratic")),
    }


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)
