"""Rater diagnostics: each rater's systematic bias against the rest of the panel, and the judge's
Bland–Altman summary against the expert median.

*Bias of a rater* (the "mean signed difference from the rest of the panel"): on every unit the rater
scored together with at least one other rater, d_u = x_ru − mean of the other raters' scores on u. The
rater's bias is the mean of d_u, with a t interval over those units (units are the independent draws;
Student's t with n − 1 degrees of freedom). A rater is *flagged* when the whole interval lies more than
``flag_margin`` (default 0.5 scale points) away from 0 — systematically higher (low > 0.5) or lower
(high < −0.5) — so a rater is not flagged for a large but uncertain difference.

*Bland–Altman* (Bland & Altman 1986, Lancet i:307–310): differences d_u = judge − median of the experts'
scores on u; mean difference, SD (n − 1), and the 95 % limits of agreement mean ± 1.96 SD.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from stats.matrix import as_reliability_matrix

DEFAULT_FLAG_MARGIN = 0.5
MAX_SHARE_POINTS = 20  # scale points listed per rater when the categories are not given


@dataclass(frozen=True)
class RaterBias:
    """One rater's mean signed difference from the rest of the panel, with its interval and score shares."""

    rater: str
    n_units: int
    mean_difference: float | None
    low: float | None
    high: float | None
    flagged: bool
    shares: dict[str, float]


@dataclass(frozen=True)
class BlandAltman:
    n_units: int
    mean_difference: float | None
    sd: float | None
    lower_limit: float | None
    upper_limit: float | None


def rater_bias(
    matrix: npt.ArrayLike,
    *,
    rater_labels: Sequence[str] | None = None,
    categories: Sequence[float] | None = None,
    confidence: float = 0.95,
    flag_margin: float = DEFAULT_FLAG_MARGIN,
) -> list[RaterBias]:
    """Each rater's bias against the others (see the module docstring) and the share of each scale point.

    Example: three raters who agree except that one scores every unit +1 → that rater's mean difference is
    +1 (interval [1, 1]) and it is flagged; the two others get −0.5 each and are not flagged (high = −0.5).
    """
    from scipy.special import stdtrit  # Student's t quantile; scipy.stats would cost seconds to import
    data = as_reliability_matrix(matrix)
    labels = list(rater_labels) if rater_labels is not None else [str(i) for i in range(data.shape[0])]
    if len(labels) != data.shape[0]:
        raise ValueError("rater_labels must name every row of the matrix")
    present = ~np.isnan(data)
    totals = np.where(present, data, 0.0).sum(axis=0)
    counts = present.sum(axis=0)
    points = _points(data, categories)
    out = []
    for r, label in enumerate(labels):
        others = counts - present[r]
        usable = present[r] & (others > 0)
        n = int(usable.sum())
        diffs = data[r, usable] - (totals[usable] - data[r, usable]) / others[usable]
        mean = low = high = None
        if n >= 1:
            mean = float(diffs.mean())
        if n >= 2:
            half = float(stdtrit(n - 1, 0.5 + confidence / 2.0) * diffs.std(ddof=1) / np.sqrt(n))
            low, high = mean - half, mean + half  # type: ignore[operator]
        flagged = low is not None and high is not None and (low > flag_margin or high < -flag_margin)
        own = data[r, present[r]]
        shares = {_label(p): float((own == p).mean()) for p in points} if own.size and points is not None else {}
        out.append(RaterBias(rater=label, n_units=n, mean_difference=mean, low=low, high=high,
                             flagged=bool(flagged), shares=shares))
    return out


def bland_altman(judge: npt.ArrayLike, experts: npt.ArrayLike) -> BlandAltman:
    """The judge's scores (one per unit) against the median of the experts' scores (raters × units).

    Units without a judge score or without any expert score are left out. Example: a judge always 0.5 above
    the experts' median → mean difference 0.5, SD 0, limits 0.5 and 0.5.
    """
    j = np.asarray(judge, dtype=np.float64)
    e = as_reliability_matrix(experts)
    if e.shape[1] != j.size:
        raise ValueError("the judge row and the experts' matrix must cover the same units")
    rated = ~np.isnan(e).all(axis=0) & ~np.isnan(j)
    n = int(rated.sum())
    if n == 0:
        return BlandAltman(n_units=0, mean_difference=None, sd=None, lower_limit=None, upper_limit=None)
    d = j[rated] - np.nanmedian(e[:, rated], axis=0)
    mean = float(d.mean())
    if n < 2:
        return BlandAltman(n_units=n, mean_difference=mean, sd=None, lower_limit=None, upper_limit=None)
    sd = float(d.std(ddof=1))
    return BlandAltman(n_units=n, mean_difference=mean, sd=sd, lower_limit=mean - 1.96 * sd,
                       upper_limit=mean + 1.96 * sd)


def _points(data: np.ndarray, categories: Sequence[float] | None) -> list[float] | None:
    if categories is not None:
        return sorted(float(c) for c in categories)
    seen = np.unique(data[~np.isnan(data)])
    return [float(v) for v in seen] if seen.size <= MAX_SHARE_POINTS else None


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
