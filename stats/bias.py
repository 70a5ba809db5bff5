"""Verbosity bias of a judge (methodology §6.2.2): how much its scores follow response length.

§6.2.2 asks for the Pearson correlation between response length and score, target |r| < 0.3, and
length-normalisation when violated. Length and quality go together in real answers, so the raw r also measures
how much longer answers are better; the number that says whether the *judge* is length-driven is the partial
correlation of judge score and length controlling for a human reference score (the experts' gold or median):
what is left of the length–score association once quality as the experts saw it is held fixed.

`length_bias` returns both, with 95 % Fisher-z intervals, Spearman's ρ, the experts' own length correlation, and
the regression adjustment behind the length-normalised score: judge = a + b·length (+ c·reference); the
adjusted score is judge − b·(length − mean length), which keeps the mean and removes the linear length effect
(holding the reference fixed when one is given). Pure numpy/scipy.

A noisy reference controls for quality only partly, so a judge that merely follows quality keeps a small partial
correlation with length when longer answers are better: in simulation (tests/stats/test_bias.py: length–quality
r ≈ 0.6, n = 60) a reference that is the mean of three experts (each off by SD 0.4) flags a fair judge in
7 panels of 200 and a length-driven judge (+0.5 points per SD of length) in 200 of 200; a single expert's score as
the reference flags the fair judge in 38 of 200. Prefer gold or the median of several experts.

Sources: Fisher (1921) z-transform, SE 1/√(n − 3 − k) for a partial correlation of order k (Anderson 2003, §4.3);
partial correlation as the correlation of OLS residuals (equivalently −P₁₂/√(P₁₁P₂₂) of the precision matrix).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

FLAG_AT = 0.3  # §6.2.2: |r| < 0.3 is "weak or no correlation"
MIN_N = 8


@dataclass(frozen=True)
class Correlation:
    r: float | None
    ci: tuple[float, float] | None
    n: int

    @property
    def undefined(self) -> bool:
        return self.r is None

    def as_dict(self) -> CorrelationJson:
        return {"r": self.r, "ci": self.ci, "n": self.n}


class CorrelationJson(TypedDict):
    r: float | None
    ci: tuple[float, float] | None
    n: int


class LengthBiasJson(TypedDict):
    """:class:`LengthBias` as stored (a bias check's payload): its fields, in order."""

    n: int
    pearson: CorrelationJson
    spearman_rho: float | None
    partial: CorrelationJson | None
    reference_pearson: CorrelationJson | None
    slope_per_100_words: float | None
    flagged: bool
    basis: str
    verdict: str
    warning: str


@dataclass(frozen=True)
class LengthBias:
    n: int
    pearson: Correlation  # judge score ~ length
    spearman_rho: float | None
    partial: Correlation | None  # judge score ~ length | reference (None without a reference)
    reference_pearson: Correlation | None  # the experts' own score ~ length
    slope_per_100_words: float | None  # b × 100: the judge's score change per 100 more words (reference held fixed)
    flagged: bool  # |partial r| ≥ 0.3 (or |r| ≥ 0.3 without a reference)
    basis: str  # "partial" or "pearson": which correlation the flag reads
    verdict: str = "undefined"  # pass / fail when the 95 % interval is clear of ±0.3, else uncertain
    warning: str = ""

    def as_dict(self) -> LengthBiasJson:
        return {
            "n": self.n, "pearson": self.pearson.as_dict(), "spearman_rho": self.spearman_rho,
            "partial": self.partial.as_dict() if self.partial is not None else None,
            "reference_pearson": self.reference_pearson.as_dict() if self.reference_pearson is not None else None,
            "slope_per_100_words": self.slope_per_100_words, "flagged": self.flagged, "basis": self.basis,
            "verdict": self.verdict, "warning": self.warning,
        }


def _fisher_ci(r: float, n: int, k: int = 0, confidence: float = 0.95) -> tuple[float, float] | None:
    dof = n - 3 - k
    if dof < 1 or not math.isfinite(r):
        return None
    if abs(r) >= 1:
        return (r, r)
    z = math.atanh(r)
    half = scipy_stats.norm.ppf(0.5 + confidence / 2) / math.sqrt(dof)
    return (math.tanh(z - half), math.tanh(z + half))


def _pearson(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], k: int = 0) -> Correlation:
    n = int(x.size)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Correlation(None, None, n)
    r = float(np.corrcoef(x, y)[0, 1])
    return Correlation(r, _fisher_ci(r, n, k), n)


def _residuals(y: npt.NDArray[np.float64], control: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    design = np.column_stack([np.ones_like(control), control])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return y - design @ coef


def length_bias(lengths: npt.ArrayLike, judge: npt.ArrayLike, reference: npt.ArrayLike | None = None) -> LengthBias:
    """Verbosity bias of `judge` scores against response `lengths` (words), optionally given expert `reference`
    scores of the same responses (NaN where missing: those responses are left out of the partial correlation).

    Example: a judge that adds 0.5 points per standard deviation of length to what the experts see is flagged on
    the partial correlation even when its raw r is modest; one whose scores track only the experts' is not, however
    strongly length and quality go together.
    """
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(judge, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    ref = None if reference is None else np.asarray(reference, dtype=np.float64)[keep]
    n = int(x.size)
    pearson = _pearson(x, y)
    rho = None
    if n >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        rho = float(scipy_stats.spearmanr(x, y).statistic)
    warning = f"only {n} responses: too few to judge a correlation (at least {MIN_N})" if n < MIN_N else ""
    partial = reference_pearson = None
    slope = None
    if ref is not None:
        has = np.isfinite(ref)
        xr, yr, rr = x[has], y[has], ref[has]
        reference_pearson = _pearson(xr, rr)
        if xr.size >= 4 and np.ptp(rr) > 0 and np.ptp(xr) > 0:
            ex, ey = _residuals(xr, rr), _residuals(yr, rr)
            partial = _pearson(ex, ey, k=1)
            if partial.r is not None:
                partial = Correlation(partial.r, _fisher_ci(partial.r, int(xr.size), 1), int(xr.size))
            design = np.column_stack([np.ones_like(xr), rr, xr])
            coef, *_ = np.linalg.lstsq(design, yr, rcond=None)
            slope = float(coef[2])
        else:
            partial = Correlation(None, None, int(xr.size))
    elif pearson.r is not None:
        slope = float(np.polyfit(x, y, 1)[0])
    basis = "partial" if ref is not None else "pearson"
    chosen = partial if ref is not None else pearson
    flagged = bool(chosen is not None and chosen.r is not None and abs(chosen.r) >= FLAG_AT and n >= MIN_N)
    verdict = "undefined"
    if chosen is not None and chosen.r is not None and n >= MIN_N:
        low, high = chosen.ci or (chosen.r, chosen.r)
        verdict = ("pass" if -FLAG_AT < low and high < FLAG_AT else
                   "fail" if low >= FLAG_AT or high <= -FLAG_AT else "uncertain")
    return LengthBias(n=n, pearson=pearson, spearman_rho=rho, partial=partial, reference_pearson=reference_pearson,
                      slope_per_100_words=None if slope is None else slope * 100, flagged=flagged, basis=basis,
                      verdict=verdict, warning=warning)


def length_normalised(lengths: npt.ArrayLike, judge: npt.ArrayLike, bias: LengthBias) -> npt.NDArray[np.float64]:
    """The judge's scores with the linear length effect removed: judge − b·(length − mean length)."""
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(judge, dtype=np.float64)
    if bias.slope_per_100_words is None:
        return y.copy()
    b = bias.slope_per_100_words / 100
    return y - b * (x - np.nanmean(x))


# --- position bias (methodology §6.2.1) ------------------------------------------------------------------

REVERSAL_FLAG_AT = 0.10  # §6.2.1: target < 10 % reversal rate


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson's score interval for a proportion (Wilson 1927; Agresti & Coull 1998): well-behaved near 0 and 1,
    where the reversal rates of a good judge live. None for n = 0."""
    if n == 0:
        return None
    return wilson_proportion_interval(successes / n, n, confidence)


def wilson_proportion_interval(p: float, n: float, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson's score interval for a proportion ``p`` from ``n`` (possibly effective, non-integer) observations.
    None for n ≤ 0 or a proportion that is not a number."""
    if n <= 0 or not math.isfinite(p):
        return None
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class PositionBias:
    n_pairs: int  # pairs judged in both orders
    reversals: int  # pairs whose preferred response changed with the order (a tie on one side counts)
    reversal_rate: float | None
    reversal_ci: tuple[float, float] | None
    first_position_share: float | None  # of the decisive verdicts, the share that chose the answer shown first
    first_position_ci: tuple[float, float] | None
    flagged: bool  # reversal rate ≥ 10 %
    verdict: str  # pass / fail when the Wilson interval is clear of 10 %, else uncertain

    def as_dict(self) -> PositionBiasJson:
        return {
            "n_pairs": self.n_pairs, "reversals": self.reversals, "reversal_rate": self.reversal_rate,
            "reversal_ci": self.reversal_ci, "first_position_share": self.first_position_share,
            "first_position_ci": self.first_position_ci, "flagged": self.flagged, "verdict": self.verdict,
        }


class PositionBiasJson(TypedDict):
    """:class:`PositionBias` as stored (a bias check's payload): its fields, in order."""

    n_pairs: int
    reversals: int
    reversal_rate: float | None
    reversal_ci: tuple[float, float] | None
    first_position_share: float | None
    first_position_ci: tuple[float, float] | None
    flagged: bool
    verdict: str


def position_bias(verdicts: list[tuple[str, str]]) -> PositionBias:
    """Reversal rate from each pair's two verdicts: (preferred when X was shown first, preferred when Y was), each
    "A" (the first shown), "B" or "tie". Consistent: (A, B) — X both times —, (B, A) — Y both times — or (tie, tie);
    anything else is a reversal. Example: a judge that always answers "A" reverses every pair."""
    n = len(verdicts)
    consistent = {("A", "B"), ("B", "A"), ("tie", "tie")}
    reversals = sum(pair not in consistent for pair in verdicts)
    decisive = [v for pair in verdicts for v in pair if v in ("A", "B")]
    first = sum(v == "A" for v in decisive)
    rate = reversals / n if n else None
    ci = wilson_interval(reversals, n)
    verdict = "undefined"
    if ci is not None:
        verdict = "pass" if ci[1] < REVERSAL_FLAG_AT else "fail" if ci[0] >= REVERSAL_FLAG_AT else "uncertain"
    return PositionBias(n_pairs=n, reversals=reversals, reversal_rate=rate, reversal_ci=ci,
                        first_position_share=first / len(decisive) if decisive else None,
                        first_position_ci=wilson_interval(first, len(decisive)),
                        flagged=rate is not None and rate >= REVERSAL_FLAG_AT, verdict=verdict)
