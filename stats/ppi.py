"""Prediction-powered inference (PPI / PPI++) for a mean, stratified and planned — pure numpy/scipy, no Django.

Experts label a sample of n responses (``Y``); the LLM judge scores those same responses (``Yhat``) and N
other judged responses (``Yhat_unlabeled``). The PPI++ estimate of the experts' mean is

    θ̂_λ = mean(w̃ᵤ · λ · Ŷᵤ) + mean(w̃ · (Y − λ Ŷ))                           (Angelopoulos et al. 2023, eq. 1;
                                                                           PPI++, arXiv 2311.01453, §2)

with the normal interval θ̂_λ ± z_{1−α/2} · √(σ̂²_f/N + σ̂²_Δ/n), σ̂_f = std(w̃ᵤ · λ Ŷᵤ), σ̂_Δ = std(w̃ · (Y − λŶ)),
both with ddof = 0. Weights are normalised to sum to their sample size (w̃ = w / Σw · n, ppi_py's
``construct_weight_vector``); unweighted means w̃ = 1. λ = 1 is plain PPI, λ = 0 the experts-only mean.

The power-tuned λ (PPI++, ppi_py's ``_calc_lam_glm`` for a scalar mean) uses a pilot estimate θ̃ = θ̂_1:

    g = w̃ (Y − θ̃),  ĝ = w̃ (Ŷ − θ̃),  ĝᵤ = w̃ᵤ (Ŷᵤ − θ̃)
    λ = [2/n · Σ (g − ḡ)(ĝ − ĝ̄)] / [2 (1 + n/N) · Var₁(ĝ ∪ ĝᵤ)],  clipped to [0, 1]

(Var₁ is the sample variance with ddof = 1 over the labelled and unlabelled gradients together, as
``np.cov`` in ppi_py). All of that is exactly ppi_py 0.2.3's convention for a scalar mean, checked to 1e-9 by
``tests/stats/test_ppi.py``; our defaults differ in one place: α = 0.05 (ppi_py: 0.1).

Our own additions, not ppi_py's:

- **A constant judge.** When every judge gradient ĝ, ĝᵤ is the same number (a constant judge with uniform
  weights), ppi_py's λ is 0/0 — NaN, or, when rounding leaves a few ulps, an arbitrary number in [0, 1] — and
  its estimate is NaN in the first case. With constant gradients every λ gives the same estimate and interval
  (in exact arithmetic), so we return λ = 0 (the experts-only estimate) with a ``note``; where ppi_py is
  finite, the figures agree. A constant judge with non-uniform weights has varying gradients and a
  well-defined λ, like ppi_py.
- ``small_sample=True``: the t quantile with n − 1 degrees of freedom instead of z (for strata, the
  Welch–Satterthwaite degrees of freedom of the weighted sum of the strata's variances, each with n_h − 1).
- The stratified estimator (θ = Σ W_h θ_h, V = Σ W_h² V_h; Cochran 1977 §5.3 with PPI++ within strata), the
  difference of two independent estimates, ``labels_needed`` (ppi_mean_power-style planning) and Neyman
  allocation (Cochran 1977 §5.5; Zrnic & Candès 2024, "Active statistical inference", for sampling where the
  judge is least reliable with known inclusion probabilities).

Example:
    >>> est = ppi_mean([1.0, 2.0, 2.0, 3.0], [1.2, 1.8, 2.1, 2.9], [1.0, 2.0, 3.0, 2.5, 1.5, 2.2])
    >>> round(est.estimate, 4), round(est.lam, 4)
    (2.019, 0.5686)
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy import stats as scipy_stats

K = TypeVar("K")

ArrayLike = Sequence[float] | np.ndarray

CONSTANT_JUDGE_NOTE = (
    "the judge's scores do not vary (constant judge): λ is undefined (0/0), every λ gives the same estimate, "
    "λ = 0 (experts only) is used"
)


# ---------------------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class MeanEstimate:
    """One mean with its interval; n = expert-labelled items, N = judged (unlabelled) items."""

    estimate: float
    se: float
    lower: float
    upper: float
    lam: float
    n: int
    N: int  # noqa: N815 — the papers' N
    note: str | None = None


@dataclass(frozen=True)
class Stratum:
    """One stratum's data: expert labels, the judge on them, the judge on the rest, and the population size N_h."""

    key: str
    Y: np.ndarray  # noqa: N815
    Yhat: np.ndarray  # noqa: N815
    Yhat_unlabeled: np.ndarray  # noqa: N815
    size: float
    w: np.ndarray | None = None
    w_unlabeled: np.ndarray | None = None


@dataclass(frozen=True)
class StratumResult:
    """One stratum's part in a stratified estimate; ``skipped`` says why a stratum was left out (never pooled)."""

    key: str
    n: int
    N: int  # noqa: N815
    weight: float
    estimate: float | None
    se: float | None
    lam: float | None
    skipped: str | None
    note: str | None = None


@dataclass(frozen=True)
class StratifiedEstimate:
    """Σ_h W_h θ_h / covered_weight over the usable strata, with V = Σ_h W_h² V_h / covered_weight²."""

    estimate: float | None
    se: float | None
    lower: float | None
    upper: float | None
    strata: tuple[StratumResult, ...]
    covered_weight: float
    df: float | None = None  # degrees of freedom of the t quantile when small_sample=True, else None


@dataclass(frozen=True)
class Difference:
    """a − b with its normal interval."""

    estimate: float
    se: float
    lower: float
    upper: float


# ---------------------------------------------------------------------------------------------------------------
# Input checks and the shared arithmetic


def _vector(name: str, values: ArrayLike | None, *, minimum: int = 0) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of numbers, got shape {array.shape}")
    if array.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} value(s), got {array.size}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains a missing or infinite value (index {int(np.argmin(np.isfinite(array)))})")
    return array


def _weights(name: str, w: ArrayLike | None, size: int) -> np.ndarray:
    """ppi_py's ``construct_weight_vector``: ones, or w / Σw · size."""
    if w is None:
        return np.ones(size)
    array = _vector(name, w)
    if array.size != size:
        raise ValueError(f"{name} has {array.size} weights for {size} items")
    if (array < 0).any() or array.sum() <= 0:
        raise ValueError(f"{name} must be non-negative with a positive sum")
    return array / array.sum() * size


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


@functools.lru_cache(maxsize=256)
def _quantile(alpha: float, df: float | None) -> float:
    """z_{1−α/2}, or t_{df, 1−α/2} when df is given (cached: scipy's isf costs ~0.4 ms a call)."""
    if df is None:
        return float(scipy_stats.norm.isf(alpha / 2))
    return float(scipy_stats.t.isf(alpha / 2, df))


@dataclass(frozen=True)
class _Data:
    Y: np.ndarray  # noqa: N815
    Yhat: np.ndarray  # noqa: N815
    Yhat_u: np.ndarray  # noqa: N815
    w: np.ndarray
    w_u: np.ndarray

    @property
    def n(self) -> int:
        return int(self.Y.size)

    @property
    def N(self) -> int:  # noqa: N802
        return int(self.Yhat_u.size)


def _data(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, w: ArrayLike | None,  # noqa: N803
          w_unlabeled: ArrayLike | None, *, minimum_n: int) -> _Data:
    y = _vector("Y", Y, minimum=minimum_n)
    yhat = _vector("Yhat", Yhat)
    if yhat.size != y.size:
        raise ValueError(f"Y has {y.size} values but Yhat has {yhat.size}: they must be paired item by item")
    yhat_u = _vector("Yhat_unlabeled", Yhat_unlabeled, minimum=1)
    return _Data(y, yhat, yhat_u, _weights("w", w, y.size), _weights("w_unlabeled", w_unlabeled, yhat_u.size))


def _mean(x: np.ndarray) -> float:
    return float(np.add.reduce(x)) / x.size


def _var0(x: np.ndarray) -> float:
    """Variance with ddof = 0 (``ndarray.var()``), without numpy's per-call overhead (the benchmark calls it a lot)."""
    centred = x - _mean(x)
    return float(centred @ centred) / x.size


def _tuned_lam(d: _Data) -> tuple[float, str | None]:
    """PPI++'s power-tuned λ for a scalar mean, as ppi_py's ``_calc_lam_glm`` (clip=True); see the module doc."""
    pilot = _mean(d.w_u * d.Yhat_u) + _mean(d.w * (d.Y - d.Yhat))
    grads = d.w * (d.Y - pilot)
    grads_hat = d.w * (d.Yhat - pilot)
    grads_hat_u = d.w_u * (d.Yhat_u - pilot)
    every_hat = np.concatenate([grads_hat, grads_hat_u])
    if every_hat.min() == every_hat.max():
        return 0.0, CONSTANT_JUDGE_NOTE
    centred = grads - _mean(grads)
    centred_hat = grads_hat - _mean(grads_hat)
    cross = float(centred @ centred_hat)
    cov_grads = (cross + cross) / d.n
    var_grads_hat = _var0(every_hat) * every_hat.size / (every_hat.size - 1)  # ddof = 1, as np.cov
    if not var_grads_hat > 0:  # a few ulps of spread that cancel to nothing: the same case as above
        return 0.0, CONSTANT_JUDGE_NOTE
    lam = cov_grads / (2 * (1 + d.n / d.N) * var_grads_hat)
    return min(max(lam, 0.0), 1.0), None


def _resolve_lam(d: _Data, lam: float | None) -> tuple[float, str | None]:
    if lam is None:
        return _tuned_lam(d)
    if not math.isfinite(lam):
        raise ValueError(f"lam must be a finite number, got {lam}")
    return float(lam), None


def _point(d: _Data, lam: float) -> float:
    return _mean(d.w_u * lam * d.Yhat_u) + _mean(d.w * (d.Y - lam * d.Yhat))


def _se(d: _Data, lam: float) -> float:
    imputed_var = _var0(d.w_u * (lam * d.Yhat_u)) / d.N
    rectifier_var = _var0(d.w * (d.Y - lam * d.Yhat)) / d.n
    return math.sqrt(imputed_var + rectifier_var)


# ---------------------------------------------------------------------------------------------------------------
# One mean


def ppi_mean_pointestimate(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, *,  # noqa: N803
                           lam: float | None = None, w: ArrayLike | None = None,
                           w_unlabeled: ArrayLike | None = None) -> float:
    """PPI++ point estimate of the experts' mean (ppi_py's ``ppi_mean_pointestimate``); lam=None: power-tuned."""
    d = _data(Y, Yhat, Yhat_unlabeled, w, w_unlabeled, minimum_n=1)
    return _point(d, _resolve_lam(d, lam)[0])


def ppi_mean(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, *, alpha: float = 0.05,  # noqa: N803
             lam: float | None = None, w: ArrayLike | None = None, w_unlabeled: ArrayLike | None = None,
             small_sample: bool = False) -> MeanEstimate:
    """Estimate, standard error, interval and λ at once (ppi_py's conventions; t quantile if small_sample).

    Needs at least 2 expert labels (the rectifier's variance) and 1 judged item.
    """
    _check_alpha(alpha)
    d = _data(Y, Yhat, Yhat_unlabeled, w, w_unlabeled, minimum_n=2)
    lam_used, note = _resolve_lam(d, lam)
    estimate = _point(d, lam_used)
    se = _se(d, lam_used)
    half = _quantile(alpha, d.n - 1 if small_sample else None) * se
    return MeanEstimate(estimate=estimate, se=se, lower=estimate - half, upper=estimate + half, lam=lam_used,
                        n=d.n, N=d.N, note=note)


def ppi_mean_ci(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, *, alpha: float = 0.05,  # noqa: N803
                lam: float | None = None, w: ArrayLike | None = None, w_unlabeled: ArrayLike | None = None,
                small_sample: bool = False) -> tuple[float, float]:
    """PPI++ interval (lower, upper) of the experts' mean (ppi_py's ``ppi_mean_ci``, but α defaults to 0.05)."""
    result = ppi_mean(Y, Yhat, Yhat_unlabeled, alpha=alpha, lam=lam, w=w, w_unlabeled=w_unlabeled,
                      small_sample=small_sample)
    return result.lower, result.upper


def classical_mean(Y: ArrayLike, *, alpha: float = 0.05, w: ArrayLike | None = None,  # noqa: N803
                   small_sample: bool = False) -> MeanEstimate:
    """Experts-only mean (λ = 0): mean(w̃Y) ± z · std(w̃Y)/√n, ppi_py's ``classical_mean_ci``; N = 0."""
    _check_alpha(alpha)
    y = _vector("Y", Y, minimum=2)
    weights = _weights("w", w, y.size)
    estimate = float((weights * y).mean())
    se = float((weights * y).std() / math.sqrt(y.size))
    half = _quantile(alpha, y.size - 1 if small_sample else None) * se
    return MeanEstimate(estimate=estimate, se=se, lower=estimate - half, upper=estimate + half, lam=0.0,
                        n=int(y.size), N=0)


# ---------------------------------------------------------------------------------------------------------------
# Strata


def _skip_reason(stratum: Stratum, n: int, big_n: int) -> str | None:
    if stratum.size <= 0:
        return "population size is 0"
    if n < 2:
        return f"{n} expert label{'' if n == 1 else 's'}: at least 2 are needed for an interval"
    if big_n < 1:
        return "no judged items"
    return None


def ppi_stratified_mean(strata: Sequence[Stratum], *, alpha: float = 0.05, lam: float | None = None,
                        small_sample: bool = False) -> StratifiedEstimate:
    """Stratified PPI++: θ = Σ W_h θ_h / c, V = Σ W_h² V_h / c² over usable strata (c = their total weight W).

    W_h = size_h / Σ size. A stratum with fewer than 2 expert labels, no judged items or size 0 is reported
    with a reason and left out; the estimate then describes the covered part of the population
    (``covered_weight`` < 1), never a silent pooling. lam=None tunes λ per stratum. small_sample: t quantile
    with Welch–Satterthwaite degrees of freedom (Σ a_h)² / Σ a_h² / (n_h − 1), a_h = W_h² V_h.
    Source: Cochran (1977), Sampling Techniques, §5.3, with each θ_h a PPI++ estimate.
    """
    _check_alpha(alpha)
    if not strata:
        raise ValueError("ppi_stratified_mean needs at least one stratum")
    keys = [s.key for s in strata]
    if len(set(keys)) != len(keys):
        raise ValueError(f"stratum keys must be unique, got {keys}")
    sizes = np.array([float(s.size) for s in strata])
    if not np.all(np.isfinite(sizes)) or np.any(sizes < 0) or sizes.sum() <= 0:
        raise ValueError("stratum sizes must be finite, non-negative and not all 0")
    weights = sizes / sizes.sum()
    results: list[StratumResult] = []
    parts: list[tuple[float, float, float, int]] = []  # (W_h, θ_h, V_h, n_h)
    for stratum, weight in zip(strata, weights, strict=True):
        n = int(np.asarray(stratum.Y).size)
        big_n = int(np.asarray(stratum.Yhat_unlabeled).size)
        reason = _skip_reason(stratum, n, big_n)
        if reason is not None:
            results.append(StratumResult(key=stratum.key, n=n, N=big_n, weight=float(weight), estimate=None,
                                         se=None, lam=None, skipped=reason))
            continue
        try:
            est = ppi_mean(stratum.Y, stratum.Yhat, stratum.Yhat_unlabeled, alpha=alpha, lam=lam, w=stratum.w,
                           w_unlabeled=stratum.w_unlabeled)
        except ValueError as error:
            raise ValueError(f"stratum {stratum.key!r}: {error}") from error
        results.append(StratumResult(key=stratum.key, n=n, N=big_n, weight=float(weight), estimate=est.estimate,
                                     se=est.se, lam=est.lam, skipped=None, note=est.note))
        parts.append((float(weight), est.estimate, est.se**2, n))
    covered = float(sum(p[0] for p in parts))
    if not parts:
        return StratifiedEstimate(estimate=None, se=None, lower=None, upper=None, strata=tuple(results),
                                  covered_weight=0.0)
    estimate = sum(wh * th for wh, th, _, _ in parts) / covered
    components = [(wh / covered) ** 2 * vh for wh, _, vh, _ in parts]
    variance = float(sum(components))
    se = math.sqrt(variance)
    df: float | None = None
    if small_sample:
        denominator = sum(a**2 / (nh - 1) for a, (_, _, _, nh) in zip(components, parts, strict=True))
        df = variance**2 / denominator if denominator > 0 else float(min(p[3] for p in parts) - 1)
    half = _quantile(alpha, df) * se
    return StratifiedEstimate(estimate=float(estimate), se=se, lower=float(estimate - half),
                              upper=float(estimate + half), strata=tuple(results), covered_weight=covered, df=df)


# ---------------------------------------------------------------------------------------------------------------
# Two models


def mean_difference(a: MeanEstimate | StratifiedEstimate, b: MeanEstimate | StratifiedEstimate, *,
                    alpha: float = 0.05) -> Difference:
    """a − b ± z · √(se_a² + se_b²), for estimates from independent samples (two models' responses).

    Responses of two models to the same cases are not independent samples of cases; there the paired
    difference per case (one ``ppi_mean`` of Y_a − Y_b) is the right estimator and is narrower.
    """
    _check_alpha(alpha)
    for name, item in (("a", a), ("b", b)):
        if item.estimate is None or item.se is None:
            raise ValueError(f"mean_difference: {name} has no estimate (no usable stratum)")
    assert a.estimate is not None and a.se is not None and b.estimate is not None and b.se is not None
    estimate = a.estimate - b.estimate
    se = math.sqrt(a.se**2 + b.se**2)
    half = _quantile(alpha, None) * se
    return Difference(estimate=estimate, se=se, lower=estimate - half, upper=estimate + half)


# ---------------------------------------------------------------------------------------------------------------
# Planning


def labels_needed(*, residual_var: float, judge_var: float, N: int, lam: float,  # noqa: N803
                  target_half_width: float, alpha: float = 0.05) -> int | None:
    """Smallest n ≥ 2 with z · √(residual_var/n + λ² judge_var/N) ≤ target; None when unreachable.

    residual_var = Var(Y − λŶ) observed on the labelled items, judge_var = Var(Ŷ) on the judged ones, N the
    judged items (held fixed): the PPI++ variance of ``ppi_mean`` solved for n, as ppi_py's ``ppi_mean_power``
    solves it for a budget. Unreachable when the judged-items term alone is already as wide as the target
    (more expert labels cannot help; only more judged items or a smaller λ can). At least 2 because an
    interval needs 2 labels.
    """
    _check_alpha(alpha)
    for name, value in (("residual_var", residual_var), ("judge_var", judge_var), ("lam", lam),
                        ("target_half_width", target_half_width)):
        if not math.isfinite(value):
            raise ValueError(f"labels_needed: {name} must be finite, got {value}")
    if residual_var < 0 or judge_var < 0:
        raise ValueError("labels_needed: variances must be non-negative")
    if target_half_width <= 0:
        raise ValueError("labels_needed: target_half_width must be positive")
    if N < 1:
        raise ValueError("labels_needed: N (judged items) must be at least 1")
    z = _quantile(alpha, None)

    def half_width(n: int) -> float:
        return z * math.sqrt(residual_var / n + lam**2 * judge_var / N)

    budget = (target_half_width / z) ** 2 - lam**2 * judge_var / N
    if residual_var == 0:
        return 2 if half_width(2) <= target_half_width else None
    if budget <= 0:
        return None
    n = max(2, math.ceil(residual_var / budget))
    # Rounding can put the closed form one off either way: settle it on the formula itself.
    while n > 2 and half_width(n - 1) <= target_half_width:
        n -= 1
    while half_width(n) > target_half_width:
        n += 1
    return n


def neyman_allocation(sizes: Mapping[K, int], sds: Mapping[K, float], total: int, *,
                      floor: int = 1) -> dict[K, int]:
    """Neyman allocation n_h ∝ N_h · sd_h of ``total`` labels over strata, with a floor and a cap of N_h.

    Every stratum with items gets at least min(floor, N_h), none more than N_h; a stratum with N_h = 0 gets 0.
    The continuous optimum of Σ W_h² sd_h² / n_h under those bounds is n_h = clip(c · N_h sd_h, floor_h, N_h)
    with c solved so the n_h sum to ``total`` (Cochran 1977 §5.5 with the bounds of §5.8); it is rounded by
    largest remainder (ties: the mapping's order), never breaking a bound. When every sd is 0 (no residual
    variance seen yet, or a first draw) the rule has nothing to go on and falls back to proportional
    allocation n_h ∝ N_h. Raises ValueError when ``total`` exceeds Σ N_h or cannot cover the floors.
    """
    keys = list(sizes)
    if set(keys) != set(sds):
        raise ValueError(f"sizes and sds must have the same strata; differ on {set(keys) ^ set(sds)}")
    if floor < 0:
        raise ValueError("floor must be non-negative")
    cap = np.array([int(sizes[k]) for k in keys], dtype=float)
    sd = np.array([float(sds[k]) for k in keys])
    if np.any(cap < 0):
        raise ValueError("stratum sizes must be non-negative")
    if not np.all(np.isfinite(sd)) or np.any(sd < 0):
        raise ValueError("standard deviations must be finite and non-negative")
    low = np.minimum(float(floor), cap)
    if total > cap.sum():
        raise ValueError(f"total {total} exceeds the {int(cap.sum())} items in all strata")
    if total < low.sum():
        raise ValueError(f"total {total} cannot give the floor of {floor} to every stratum (needs {int(low.sum())})")
    score = cap * sd
    if not np.any(score > 0):
        score = cap.copy()  # proportional fallback
    x = _bounded_proportional(score, low, cap, float(total))
    counts = np.minimum(np.maximum(np.floor(x + 1e-9), low), cap).astype(int)
    remainder = x - counts
    missing = total - int(counts.sum())
    # Largest remainder: the units left by rounding down go, one each, to the largest fractional parts.
    while missing > 0:
        open_strata = sorted((i for i in range(len(keys)) if counts[i] < cap[i]), key=lambda i: (-remainder[i], i))
        for i in open_strata[:missing]:
            counts[i] += 1
            remainder[i] -= 1
        missing = total - int(counts.sum())
    while missing < 0:  # only from rounding noise in c: take back from the smallest remainders above the floor
        above = sorted((i for i in range(len(keys)) if counts[i] > low[i]), key=lambda i: (remainder[i], i))
        for i in above[:-missing]:
            counts[i] -= 1
            remainder[i] += 1
        missing = total - int(counts.sum())
    return {k: int(c) for k, c in zip(keys, counts, strict=True)}


def _bounded_proportional(score: np.ndarray, low: np.ndarray, cap: np.ndarray, total: float) -> np.ndarray:
    """x_h = clip(c · score_h, low_h, cap_h) with Σ x_h = total, exactly (f(c) is piecewise linear in c).

    Strata with score 0 sit at their floor; only when every scored stratum is full do they take the rest,
    in proportion to their room.
    """
    positive = score > 0
    base = np.where(positive, 0.0, low)
    full = np.where(positive, cap, low)
    if total >= full.sum():
        room = cap - full
        rest = total - full.sum()
        return full + (rest * room / room.sum() if room.sum() > 0 else 0.0)
    s = score[positive]
    lo, hi = low[positive], cap[positive]
    fixed = base.sum()

    def f(c: np.ndarray) -> np.ndarray:
        return np.clip(np.outer(c, s), lo, hi).sum(axis=1) + fixed

    knots = np.unique(np.concatenate([[0.0], lo / s, hi / s]))
    values = f(knots)
    j = int(np.searchsorted(values, total, side="left"))  # values is non-decreasing; values[-1] = full.sum() > total
    if j == 0:
        c = 0.0
    else:
        c0, c1, v0, v1 = knots[j - 1], knots[j], values[j - 1], values[j]
        c = c0 + (total - v0) / (v1 - v0) * (c1 - c0) if v1 > v0 else c1
    x = base.copy()
    x[positive] = np.clip(c * s, lo, hi)
    return x


def expected_half_width(sizes: Mapping[K, int], sds: Mapping[K, float], alloc: Mapping[K, int], *,
                        alpha: float = 0.05) -> float:
    """z · √(Σ_h W_h² sd_h² / n_h), W_h = N_h / Σ N: the stratified half-width an allocation should give.

    Normal approximation without the finite-population correction (so it slightly overstates the width
    when n_h is close to N_h), and only the expert (rectifier) term: the judged-items term
    Σ W_h² λ² Var(Ŷ_h)/N_h does not depend on the allocation. Use sd_h = √Var(Y − λŶ) in stratum h.
    Infinite when a stratum with items and a positive sd gets no labels; strata with N_h = 0 are ignored.
    """
    _check_alpha(alpha)
    keys = list(sizes)
    total_size = float(sum(sizes[k] for k in keys))
    if total_size <= 0:
        raise ValueError("expected_half_width: the strata have no items")
    variance = 0.0
    for k in keys:
        if sizes[k] <= 0:
            continue
        weight = sizes[k] / total_size
        sd = float(sds[k])
        n = int(alloc.get(k, 0))
        if n <= 0:
            if sd > 0:
                return math.inf
            continue
        variance += weight**2 * sd**2 / n
    return _quantile(alpha, None) * math.sqrt(variance)
