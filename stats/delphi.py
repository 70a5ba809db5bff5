"""Delphi consensus statistics, weight renormalisation and rank-order sensitivity (pure numpy/scipy).

Conventions, stated once so that reports can cite them:

* Quartiles use linear interpolation between order statistics (Hyndman & Fan 1996, definition 7;
  numpy's default `percentile(..., method="linear")`, also R's default `quantile(type=7)`).
  Example: weights [10, 20, 30, 40] → Q1 17.5, median 25, Q3 32.5, IQR 15.
* A weight has converged when its IQR is strictly below the threshold (FaithBench methodology §4.3:
  "IQR < 10%", in percentage points of a 100-point allocation).
* Agreement share = fraction of experts whose weight is within ±5 points of the median, inclusive.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np


@dataclass(frozen=True)
class WeightSummary:
    """Round statistics of one weight across the experts who answered."""

    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    mean: float
    share_within_5: float
    converged: bool
    median_change: float | None = None
    iqr_change: float | None = None


def weight_summary(
    values: Sequence[float],
    *,
    previous: WeightSummary | None = None,
    threshold: float = 10.0,
    band: float = 5.0,
) -> WeightSummary:
    """Median, quartiles (type 7), IQR, mean, share within ±band of the median, convergence (IQR < threshold).

    Example: weight_summary([20, 25, 25, 30]) → median 25, Q1 23.75, Q3 26.25, IQR 2.5, share 1.0, converged.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("no answers for this weight")
    q1, median, q3 = np.percentile(x, [25, 50, 75], method="linear")
    iqr = float(q3 - q1)
    share = float(np.mean(np.abs(x - median) <= band + 1e-9))
    return WeightSummary(
        n=int(x.size),
        median=float(median),
        q1=float(q1),
        q3=float(q3),
        iqr=iqr,
        mean=float(x.mean()),
        share_within_5=share,
        converged=iqr < threshold,
        median_change=None if previous is None else float(median - previous.median),
        iqr_change=None if previous is None else iqr - previous.iqr,
    )


@dataclass(frozen=True)
class RoundSummary:
    """Per-weight statistics of one round, attrition and overall convergence."""

    weights: dict[str, WeightSummary]
    invited: int
    responded: int
    converged: bool
    not_converged: list[str] = field(default_factory=list)

    @property
    def attrition(self) -> float:
        return 0.0 if self.invited == 0 else 1 - self.responded / self.invited


def round_summary(
    allocations: Sequence[Mapping[str, float]],
    *,
    invited: int,
    previous: RoundSummary | None = None,
    threshold: float = 10.0,
) -> RoundSummary:
    """Summarise a round: one allocation {weight key: points} per responding expert."""
    keys = sorted({k for allocation in allocations for k in allocation})
    weights = {
        key: weight_summary(
            [a[key] for a in allocations if key in a],
            previous=None if previous is None else previous.weights.get(key),
            threshold=threshold,
        )
        for key in keys
    }
    not_converged = [k for k, s in weights.items() if not s.converged]
    return RoundSummary(
        weights=weights,
        invited=invited,
        responded=len(allocations),
        converged=bool(weights) and not not_converged,
        not_converged=not_converged,
    )


@dataclass(frozen=True)
class Renormalisation:
    """Weights scaled to sum to exactly `total`, and what was done to get there."""

    weights: dict[str, Decimal]
    raw_sum: Decimal
    scale: Decimal
    adjusted: dict[str, Decimal]  # key → amount added by largest-remainder rounding


def renormalise(weights: Mapping[str, float | Decimal], *, total: int = 100, places: int = 2) -> Renormalisation:
    """Scale weights proportionally to sum to `total`, rounding with the largest-remainder method.

    Example: {a: 30, b: 30, c: 30} → 33.34, 33.33, 33.33 (sum 100.00; the first key breaks the tie).
    """
    if not weights:
        raise ValueError("no weights to renormalise")
    raw = {k: Decimal(str(v)) for k, v in weights.items()}
    if any(v < 0 for v in raw.values()):
        raise ValueError("weights must not be negative")
    raw_sum = sum(raw.values(), Decimal(0))
    if raw_sum == 0:
        raise ValueError("weights sum to zero; nothing to scale")
    unit = Decimal(1).scaleb(-places)
    # Exact arithmetic: w·total/unit is a finite decimal, so its quotient and remainder by the raw sum
    # are exact (no 28-digit rounding deciding ties).
    scaled = {k: v * total / unit for k, v in raw.items()}
    whole = {k: scaled[k] // raw_sum for k in raw}
    remainder = {k: scaled[k] % raw_sum for k in raw}
    missing_units = total * 10**places - int(sum(whole.values()))
    keys = list(raw)
    order = sorted(keys, key=lambda k: (-remainder[k], keys.index(k)))
    adjusted = {k: unit for k in order[:missing_units]}
    result = {k: ((whole[k] * unit) + adjusted.get(k, Decimal(0))).quantize(unit, rounding=ROUND_HALF_EVEN) for k in raw}
    return Renormalisation(
        weights=result,
        raw_sum=raw_sum,
        scale=(Decimal(total) / raw_sum),
        adjusted={k: v for k, v in adjusted.items()},
    )


def ranking(scores: np.ndarray) -> np.ndarray:
    """Rank positions (0 = best) of items by descending score; ties keep input order."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(order.size)
    return ranks


def weighted_scores(per_dimension: np.ndarray, weights: Sequence[float] | np.ndarray) -> np.ndarray:
    """Model scores Σ_d w_d × s_{m,d} / Σ w (rows: models, columns: dimensions)."""
    w = np.asarray(weights, dtype=float)
    return np.asarray(per_dimension, dtype=float) @ w / w.sum()


def kendall_tau(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Kendall's τ-b between two score vectors over the same items (scipy.stats.kendalltau)."""
    if len(a) < 2:
        return float("nan")
    from scipy import stats as sps  # ~0.8 s to import: not in every web worker's first request (the URLconf)

    return float(sps.kendalltau(a, b).statistic)


@dataclass(frozen=True)
class Sensitivity:
    """Result of perturbing each weight by ±delta points and renormalising."""

    perturbations: int
    rank_changes: int
    min_tau: float
    details: list[dict]

    @property
    def change_rate(self) -> float:
        return 0.0 if self.perturbations == 0 else self.rank_changes / self.perturbations


def weight_sensitivity(per_dimension: np.ndarray, weights: Sequence[float], *, delta: float = 5.0) -> Sensitivity:
    """Perturb every weight by ±delta (floored at 0), renormalise to 100, and count ranking changes.

    Methodology §6.3.1 ("varying dimension weights ± 5 %, measuring rank-order stability").
    """
    base_w = np.asarray(weights, dtype=float)
    base_scores = weighted_scores(per_dimension, base_w)
    base_rank = ranking(base_scores)
    details, changes, taus = [], 0, []
    for index in range(base_w.size):
        for sign in (+1, -1):
            w = base_w.copy()
            w[index] = max(0.0, w[index] + sign * delta)
            w = w * 100.0 / w.sum()
            scores = weighted_scores(per_dimension, w)
            changed = bool(np.any(ranking(scores) != base_rank))
            tau = kendall_tau(base_scores, scores)
            changes += changed
            taus.append(tau)
            details.append({"weight": index, "delta": sign * delta, "rank_changed": changed, "tau": tau})
    return Sensitivity(perturbations=len(details), rank_changes=changes,
                       min_tau=float(np.nanmin(taus)) if taus else float("nan"), details=details)
