"""Rater effects: a many-facet graded model (response quality, sub-dimension steps, rater severity), its fit
statistics, classical per-rater figures, drift and fatigue, and test–retest agreement.

Model (a many-facet Rasch model in its cumulative-logit, "graded" form; Linacre 1989, FACETS; Eckes 2015, ch. 4):
for response ``i`` scored by rater ``r`` on sub-dimension ``d`` (scores 0..K-1),

    P(X ≥ k) = logistic(θ_i − σ_r − τ_dk)          k = 1..K-1,  τ_d1 < … < τ_d,K-1

θ_i is the response's quality, σ_r the rater's severity (a severe rater needs a better response for the same
score; Σ σ_r = 0 fixes the origin), τ_dk the sub-dimension's step difficulties. It is the graded response model
of ``stats/irt.py`` with every discrimination 1 (the Rasch restriction that makes severities comparable across
raters) and one more facet. Estimation: joint maximum likelihood by block Fisher scoring (FACETS' JMLE), with a
normal prior on θ whose variance is re-estimated each round (as in an EM), so that a response scored 0 or 3
by everyone stays finite; step difficulties have a weak N(0, 4²) prior (BILOG's), so an unused category does too.

Standard errors are FACETS' model standard errors, 1/√(information) at the estimates. Fit (Wright & Masters
1982): outfit = mean of squared standardised residuals, infit = Σ squared residuals / Σ model variances;
their standardised forms by the Wilson–Hilferty cube root with the model's own variance of the mean square
(Wright & Linacre's ZSTD). Expected 1; above 1 is noisier than the model (erratic, careless), below 1 more
predictable than the model (central tendency, halo; Myford & Wolfe 2003–2004).

Drift (Harik et al. 2009, in the model's terms): a rater's severity per period (a cycle, or a week within a
cycle) with θ and τ held at the whole fit's values; the change rule is a standardised CUSUM of the periods'
deviations from the rater's weighted mean, whose null distribution (no change) is simulated for the rater's own
periods and standard errors, so its false-alarm rate is the stated α by construction (and measured again in
``benchmarks/rater_effects.py``).

Pure NumPy/SciPy: no Django here.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from scipy.stats import norm

from stats.bias import wilson_proportion_interval

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

PRIOR_STEP_SD = 4.0
MIN_RATINGS = 20  # fewer ratings than this and a rater's severity and fit are not reported
MISFIT_MNSQ, MISFIT_Z = 1.2, 3.0  # erratic: mean square above Wright & Linacre's (1994) 1.2 for judges, ZSTD above 3
MUTED_MNSQ, MUTED_Z = 0.7, -3.0  # too predictable (central tendency / halo): below 0.7 and ZSTD below −3
SEVERITY_FLAG = 0.5  # logits: severe / lenient when |σ| ≥ 0.5 and the 95 % interval is clear of 0
DRIFT_ALPHA = 0.01  # false-alarm rate of the drift rule per rater and test


class RaterDataError(ValueError):
    """The ratings cannot be fitted; the message says why in words a lead can act on."""


@dataclass(frozen=True)
class RaterData:
    """Ratings in long form, every facet coded 0..n-1, with the labels each code stands for."""

    item: IntArray
    rater: IntArray
    sub: IntArray
    score: IntArray
    items: tuple[Hashable, ...]
    raters: tuple[Hashable, ...]
    subs: tuple[Hashable, ...]
    categories: int

    @property
    def n(self) -> int:
        return int(self.score.size)


def _codes(values: Sequence[Hashable] | ArrayLike) -> tuple[IntArray, tuple[Hashable, ...]]:
    """Codes 0..n-1 for any labels (sorted when they sort, else in order of appearance)."""
    array = np.asarray(values)
    if array.dtype.kind in "iuUS" or (array.dtype.kind == "f" and np.all(np.isfinite(array))):
        labels_sorted, codes = np.unique(array.ravel(), return_inverse=True)
        return codes.astype(np.int64).ravel(), tuple(labels_sorted.tolist())
    labels: dict[Hashable, int] = {}
    codes = np.fromiter((labels.setdefault(v, len(labels)) for v in np.asarray(values, dtype=object).ravel()),
                        dtype=np.int64)
    return codes, tuple(labels)


def rater_data(items: ArrayLike, raters: ArrayLike, subs: ArrayLike, scores: ArrayLike, *,
               categories: int = 4) -> RaterData:
    """Long-form ratings (one row per response × rater × sub-dimension) coded for :func:`facets_fit`.

    Example: ``rater_data(["r1", "r1"], ["ann", "bob"], ["lexicalAccuracy"] * 2, [2, 3])``.
    """
    score = np.asarray(scores, dtype=np.float64).ravel()
    n = score.size
    if n == 0:
        raise RaterDataError("there are no ratings")
    if np.any(~np.isfinite(score)) or np.any((score < 0) | (score > categories - 1) | (score != np.round(score))):
        raise RaterDataError(f"scores must be whole numbers 0..{categories - 1}")
    item, item_labels = _codes(items)
    rater, rater_labels = _codes(raters)
    sub, sub_labels = _codes(subs)
    if not (item.size == rater.size == sub.size == n):
        raise RaterDataError("items, raters, sub-dimensions and scores must have one entry per rating")
    return RaterData(item=item, rater=rater, sub=sub, score=score.astype(np.int64), items=item_labels,
                     raters=rater_labels, subs=sub_labels, categories=categories)


@dataclass(frozen=True)
class FacetsFit:
    """One fit of the many-facet graded model; per-rater arrays follow ``raters``."""

    raters: tuple[Hashable, ...]
    subs: tuple[Hashable, ...]
    items: tuple[Hashable, ...]
    severity: Array  # logits; positive = severe
    severity_se: Array
    infit: Array
    outfit: Array
    infit_z: Array
    outfit_z: Array
    n_ratings: IntArray
    quality: Array  # θ per item
    quality_se: Array
    quality_sd: float  # the estimated SD of θ (the prior's)
    steps: Array  # (subs, K-1) step difficulties τ_dk
    log_likelihood: float
    iterations: int
    converged: bool
    reported: NDArray[np.bool_]  # raters with enough ratings (≥ MIN_RATINGS) and more than one category used

    def severity_interval(self, confidence: float = 0.95) -> tuple[Array, Array]:
        z = float(norm.ppf(0.5 + confidence / 2))
        return self.severity - z * self.severity_se, self.severity + z * self.severity_se


@dataclass(frozen=True)
class _Pass:
    """Per-rating quantities at the current parameters (one vectorised pass over the data)."""

    probs: Array  # (N, K)
    p_obs: Array  # (N,) probability of the observed category
    d_eta: Array  # (N,) score of the log-likelihood with respect to η
    info: Array  # (N,) Fisher information about η
    f: Array  # (N, K-1) logistic density at each step


def _pass(data: RaterData, theta: Array, sigma: Array, steps: Array) -> _Pass:
    eta = theta[data.item] - sigma[data.rater]
    star = expit(eta[:, None] - steps[data.sub])  # (N, K-1): P(X ≥ k)
    n, k1 = star.shape
    probs = np.empty((n, k1 + 1))
    probs[:, 0] = 1.0 - star[:, 0]
    probs[:, 1:-1] = star[:, :-1] - star[:, 1:]
    probs[:, -1] = star[:, -1]
    np.clip(probs, 1e-12, 1.0, out=probs)
    f = star * (1.0 - star)
    dp = np.empty_like(probs)  # dP_c/dη = f_c − f_(c+1), with f_0 = f_K = 0
    dp[:, 0] = -f[:, 0]
    dp[:, 1:-1] = f[:, :-1] - f[:, 1:]
    dp[:, -1] = f[:, -1]
    rows = np.arange(n)
    p_obs = probs[rows, data.score]
    d_eta = dp[rows, data.score] / p_obs
    info = (dp * dp / probs).sum(axis=1)
    return _Pass(probs=probs, p_obs=p_obs, d_eta=d_eta, info=info, f=f)


def _step_update(data: RaterData, state: _Pass, steps: Array) -> Array:
    """One Fisher-scoring step for every sub-dimension's steps (tridiagonal information), kept ordered."""
    n_subs, k1 = steps.shape
    grad = np.empty((n_subs, k1))
    info = np.zeros((n_subs, k1, k1))
    f, probs = state.f, state.probs
    for j in range(k1):  # threshold j+1 separates category j from j+1
        fj = f[:, j]
        sign = (data.score == j).astype(np.float64) - (data.score == j + 1)
        grad[:, j] = np.bincount(data.sub, sign * fj / state.p_obs, n_subs)
        info[:, j, j] = np.bincount(data.sub, fj * fj * (1.0 / probs[:, j] + 1.0 / probs[:, j + 1]), n_subs)
        if j + 1 < k1:
            off = -np.bincount(data.sub, fj * f[:, j + 1] / probs[:, j + 1], n_subs)
            info[:, j, j + 1] = info[:, j + 1, j] = off
    grad -= steps / PRIOR_STEP_SD**2
    info += np.eye(k1)[None] / PRIOR_STEP_SD**2
    new = steps.copy()
    for d in range(n_subs):
        step = np.clip(np.linalg.solve(info[d], grad[d]), -1.0, 1.0)
        for _ in range(20):  # halve until the steps stay ordered
            candidate = steps[d] + step
            if np.all(np.diff(candidate) > 1e-3):
                new[d] = candidate
                break
            step = step / 2
    return new


def facets_fit(data: RaterData, *, max_iterations: int = 200, tolerance: float = 1e-3) -> FacetsFit:
    """Fit the many-facet graded model by joint maximum likelihood (block Fisher scoring).

    Returns severities with model standard errors and infit/outfit per rater. Raises :class:`RaterDataError`
    with words when the data cannot identify the model (one rater, one category overall). Example: 12 raters ×
    300 responses × 4 sub-dimensions with severities N(0, 0.4²) recovers them with r ≈ 0.99.
    """
    k = data.categories
    n_raters, n_items, n_subs = len(data.raters), len(data.items), len(data.subs)
    if n_raters < 2:
        raise RaterDataError("a rater model needs at least two raters")
    if np.unique(data.score).size < 2:
        raise RaterDataError("every rating is in one category, so nobody's severity can be told apart")
    theta = np.zeros(n_items)
    sigma = np.zeros(n_raters)
    steps = np.empty((n_subs, k - 1))
    for d in range(n_subs):  # start: logits of the cumulative proportions
        s = data.score[data.sub == d]
        prop = np.array([((s >= c).sum() + 0.5) / (s.size + 1.0) for c in range(1, k)])
        steps[d] = np.maximum.accumulate(-np.log(prop / (1 - prop))) + np.arange(k - 1) * 1e-2
    per_rater = np.bincount(data.rater, minlength=n_raters)
    s2 = 1.0
    converged = False
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        state = _pass(data, theta, sigma, steps)
        g = np.bincount(data.item, state.d_eta, n_items) - theta / s2
        info_theta = np.bincount(data.item, state.info, n_items) + 1.0 / s2
        d_theta = np.clip(g / info_theta, -1.0, 1.0)
        theta = theta + d_theta
        state = _pass(data, theta, sigma, steps)
        # σ and τ from the same pass: the σ step is centred (it only moves raters against each other), so the
        # overall level is left to τ and the two steps do not both correct it.
        g_sigma = -np.bincount(data.rater, state.d_eta, n_raters)
        info_sigma = np.maximum(np.bincount(data.rater, state.info, n_raters), 1e-9)
        d_sigma = np.clip(g_sigma / info_sigma, -1.0, 1.0)
        d_sigma -= d_sigma.mean()
        sigma = sigma + d_sigma
        new_steps = _step_update(data, state, steps)
        d_steps = new_steps - steps
        steps = new_steps
        s2 = max(float(np.mean(theta**2 + 1.0 / info_theta)), 0.05)
        change = max(np.abs(d_theta).max(), np.abs(d_sigma).max(), np.abs(d_steps).max())
        if change < tolerance:
            converged = True
            break
    state = _pass(data, theta, sigma, steps)
    info_theta = np.bincount(data.item, state.info, n_items) + 1.0 / s2
    info_sigma = np.bincount(data.rater, state.info, n_raters)
    with np.errstate(divide="ignore"):
        severity_se = np.where(info_sigma > 0, 1.0 / np.sqrt(np.maximum(info_sigma, 1e-300)), np.inf)
    rows = np.arange(data.n)
    log_likelihood = float(np.log(state.probs[rows, data.score]).sum())
    # Leverage of each rating on its own fitted values (θ of its response, σ of its rater): JMLE residuals are
    # smaller than the model's by about this share, so the mean squares divide it out (studentised residuals).
    leverage = np.clip(state.info * (1.0 / info_theta[data.item] + 1.0 / np.maximum(info_sigma[data.rater], 1e-9)),
                       0.0, 0.9)
    infit, outfit, infit_z, outfit_z = _fit_statistics(data, state.probs, data.rater, n_raters, leverage)
    used = np.zeros((n_raters, k), dtype=bool)
    used[data.rater, data.score] = True
    categories_used = used.sum(axis=1)
    reported = (per_rater >= MIN_RATINGS) & (categories_used >= 2)
    return FacetsFit(raters=data.raters, subs=data.subs, items=data.items, severity=sigma, severity_se=severity_se,
                     infit=infit, outfit=outfit, infit_z=infit_z, outfit_z=outfit_z,
                     n_ratings=per_rater.astype(np.int64), quality=theta, quality_se=1.0 / np.sqrt(info_theta),
                     quality_sd=math.sqrt(s2), steps=steps, log_likelihood=log_likelihood, iterations=iterations,
                     converged=converged, reported=reported)


def _fit_statistics(data: RaterData, probs: Array, group: IntArray, n_groups: int,
                    leverage: Array) -> tuple[Array, Array, Array, Array]:
    """Infit and outfit mean squares per group with their Wilson–Hilferty standardised values (ZSTD)."""
    c = np.arange(data.categories, dtype=np.float64)
    expected = probs @ c
    dev = c[None, :] - expected[:, None]
    variance = np.maximum((probs * dev**2).sum(axis=1), 1e-9)
    kurt = (probs * dev**4).sum(axis=1)
    resid2 = (data.score - expected) ** 2 / (1.0 - leverage)
    n = np.bincount(group, minlength=n_groups).astype(np.float64)
    sum_w = np.bincount(group, variance, n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        outfit = np.bincount(group, resid2 / variance, n_groups) / n
        infit = np.bincount(group, resid2, n_groups) / sum_w
        q_out = np.sqrt(np.maximum(np.bincount(group, kurt / variance**2, n_groups) / n**2 - 1.0 / n, 1e-12))
        q_in = np.sqrt(np.maximum(np.bincount(group, kurt - variance**2, n_groups) / sum_w**2, 1e-12))
        outfit_z = (np.cbrt(outfit) - 1.0) * (3.0 / q_out) + q_out / 3.0
        infit_z = (np.cbrt(infit) - 1.0) * (3.0 / q_in) + q_in / 3.0
    few = n < 2
    for a in (outfit, infit, outfit_z, infit_z):
        a[few] = np.nan
    return infit, outfit, infit_z, outfit_z


def fair_average(fit: FacetsFit, categories: int) -> Array:
    """Each response's expected score per sub-dimension for a rater of severity 0 (FACETS' fair average).

    Shape (items, subs): the severity-adjusted truth, the sensitivity beside the panel-mean truth.
    """
    star = expit(fit.quality[:, None, None] - fit.steps[None, :, :])  # (I, D, K-1)
    return np.asarray(star.sum(axis=2), dtype=np.float64)  # E[X] = Σ_k P(X ≥ k)


# ---------------------------------------------------------------------------------------------------- flags
@dataclass(frozen=True)
class RaterFlag:
    """One flag on one rater: its code, the rule in words and the rule's false-positive rate."""

    code: str  # "severe" | "lenient" | "erratic" | "muted" | "drift"
    reason: str
    rule: str
    false_positive: str


FLAG_RULES: dict[str, tuple[str, str]] = {
    "severe": (f"severity ≥ +{SEVERITY_FLAG} logits and its 95 % interval above 0",
               "≤ 2.5 % for a rater of severity 0 (normal interval); benchmark: 1 of 210 raters with |severity| < 0.25"),
    "lenient": (f"severity ≤ −{SEVERITY_FLAG} logits and its 95 % interval below 0",
                 "≤ 2.5 % for a rater of severity 0 (normal interval); benchmark: as for severe"),
    "erratic": (f"infit or outfit mean square > {MISFIT_MNSQ} and its ZSTD > {MISFIT_Z:g}",
                "≈ 0.1 % under the model (one-sided z > 3); see benchmarks/README.md for the simulated rate"),
    "muted": (f"infit mean square < {MUTED_MNSQ} and its ZSTD < {MUTED_Z:g}",
              "≈ 0.1 % under the model (one-sided z < −3)"),
    "drift": (f"standardised CUSUM of the periods' severities, p < {DRIFT_ALPHA} (null simulated per rater)",
              f"{DRIFT_ALPHA:.0%} per rater and test by construction; see benchmarks/README.md for the simulated rate"),
}


def _flag(code: str, reason: str) -> RaterFlag:
    rule, fp = FLAG_RULES[code]
    return RaterFlag(code=code, reason=reason, rule=rule, false_positive=fp)


def rater_flags(fit: FacetsFit, drift: Sequence[DriftResult | None] | None = None) -> list[list[RaterFlag]]:
    """Flags per rater (in ``fit.raters`` order) with the reason in numbers; unreported raters get none."""
    low, high = fit.severity_interval()
    out: list[list[RaterFlag]] = []
    for r in range(len(fit.raters)):
        flags: list[RaterFlag] = []
        if not fit.reported[r]:
            out.append(flags)
            continue
        s = fit.severity[r]
        if s >= SEVERITY_FLAG and low[r] > 0:
            flags.append(_flag("severe", f"severity {s:+.2f} logits (95 % CI {low[r]:+.2f} to {high[r]:+.2f})"))
        if s <= -SEVERITY_FLAG and high[r] < 0:
            flags.append(_flag("lenient", f"severity {s:+.2f} logits (95 % CI {low[r]:+.2f} to {high[r]:+.2f})"))
        noisy = [(name, m, z) for name, m, z in (("infit", fit.infit[r], fit.infit_z[r]),
                                                  ("outfit", fit.outfit[r], fit.outfit_z[r]))
                 if m > MISFIT_MNSQ and z > MISFIT_Z]
        if noisy:
            name, m, z = noisy[0]
            flags.append(_flag("erratic", f"{name} mean square {m:.2f} (ZSTD {z:.1f}): scores vary more than the "
                                          "response's quality explains"))
        if fit.infit[r] < MUTED_MNSQ and fit.infit_z[r] < MUTED_Z:
            flags.append(_flag("muted", f"infit mean square {fit.infit[r]:.2f} (ZSTD {fit.infit_z[r]:.1f}): scores "
                                        "vary less than the responses do"))
        result = drift[r] if drift is not None else None
        if result is not None and result.p_value is not None and result.p_value < DRIFT_ALPHA:
            flags.append(_flag("drift", f"severity moved {result.first:+.2f} → {result.last:+.2f} logits over "
                                        f"{result.periods} periods (CUSUM p = {result.p_value:.3f})"))
        out.append(flags)
    return out


# ---------------------------------------------------------------------------------------------------- drift
@dataclass(frozen=True)
class DriftResult:
    """One rater's severity per period and the change rule's result (p None with fewer than 2 usable periods)."""

    labels: tuple[Hashable, ...]
    severity: Array  # per period (NaN where the period has too few ratings)
    severity_se: Array
    n_ratings: IntArray
    statistic: float | None
    p_value: float | None
    slope: float | None  # logits per period (weighted least squares)
    slope_se: float | None

    @property
    def periods(self) -> int:
        return int(np.isfinite(self.severity).sum())

    @property
    def first(self) -> float:
        ok = self.severity[np.isfinite(self.severity)]
        return float(ok[0]) if ok.size else float("nan")

    @property
    def last(self) -> float:
        ok = self.severity[np.isfinite(self.severity)]
        return float(ok[-1]) if ok.size else float("nan")


def period_severity(data: RaterData, fit: FacetsFit, period: IntArray, n_periods: int, *,
                    min_ratings: int = 10, iterations: int = 25) -> tuple[Array, Array, IntArray]:
    """Every rater's severity in every period, θ and τ held at ``fit``'s values: (raters, periods) arrays."""
    n_raters = len(fit.raters)
    group = data.rater * n_periods + np.asarray(period, dtype=np.int64)
    size = n_raters * n_periods
    sev = np.repeat(fit.severity, n_periods)
    by_period = replace(data, rater=group)  # each rater × period its own "rater" of the model's pass
    info: Array = np.zeros(size)
    for _ in range(iterations):
        state = _pass(by_period, fit.quality, sev, fit.steps)
        info = np.asarray(np.bincount(group, state.info, size) + 1.0 / 9.0, dtype=np.float64)  # weak N(σ_r, 3²) prior
        grad = -np.bincount(group, state.d_eta, size) - (sev - np.repeat(fit.severity, n_periods)) / 9.0
        step = np.clip(grad / info, -1.0, 1.0)
        sev = sev + step
        if np.abs(step).max() < 1e-5:
            break
    counts = np.bincount(group, minlength=size).astype(np.int64)
    se = 1.0 / np.sqrt(info)
    sev = np.where(counts >= min_ratings, sev, np.nan)
    se = np.where(counts >= min_ratings, se, np.nan)
    return sev.reshape(n_raters, n_periods), se.reshape(n_raters, n_periods), counts.reshape(n_raters, n_periods)


def _cusum(values: Array, se: Array) -> Array:
    """max_k |Σ_{t≤k} w_t (x_t − x̄_w)| / √Σw over the last axis (w = 1/se²): a Brownian bridge's sup under H0."""
    w = 1.0 / se**2
    mean = (w * values).sum(axis=-1, keepdims=True) / w.sum(axis=-1, keepdims=True)
    partial = np.cumsum(w * (values - mean), axis=-1)
    return np.asarray(np.abs(partial).max(axis=-1) / np.sqrt(w.sum(axis=-1)), dtype=np.float64)


def drift_test(severity: ArrayLike, severity_se: ArrayLike, *, labels: Sequence[Hashable] | None = None,
               n_ratings: ArrayLike | None = None, simulations: int = 4000, seed: int = 20261128) -> DriftResult:
    """The change rule for one rater's period severities: standardised CUSUM with a simulated null.

    Under no change the period estimates are N(σ, se_t²); the statistic's null distribution is simulated for
    these very standard errors (``simulations`` draws, fixed seed), so P(p < α) = α up to Monte Carlo error.
    Source: Page (1954) CUSUM; the standardised form is the Brownian-bridge statistic of Ploberger & Krämer (1992).
    Example: severities −0.4, −0.2, 0, 0.2, 0.4 with SE 0.1 → p < 0.001.
    """
    sev = np.asarray(severity, dtype=np.float64)
    se = np.asarray(severity_se, dtype=np.float64)
    ok = np.isfinite(sev) & np.isfinite(se) & (se > 0)
    counts = np.asarray(n_ratings, dtype=np.int64) if n_ratings is not None else np.zeros(sev.size, dtype=np.int64)
    names = tuple(labels) if labels is not None else tuple(range(sev.size))
    if ok.sum() < 2:
        return DriftResult(labels=names, severity=sev, severity_se=se, n_ratings=counts, statistic=None,
                           p_value=None, slope=None, slope_se=None)
    x, s = sev[ok], se[ok]
    observed = float(_cusum(x, s))
    rng = np.random.default_rng(seed)
    null = _cusum(rng.standard_normal((simulations, x.size)) * s, np.broadcast_to(s, (simulations, x.size)))
    p_value = float((1 + (null >= observed - 1e-12).sum()) / (simulations + 1))
    t = np.flatnonzero(ok).astype(np.float64)
    w = 1.0 / s**2
    t_bar = (w * t).sum() / w.sum()
    sxx = (w * (t - t_bar) ** 2).sum()
    slope = float((w * (t - t_bar) * x).sum() / sxx) if sxx > 0 else None
    slope_se = float(1.0 / math.sqrt(sxx)) if sxx > 0 else None
    return DriftResult(labels=names, severity=sev, severity_se=se, n_ratings=counts, statistic=observed,
                       p_value=p_value, slope=slope, slope_se=slope_se)


def rater_drift(data: RaterData, fit: FacetsFit, periods: ArrayLike, *, min_ratings: int = 10,
                simulations: int = 4000) -> list[DriftResult]:
    """Severity per period (a cycle, or a week of a cycle) and the change rule, for every rater of ``fit``."""
    codes, labels = _codes(periods)
    order = sorted(range(len(labels)), key=lambda i: labels[i])  # type: ignore[arg-type,return-value]
    remap = np.empty(len(labels), dtype=np.int64)
    remap[order] = np.arange(len(labels))
    codes = remap[codes]
    ordered = tuple(labels[i] for i in order)
    sev, se, counts = period_severity(data, fit, codes, len(ordered), min_ratings=min_ratings)
    return [drift_test(sev[r], se[r], labels=ordered, n_ratings=counts[r], simulations=simulations, seed=20261128 + r)
            for r in range(len(fit.raters))]


# ---------------------------------------------------------------------------------------------------- classical
def clustered_proportion(hits: ArrayLike, cluster: ArrayLike, confidence: float = 0.95) -> tuple[float, float, tuple[float, float] | None]:
    """A proportion over ratings clustered in responses, with a Wilson interval on the effective n.

    Effective n = n / design effect, the design effect being the cluster-robust variance of the mean over the
    binomial one (Kish 1965), floored at 1. Returns (proportion, effective n, interval).
    """
    x = np.asarray(hits, dtype=np.float64)
    if x.size == 0:
        return float("nan"), 0.0, None
    codes, _ = _codes(cluster)
    p = float(x.mean())
    n = x.size
    sums = np.bincount(codes, x - p)
    robust = float((sums**2).sum()) / n**2 * (len(sums) / max(len(sums) - 1, 1))
    binom = p * (1 - p) / n
    deff = max(1.0, robust / binom) if binom > 0 else 1.0
    n_eff = n / deff
    return p, n_eff, wilson_proportion_interval(p, n_eff, confidence)


@dataclass(frozen=True)
class ClassicalFigures:
    """Classical per-rater figures (None where undefined), in the order of ``raters``."""

    raters: tuple[Hashable, ...]
    n_ratings: IntArray
    gold_n: IntArray
    gold_agreement: list[float | None]
    gold_interval: list[tuple[float, float] | None]
    panel_deviation: list[float | None]  # mean (own score − mean of the others' scores) on the same cells
    panel_deviation_interval: list[tuple[float, float] | None]
    alpha_without: list[float | None]
    alpha_change: list[float | None]  # α without − α with (positive: the panel agrees better without them)
    alpha_all: float | None


def classical_figures(data: RaterData, gold: ArrayLike | None = None) -> ClassicalFigures:
    """Agreement with gold, mean signed deviation from the rest of the panel and leave-one-out ordinal α.

    ``gold`` is one value per rating (the adjudicated score of that response × sub-dimension, NaN if none).
    Intervals: Wilson on the response-clustered effective n for agreement; normal with response-clustered
    standard errors for the deviation. α: Krippendorff's ordinal α over response × sub-dimension units
    (``stats.alpha``).
    """
    from stats.alpha import krippendorff_alpha, leave_one_rater_out

    n_raters = len(data.raters)
    cell = data.item * len(data.subs) + data.sub
    n_cells = len(data.items) * len(data.subs)
    cell_sum = np.bincount(cell, data.score.astype(np.float64), n_cells)
    cell_n = np.bincount(cell, minlength=n_cells)
    others_n = cell_n[cell] - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = np.where(others_n > 0, data.score - (cell_sum[cell] - data.score) / np.maximum(others_n, 1), np.nan)
    g = np.full(data.n, np.nan) if gold is None else np.asarray(gold, dtype=np.float64).ravel()
    gold_ok = np.isfinite(g)
    agree_v: list[float | None] = []
    agree_ci: list[tuple[float, float] | None] = []
    dev_v: list[float | None] = []
    dev_ci: list[tuple[float, float] | None] = []
    gold_n = np.zeros(n_raters, dtype=np.int64)
    for r in range(n_raters):
        mine = data.rater == r
        sel = mine & gold_ok
        gold_n[r] = int(sel.sum())
        if sel.any():
            p, _, ci = clustered_proportion(data.score[sel] == g[sel], data.item[sel])
            agree_v.append(p)
            agree_ci.append(ci)
        else:
            agree_v.append(None)
            agree_ci.append(None)
        sel = mine & np.isfinite(deviation)
        if sel.sum() >= 2:
            x, items = deviation[sel], data.item[sel]
            codes, _ = _codes(items)
            mean = float(x.mean())
            sums = np.bincount(codes, x - mean)
            k = len(sums)
            se = math.sqrt(float((sums**2).sum()) / x.size**2 * k / max(k - 1, 1)) if k > 1 else float("nan")
            dev_v.append(mean)
            dev_ci.append((mean - 1.96 * se, mean + 1.96 * se) if math.isfinite(se) else None)
        else:
            dev_v.append(None)
            dev_ci.append(None)
    matrix = np.full((n_raters, n_cells), np.nan)
    matrix[data.rater, cell] = data.score
    used = (cell_n >= 2)
    matrix = matrix[:, used]
    cats = list(range(data.categories))
    try:
        alpha_all = krippendorff_alpha(matrix, level="ordinal", categories=cats).alpha if used.any() else None
    except ValueError:
        alpha_all = None
    if used.any():
        loo = leave_one_rater_out(matrix, level="ordinal", categories=cats)
        alpha_without = [x.alpha_without for x in loo]
        change = [x.change for x in loo]
    else:
        alpha_without = [None] * n_raters
        change = [None] * n_raters
    return ClassicalFigures(raters=data.raters, n_ratings=np.bincount(data.rater, minlength=n_raters).astype(np.int64),
                            gold_n=gold_n, gold_agreement=agree_v, gold_interval=agree_ci, panel_deviation=dev_v,
                            panel_deviation_interval=dev_ci, alpha_without=alpha_without, alpha_change=change,
                            alpha_all=alpha_all)


# ---------------------------------------------------------------------------------------------------- fatigue
def sitting_positions(times: ArrayLike, seconds: ArrayLike, *, gap_minutes: float = 30.0) -> Array:
    """Minutes of active work before each item in its sitting; one expert's items in submission order.

    ``times`` are submission times in seconds; a pause longer than ``gap_minutes`` between one submission and
    the next item's start (its submission minus its active seconds) starts a new sitting.
    """
    t = np.asarray(times, dtype=np.float64)
    s = np.asarray(seconds, dtype=np.float64)
    out = np.zeros(t.size)
    elapsed = 0.0
    for i in range(t.size):
        if i and (t[i] - s[i]) - t[i - 1] > gap_minutes * 60:
            elapsed = 0.0
        out[i] = elapsed / 60.0
        elapsed += s[i]
    return out


@dataclass(frozen=True)
class PositionBin:
    """Agreement and time per item in one band of minutes into a sitting."""

    label: str
    n: int
    agreement: float | None
    interval: tuple[float, float] | None
    median_seconds: float | None


def fatigue_profile(minutes: ArrayLike, agree: ArrayLike, seconds: ArrayLike, *,
                    edges: Sequence[float] = (0, 20, 40, 60)) -> list[PositionBin]:
    """Agreement (with gold or the panel; NaN = not comparable) and seconds per item by minutes into a sitting."""
    m = np.asarray(minutes, dtype=np.float64)
    a = np.asarray(agree, dtype=np.float64)
    s = np.asarray(seconds, dtype=np.float64)
    bounds = list(edges) + [math.inf]
    out: list[PositionBin] = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        sel = (m >= lo) & (m < hi)
        label = f"{lo:g}–{hi:g} min" if math.isfinite(hi) else f"after {lo:g} min"
        ok = sel & np.isfinite(a)
        n = int(ok.sum())
        p = float(a[ok].mean()) if n else None
        out.append(PositionBin(label=label, n=int(sel.sum()), agreement=p,
                               interval=wilson_proportion_interval(p, n) if p is not None else None,
                               median_seconds=float(np.median(s[sel])) if sel.any() else None))
    return out


# ---------------------------------------------------------------------------------------------------- retest
@dataclass(frozen=True)
class RetestResult:
    """Intra-rater agreement between a first scoring and a blind re-scoring of the same cells."""

    n_pairs: int
    n_items: int
    exact: float | None
    exact_interval: tuple[float, float] | None
    kappa: float | None  # quadratic-weighted κ between the two scorings
    kappa_interval: tuple[float, float] | None
    note: str = ""


def _quadratic_kappa(a: Array, b: Array, weights: Array, categories: int) -> float:
    """Weighted (per pair) quadratic κ = 1 − Σ w (a−b)² / Σ_{ij} w_i w_j (a_i−b_j)² / Σw²… via moments."""
    tot = weights.sum()
    obs = (weights * (a - b) ** 2).sum() / tot
    ma, mb = (weights * a).sum() / tot, (weights * b).sum() / tot
    va, vb = (weights * (a - ma) ** 2).sum() / tot, (weights * (b - mb) ** 2).sum() / tot
    expected = va + vb + (ma - mb) ** 2
    return float(1.0 - obs / expected) if expected > 0 else float("nan")


def test_retest(first: ArrayLike, second: ArrayLike, items: ArrayLike, *, categories: int = 4,
                confidence: float = 0.95) -> RetestResult:
    """Intra-rater agreement: exact agreement (Wilson on the response-clustered effective n) and quadratic κ
    (= Cohen's κ with quadratic weights) with a delete-one-response jackknife interval on Fisher's z = atanh κ and
    Student's t with (responses − 1) degrees of freedom (Fleiss & Davies 1982 for κ's jackknife; the z scale keeps
    the interval inside (−1, 1)).

    Simulated coverage with 15 re-served responses × 4 sub-dimensions: 0.955 (a percentile bootstrap over the same
    15 responses covered 0.92). Example: identical scorings → exact 1, κ 1. Too few pairs (< 10), fewer than three
    responses or one category only: a note instead of the figure.
    """
    from scipy.stats import t as student_t

    a = np.asarray(first, dtype=np.float64).ravel()
    b = np.asarray(second, dtype=np.float64).ravel()
    codes, labels = _codes(items)
    if not (a.size == b.size == codes.size):
        raise RaterDataError("first, second and items must have one entry per re-scored cell")
    if a.size < 10:
        return RetestResult(n_pairs=int(a.size), n_items=len(labels), exact=None, exact_interval=None, kappa=None,
                            kappa_interval=None, note=f"only {a.size} re-scored cells; at least 10 are needed")
    exact, _, exact_ci = clustered_proportion(a == b, codes, confidence)
    k = len(labels)
    if np.unique(np.concatenate([a, b])).size < 2:
        return RetestResult(n_pairs=int(a.size), n_items=k, exact=exact, exact_interval=exact_ci,
                            kappa=None, kappa_interval=None,
                            note="every score in one category: κ is undefined (chance agreement is 1)")
    ones = np.ones(a.size)
    kappa = _quadratic_kappa(a, b, ones, categories)
    kappa_ci: tuple[float, float] | None = None
    note = ""
    if k >= 3 and math.isfinite(kappa):
        leave = np.array([_quadratic_kappa(a[codes != i], b[codes != i], ones[codes != i], categories)
                          for i in range(k)])
        if np.all(np.isfinite(leave)):
            z = np.arctanh(np.clip(leave, -0.999999, 0.999999))
            se = math.sqrt((k - 1) / k * float(((z - z.mean()) ** 2).sum()))
            centre = math.atanh(min(max(kappa, -0.999999), 0.999999))
            half = float(student_t.ppf(0.5 + confidence / 2, k - 1)) * se
            kappa_ci = (math.tanh(centre - half), math.tanh(centre + half))
        else:
            note = "κ is undefined without one of the responses, so it has no interval"
    elif k < 3:
        note = "fewer than three re-served responses: κ has no interval"
    return RetestResult(n_pairs=int(a.size), n_items=k, exact=exact, exact_interval=exact_ci,
                        kappa=kappa if math.isfinite(kappa) else None, kappa_interval=kappa_ci, note=note)


test_retest.__test__ = False  # type: ignore[attr-defined]  # a statistic, not a pytest test
