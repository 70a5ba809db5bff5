"""Intraclass correlations ICC(2,1) and ICC(3,1) (Shrout & Fleiss 1979) with their F-based intervals.

Data are the usual raters × units matrix (rows = raters, see :mod:`stats.matrix`); the ANOVA needs every
rater on every unit, so units with a missing rating are left out (complete cases) and the count of units
dropped is reported. Two-way ANOVA without replication, n targets (units) and k judges (raters):
MSR (between units), MSC (between raters), MSE (residual).

* ICC(2,1), two-way random effects, absolute agreement, single rater:
  (MSR − MSE) / (MSR + (k − 1) MSE + k (MSC − MSE) / n).
* ICC(3,1), two-way mixed effects, consistency, single rater: (MSR − MSE) / (MSR + (k − 1) MSE).

Intervals: McGraw & Wong (1996), Table 7 (the same formulas as Shrout & Fleiss 1979, eqs. 6–7 and
pingouin's ``intraclass_corr``); ICC(2,1) uses Satterthwaite's approximate degrees of freedom.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from stats.matrix import UndefinedCoefficientError, as_reliability_matrix


@dataclass(frozen=True)
class IccResult:
    """One ICC with its interval; ``low``/``high`` are None when the F quantiles are undefined."""

    value: float | None  # None when undefined (e.g. no variance between units and none left over)
    low: float | None
    high: float | None
    n_units: int
    n_raters: int
    n_units_dropped: int
    confidence: float


@dataclass(frozen=True)
class IccPair:
    icc_2_1: IccResult
    icc_3_1: IccResult


def icc(matrix: npt.ArrayLike, *, confidence: float = 0.95) -> IccPair:
    """ICC(2,1) and ICC(3,1) of a raters × units matrix, complete units only.

    Raises :class:`UndefinedCoefficientError` (one line) with fewer than two raters or two complete units,
    or when every score is the same. Example (Shrout & Fleiss 1979, Table 2: 6 targets × 4 judges):
    ICC(2,1) = 0.290, ICC(3,1) = 0.715.
    """
    from scipy.special import fdtri  # the F quantile; scipy.stats would cost seconds to import
    data = as_reliability_matrix(matrix)
    complete = ~np.isnan(data).any(axis=0)
    x = data[:, complete].T  # units × raters
    n, k = x.shape
    dropped = int(data.shape[1] - n)
    if k < 2:
        raise UndefinedCoefficientError("ICC undefined: it needs at least two raters")
    if n < 2:
        raise UndefinedCoefficientError(
            f"ICC undefined: it needs two or more units rated by all {k} raters ({n} found)")
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ss_err = max(ss_total - ss_rows - ss_cols, 0.0)
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    if ss_total <= 1e-12:
        raise UndefinedCoefficientError("ICC undefined: every score is the same")
    tail = (1.0 - confidence) / 2.0

    denom3 = msr + (k - 1) * mse
    icc3 = (msr - mse) / denom3 if denom3 > 0 else float("nan")
    low3 = high3 = None
    if mse > 0 and np.isfinite(icc3):
        f0 = msr / mse
        df1, df2 = n - 1, (n - 1) * (k - 1)
        fl = f0 / fdtri(df1, df2, 1 - tail)
        fu = f0 * fdtri(df2, df1, 1 - tail)
        low3, high3 = (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)

    denom2 = msr + (k - 1) * mse + k * (msc - mse) / n
    icc2 = (msr - mse) / denom2 if denom2 > 0 else float("nan")
    low2 = high2 = None
    if mse > 0 and np.isfinite(icc2):
        a = k * icc2 / (n * (1 - icc2)) if icc2 < 1 else np.inf
        b = 1 + k * icc2 * (n - 1) / (n * (1 - icc2)) if icc2 < 1 else np.inf
        v_num = (a * msc + b * mse) ** 2
        v_den = (a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1))
        if np.isfinite(v_num) and v_den > 0:
            v = v_num / v_den
            f_star = fdtri(n - 1, v, 1 - tail)
            f_star2 = fdtri(v, n - 1, 1 - tail)
            low2 = n * (msr - f_star * mse) / (f_star * (k * msc + (k * n - k - n) * mse) + n * msr)
            high2 = n * (f_star2 * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_star2 * msr)

    def result(value: float, low: float | None, high: float | None) -> IccResult:
        if not np.isfinite(value):
            return IccResult(value=None, low=None, high=None, n_units=n, n_raters=k, n_units_dropped=dropped,
                             confidence=confidence)
        finite = low is not None and high is not None and np.isfinite(low) and np.isfinite(high)
        return IccResult(value=float(value), low=float(low) if finite else None,  # type: ignore[arg-type]
                         high=float(high) if finite else None,  # type: ignore[arg-type]
                         n_units=n, n_raters=k, n_units_dropped=dropped, confidence=confidence)

    return IccPair(icc_2_1=result(icc2, low2, high2), icc_3_1=result(icc3, low3, high3))
