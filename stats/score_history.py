"""Scores over time: the change of a model's score between two leaderboard snapshots, measured on the cases both
scored, and mean equating across rotations — pure numpy/scipy, no Django.

A snapshot's score is the difficulty-weighted mean of a model's per-case composites. Two snapshots on different
held-out rotations scored different cases, so the difference of their scores mixes the model's (or judge's) change
with the rotations' difficulty. Methodology §8.7 keeps *anchor* cases in every rotation; the change is measured on
the cases both snapshots scored (the anchors when the rotations differ, every case when they do not):

    Δ = Σ w_i (b_i − a_i) / Σ w_i         over the shared cases i, w_i the case's difficulty weight,

and a later snapshot's *anchor-equated* score is the earlier one's plus Δ — mean equating through a common-item
(anchor) set, chained snapshot to snapshot (Kolen & Brennan 2014, "Test Equating, Scaling, and Linking", §4.2
chained linear/mean equating under the common-item non-equivalent groups design; mean equating sets the slope to 1).
Δ's standard error treats the shared cases as a sample (the weighted mean of paired differences with the ratio
estimator's variance, Cochran 1977 §6.3): se² = Σ w_i² (d_i − Δ)² / (Σ w_i)² · n / (n − 1), and the interval is
Δ ± t_{n−1} · se. A change "exceeds its interval" when that interval excludes 0. An equated score's interval is the
first snapshot's half-width and every chained Δ's half-width added in quadrature (independent pieces, normal theory).

Example:
    >>> c = paired_change([0.5, 0.6, 0.7], [0.6, 0.7, 0.8], [1.0, 1.0, 1.0])
    >>> round(c.estimate, 3), c.n
    (0.1, 3)
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class Change:
    """Δ between two snapshots on n shared cases; lower/upper None with fewer than 2 shared cases."""

    estimate: float | None
    se: float | None
    lower: float | None
    upper: float | None
    n: int

    @property
    def exceeds_interval(self) -> bool:
        """The interval excludes 0: a change beyond what case sampling explains."""
        return self.lower is not None and self.upper is not None and (self.lower > 0 or self.upper < 0)


def paired_change(before: Sequence[float] | np.ndarray, after: Sequence[float] | np.ndarray,
                  weights: Sequence[float] | np.ndarray | None = None, *, confidence: float = 0.95) -> Change:
    """Weighted mean of after − before over paired cases, with its t interval (module docstring)."""
    a = np.asarray(before, dtype=float)
    b = np.asarray(after, dtype=float)
    w = np.ones_like(a) if weights is None else np.asarray(weights, dtype=float)
    if a.shape != b.shape or a.shape != w.shape or a.ndim != 1:
        raise ValueError("before, after and weights: expected 1-d arrays of one length")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(np.isfinite(w)) and np.all(w > 0)):
        raise ValueError("before, after and weights: expected finite scores and positive weights")
    n = int(a.size)
    if n == 0:
        return Change(None, None, None, None, 0)
    d = b - a
    estimate = float((w * d).sum() / w.sum())
    if n < 2:
        return Change(estimate, None, None, None, n)
    se = float(math.sqrt((w ** 2 * (d - estimate) ** 2).sum() / w.sum() ** 2 * n / (n - 1)))
    q = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, n - 1))
    return Change(estimate, se, estimate - q * se, estimate + q * se, n)


def chain_equated(first_score: float, first_half_width: float | None,
                  changes: Sequence[Change]) -> list[tuple[float | None, float | None]]:
    """(equated score, half-width) for the first snapshot and after each change; None after a change with no
    shared case (the chain breaks there)."""
    out: list[tuple[float | None, float | None]] = [(first_score, first_half_width)]
    score: float | None = first_score
    var: float | None = None if first_half_width is None else first_half_width ** 2
    for change in changes:
        if score is None or change.estimate is None:
            score, var = None, None
        else:
            score = score + change.estimate
            half = None if change.lower is None else (change.upper or 0.0) - change.estimate
            var = None if var is None or half is None else var + half ** 2
        out.append((score, None if var is None else math.sqrt(var)))
    return out
