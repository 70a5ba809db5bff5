"""Anytime-valid, prediction-powered confidence sequences for bounded means — pure numpy/scipy, no Django.

An admin labels, looks, labels more and stops when a pair looks settled. A fixed-n interval (``stats.ppi``) is
valid only at a sample size chosen in advance; looked at after every label it claims "separated" far more often
than α (issue 31). A **confidence sequence** (C_t) satisfies P(θ ∈ C_t for every t = 1, 2, …) ≥ 1 − α, so the
interval shown after any number of labels — chosen by looking — keeps its coverage (Howard, Ramdas, McAuliffe &
Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 2021).

**Pseudo-outcomes** (prediction-powered and inverse-probability weighted: Angelopoulos et al., Science 2023;
PPI++, arXiv 2311.01453; Zrnic & Candès, "Active statistical inference", ICML 2024; sequential IPW as in
Waudby-Smith et al., "Anytime-valid off-policy inference for contextual bandits", 2022). The estimand is the
weighted mean of the expected expert score over the N judged items, θ = Σ vᵢ E[Yᵢ], vᵢ = w_unlabeledᵢ /
Σ w_unlabeled (1/N without weights). Label t is item I_t, drawn with probability p(i) = πᵢ / Σ π_unlabeled
(1/N for a uniform draw); with rₜ = v_{I_t} / p(I_t) and the judge's weighted mean μ_f = Σ vᵢ Ŷᵢ (known exactly,
every item is judged):

    Zₜ = λₜ μ_f + rₜ (Yₜ − λₜ Ŷₜ),        E[Zₜ | labels before t] = θ   for every λₜ fixed before label t.

λₜ (PPI++'s power tuning) is tuned **only on past labels**: λₜ = clip(Ĉov(rY, rŶ) / V̂ar(rŶ), 0, 1) over labels
1..t−1 (the λ minimising Var Zₜ; 0 for the first ``LAM_WARMUP`` labels), rounded to 0.05. Tuning on the labels
it is then applied to is where fixed-n PPI++ leaked coverage at small n (issue 31; Mani et al., arXiv 2505.20178).
The draw is treated as with replacement; drawing without replacement from N ≫ n items changes nothing visible.

**The default sequence** (``method="boundary"``): reject a candidate mean m at label t when the standardised
sum crosses a line, |Σₛ≤ₜ (Zₛ − m)| ≥ σ̂ₜ (a + b t), i.e.

    Cₜ = ∩ₛ≤ₜ [ Z̄ₛ ± σ̂ₛ mₛ ] ∩ bounds,   mₜ = q_{t−1}(pₜ) / √t              (running intersection)

where pₜ is the upper tail probability of the line's z value (a + bt)/√t and q_{t−1} Student's t quantile with
t − 1 degrees of freedom at that tail (the studentisation: for large t, mₜ → (a + bt)/t; one label gives the whole
space), and σ̂²ₜ = (σ₀² + Σ (Zₛ − Z̄ₜ)²) / t (one prior pseudo-observation σ₀ = range/4, so a handful of equal
labels never gives a zero width). The line (a, b) is the narrowest at ``horizon`` labels among those a Brownian
motion crosses with probability α/2 per side:

- ``max_labels=None`` (valid for ever): Ville's bound e^{−2ab} = α/2 — the sub-Gaussian linear boundary of
  Howard et al. (2021, §3; Robbins 1970), a = b·horizon, b = √(log(2/α) / (2·horizon));
- ``max_labels=T``: the exact crossing probability of a line by time T (Siegmund, *Sequential Analysis*, 1985,
  eq. 3.15): P(∃t ≤ T: W_t ≥ a + bt) = 1 − Φ((a + bT)/√T) + e^{−2ab} Φ((bT − a)/√T) = α/2. Narrower (a
  repeated-confidence-interval design, Jennison & Turnbull 1984), valid for every look up to T labels; labels
  after the T-th are not used (the note says so).

Looking after every label is discrete monitoring of that line, so the crossing probability only falls. The
guarantee is asymptotic in the sense of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas ("Time-uniform central
limit theory and asymptotic confidence sequences", Ann. Statist. 2024): σ̂ replaces σ and the sum is treated as
Brownian. At 5–10 labels that is carried by the studentisation, the prior σ₀ and the width of the line at small t;
the tests and the benchmark measure the coverage there with a known truth (≥ 0.979 at 5–40 labels per cell).

**Arrival order.** Label t must be a draw from the design when it arrives (a random assignment order does it); an
order that follows the strata or the judge's score biases the early intervals — then run one sequence per stratum.

**The distribution-free sequence** (``method="betting"``): Waudby-Smith & Ramdas, "Estimating means of bounded
random variables by betting", JRSS-B 2024, §4 (hedged capital, predictable plug-in bets), on the same Zₜ:

    K⁺ₜ(m) = Πₛ≤ₜ (1 + β⁺ₛ(m)(Zₛ − m)),   K⁻ₜ(m) = Πₛ≤ₜ (1 − β⁻ₛ(m)(Zₛ − m)),
    β⁺ₛ(m) = min(β̂ₛ, c/(m − Lₛ)),  β⁻ₛ(m) = min(β̂ₛ, c/(Uₛ − m)),  c = 1/2,
    β̂ₜ = √(2 log(2/α) / (σ̂²ₜ₋₁ · t log(1 + t)))  (or · horizon instead of t log(1+t)),
    Cₜ = {m in bounds : maxₛ≤ₜ max(K⁺ₛ(m), K⁻ₛ(m)) < 2/α}.

Valid for every n with no approximation (Ville's inequality). Zₜ lies in [Lₜ, Uₜ], Lₜ = λₜμ_f + minᵢ rᵢ(a −
λₜŶᵢ), Uₜ = λₜμ_f + maxᵢ rᵢ(b − λₜŶᵢ) over **every** item that could be drawn (a bet is placed before the draw,
so it must survive the least likely item): the range grows with max v/π and caps the bet. When the
pseudo-outcomes are concentrated (residual sd ≈ 0.1 on a 0–1 scale) the cap, not the variance, sets the width,
and the interval is ≈ 2.5 × the fixed-n one at 100 labels: the price of assuming nothing but the bounds (the
range/n term of every distribution-free bound, as in Bernstein's). The benchmark reports both methods.

**Costs.** A Ville-based sequence pays at least √(2 log(2/α)) / z₁₋α/₂ = 1.386 (α = 0.05) over the fixed-n
normal interval at the n it is tuned for; the normal-mixture sequence tuned there ≈ 1.55; the line with a
maximum of T = 2 × horizon labels 1.36, T = horizon 1.14 (in theory, known σ); measured on the benchmark with the
studentisation, σ̂, predictable λ and the running intersection: 1.28 at 100 labels with T = 200.

Two models: ``difference_cs`` (independent samples: the t-th label of each model forms a step, Dₜ = Z^a_t −
Z^b_t) and ``paired_difference_cs`` (the same cases labelled for both models: the sequence runs on per-case
differences — narrower when the models' scores on a case correlate). ``pair_verdict`` turns a difference into
separated / equivalent within ±m / continue, valid under continuous monitoring because the sequence is;
``labels_to_verdict`` forecasts the steps still needed.

Inputs that cannot give an interval (no labels, mismatched or non-finite arrays, weights or π ≤ 0, a margin
outside (0, scale)) give a result with ``status`` and a ``reason`` in words and the whole scale as the interval —
never NaN, never an exception.

Example:
    >>> est = mean_cs([0.6, 0.7, 0.5, 0.8, 0.6, 0.7], [0.55, 0.7, 0.45, 0.75, 0.6, 0.65], [0.5, 0.6, 0.7] * 50)
    >>> est.status, 0.0 <= est.lower < est.estimate < est.upper <= 1.0
    ('ok', True)
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

ArrayLike = Sequence[float] | np.ndarray

METHODS = ("boundary", "betting")
DEFAULT_HORIZON = 50  # labels at which the default line is narrowest (a planned cell or pair; pass your plan)
BET_CAP = 0.5  # WSR's truncation c: a bet never stakes more than half the capital against the worst case
LAM_WARMUP = 3  # λ = 0 for the first labels: a covariance from fewer than 3 labels is noise
LAM_STEP = 0.05  # λₜ is rounded to this grid (predictable either way; the grid keeps the betting bounds cheap)
FEW_LABELS = 5  # below this the interval is valid but a page should say it is wide because n is small
GRID = 257  # betting: coarse grid over the space, then as many points inside each edge's grid cell
METHOD_LABELS = {
    "boundary": "prediction-powered confidence sequence (IPW pseudo-outcomes, linear boundary; Howard et al. 2021)",
    "betting": "prediction-powered betting confidence sequence (IPW pseudo-outcomes; Waudby-Smith & Ramdas 2024)",
}
EMPTIED_NOTE = ("the sequence excluded every value (this happens with probability ≤ α): the interval shown is "
                "the latest one, not intersected with the earlier ones")


# ---------------------------------------------------------------------------------------------------------------
# Inputs and results


@dataclass(frozen=True)
class LabelledSample:
    """One model's (or cell's) data: expert labels in arrival order and the judge on every item.

    Y, Yhat: the expert label and the judge's score of each labelled item, in the order the labels arrived.
    Yhat_unlabeled: the judge's score of every item the estimate is about (the whole judged population, the
    labelled items included). w / w_unlabeled: the items' weights in the estimand (e.g. difficulty weights), on
    one scale. pi / pi_unlabeled: inclusion probabilities of the draw, of each labelled item and of every item;
    only their ratios matter. None = unweighted / uniform.
    """

    Y: ArrayLike  # noqa: N815
    Yhat: ArrayLike  # noqa: N815
    Yhat_unlabeled: ArrayLike  # noqa: N815
    w: ArrayLike | None = None
    w_unlabeled: ArrayLike | None = None
    pi: ArrayLike | None = None
    pi_unlabeled: ArrayLike | None = None


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its anytime-valid interval after n labels.

    status: "ok"; "few_labels" (valid but wide: fewer than 5 labels); "no_labels" (the interval is the whole
    scale); "invalid" (the input cannot give an interval; ``reason`` names the field and why).
    estimate: the mean of the pseudo-outcomes, kept inside [lower, upper]; None without labels.
    lam: λ used on the last label (0 before ``LAM_WARMUP`` labels). notes: decisions taken for you, in words.
    """

    estimate: float | None
    lower: float
    upper: float
    n: int
    N: int  # noqa: N815 — the papers' N
    alpha: float
    bounds: tuple[float, float]
    lam: float
    status: str
    reason: str | None = None
    notes: tuple[str, ...] = ()
    method: str = METHOD_LABELS["boundary"]

    @property
    def width(self) -> float:
        return self.upper - self.lower


@dataclass(frozen=True)
class DifferenceEstimate:
    """a − b with its anytime-valid interval; ``paired`` says whether it came from per-case differences.

    n: the sequence's steps (looks): for independent samples the pairs of labels, min(n_a, n_b) — the longer
    sample's extra labels wait for a partner; for paired samples the cases labelled for both models.
    sd: the standard deviation of one step (for ``labels_to_verdict``); None without two steps.
    """

    estimate: float | None
    lower: float
    upper: float
    n: int
    n_a: int
    n_b: int
    alpha: float
    bounds: tuple[float, float]
    paired: bool
    status: str
    reason: str | None = None
    notes: tuple[str, ...] = ()
    method: str = METHOD_LABELS["boundary"]
    sd: float | None = None

    @property
    def width(self) -> float:
        return self.upper - self.lower


@dataclass(frozen=True)
class Verdict:
    """A monitored pair's verdict: "separated" (``leader`` "a" or "b"), "equivalent" (within ±margin),
    "continue", or "invalid" (``reason`` says why). ``looks``: the sequence's steps so far (its n).

    Valid under continuous monitoring: with probability ≥ 1 − α the sequence never excludes the true gap, so a
    "separated" verdict for equal models, or an "equivalent" one for models more than the margin apart, happens
    with probability ≤ α however often one looks.
    """

    verdict: str
    leader: str | None
    margin: float
    lower: float
    upper: float
    looks: int
    reason: str


@dataclass(frozen=True)
class Forecast:
    """Expected further steps (labels per model) to a verdict; None with a reason when none is in reach."""

    labels: int | None
    target: str  # "separated" | "equivalent" | "none"
    reason: str


@dataclass(frozen=True)
class _Stream:
    """Pseudo-outcomes with their bounds (for betting), or why there are none."""

    z: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray
    n: int
    big_n: int
    notes: tuple[str, ...] = ()
    reason: str | None = None
    status: str = "ok"


_EMPTY = np.zeros(0)


def _failed(reason: str | None, status: str = "invalid", n: int = 0, big_n: int = 0,
            notes: tuple[str, ...] = ()) -> _Stream:
    return _Stream(_EMPTY, _EMPTY, _EMPTY, _EMPTY, n, big_n, notes=notes, reason=reason, status=status)


# ---------------------------------------------------------------------------------------------------------------
# Input checks (every problem becomes a reason in words) and pseudo-outcomes


def _array(name: str, values: ArrayLike | None) -> tuple[np.ndarray | None, str | None]:
    if values is None:
        return None, None
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return None, f"{name} must be numbers"
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        return None, f"{name} must be a list of numbers, got shape {array.shape}"
    if not np.isfinite(array).all():
        return None, f"{name} has a missing or infinite value at position {int(np.argmin(np.isfinite(array)))}"
    return array, None


def _check_common(alpha: float, bounds: tuple[float, float], method: str, horizon: int | None,
                  max_labels: int | None) -> str | None:
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        return f"alpha must be between 0 and 1, got {alpha}"
    lo, hi = bounds
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        return f"bounds must be two finite numbers, lower < upper, got {bounds}"
    if method not in METHODS:
        return f"method must be one of {', '.join(METHODS)}, got {method!r}"
    for name, value in (("horizon", horizon), ("max_labels", max_labels)):
        if value is not None and (not isinstance(value, int | np.integer) or value < 1):
            return f"{name} must be a whole number of labels ≥ 1 (or None), got {value}"
    if horizon is not None and max_labels is not None and horizon > max_labels:
        return f"horizon ({horizon}) cannot exceed max_labels ({max_labels})"
    return None


def _shown(bounds: tuple[float, float]) -> tuple[float, float]:
    """The interval to show when there is none to compute: the bounds, or 0–1 when the bounds are unusable."""
    lo, hi = bounds
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo < hi else (0.0, 1.0)


def _stream_arrays(sample: LabelledSample, bounds: tuple[float, float]) -> dict[str, np.ndarray | None] | _Stream:
    """The sample's arrays, checked (sizes, bounds, weights, inclusion probabilities), or the failed stream."""
    arrays: dict[str, np.ndarray | None] = {}
    for name in ("Y", "Yhat", "Yhat_unlabeled", "w", "w_unlabeled", "pi", "pi_unlabeled"):
        arrays[name], problem = _array(name, getattr(sample, name))
        if problem:
            return _failed(problem)
    y, yhat, yhat_u = arrays["Y"], arrays["Yhat"], arrays["Yhat_unlabeled"]
    if y is None or yhat is None or yhat_u is None:
        return _failed("Y, Yhat and Yhat_unlabeled are required")
    n, big_n = int(y.size), int(yhat_u.size)
    if yhat.size != n:
        return _failed(f"Y has {n} labels but Yhat has {yhat.size} judge scores: they must be paired item by item")
    if big_n == 0:
        return _failed("no judged items (Yhat_unlabeled is empty): there is nothing to estimate", n=n)
    a, b = bounds
    for name, values in (("Y", y), ("Yhat", yhat), ("Yhat_unlabeled", yhat_u)):
        outside = values[(values < a - 1e-12) | (values > b + 1e-12)]
        if outside.size:
            return _failed(f"{name} has values outside the bounds {a:g}–{b:g} (e.g. {outside[0]:g})", n=n, big_n=big_n)
    problem = _weights_problem(arrays, n, big_n)
    return _failed(problem, n=n, big_n=big_n) if problem else arrays


def _weights_problem(arrays: dict[str, np.ndarray | None], n: int, big_n: int) -> str | None:
    """What is wrong with the weights w and inclusion probabilities π, in words (None: nothing)."""
    w, w_u, pi, pi_u = arrays["w"], arrays["w_unlabeled"], arrays["pi"], arrays["pi_unlabeled"]
    if (w is None) != (w_u is None):
        return "w and w_unlabeled go together: the weights of the labelled items and of every item"
    if (pi is None) != (pi_u is None):
        return ("pi and pi_unlabeled go together: the inclusion probability of each labelled item and of "
                "every item (only their ratios matter)")
    for name, given, size in (("w", w, n), ("w_unlabeled", w_u, big_n), ("pi", pi, n),
                               ("pi_unlabeled", pi_u, big_n)):
        if given is None:
            continue
        if given.size != size:
            return f"{name} has {given.size} values for {size} items"
        if name.startswith("pi") and ((given <= 0).any() or (given > 1 + 1e-12).any()):
            return (f"{name} must be inclusion probabilities in (0, 1]: an item with π = 0 can never be "
                    "drawn, so no weighting can stand for it")
        if name.startswith("w") and ((given < 0).any() or (size and given.sum() <= 0)):
            return f"{name} must be non-negative with a positive sum"
    return None


def _lambdas(lam: float | None, n: int, ry: np.ndarray, ryhat: np.ndarray, spread: np.ndarray,
             notes: list[str]) -> np.ndarray:
    """λₜ for each label: the fixed `lam`, or tuned on the labels before t (a note when the judge is constant)."""
    lams = np.zeros(n)
    if lam is not None:
        lams[:] = float(lam)
    elif spread.max() - spread.min() <= 1e-12 * max(1.0, abs(float(spread.max()))):
        notes.append("the judge's scores do not vary (constant judge): λ = 0, the experts-only sequence")
    elif n > LAM_WARMUP:
        # λ for label t+1 from labels 1..t: running sums give every prefix's covariance at once.
        k = np.arange(1, n + 1, dtype=float)
        sx, sy = np.cumsum(ry), np.cumsum(ryhat)
        sxy, syy = np.cumsum(ry * ryhat), np.cumsum(ryhat * ryhat)
        cov = sxy - sx * sy / k
        var = syy - sy * sy / k
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(var > 1e-12 * np.maximum(syy, 1e-300), cov / var, 0.0)
        tuned = np.clip(np.nan_to_num(ratio), 0.0, 1.0)
        lams[LAM_WARMUP:] = tuned[LAM_WARMUP - 1:n - 1]
        lams = np.round(np.round(lams / LAM_STEP) * LAM_STEP, 10)
    return lams


def _stream(sample: LabelledSample, *, bounds: tuple[float, float], lam: float | None,
            with_bounds: bool = True) -> _Stream:
    """Pseudo-outcomes Zₜ with predictable λₜ and their bounds [Lₜ, Uₜ] (module doc), or a reason.

    with_bounds=False skips [Lₜ, Uₜ] (zeros): only the betting method uses them.
    """
    arrays = _stream_arrays(sample, bounds)
    if isinstance(arrays, _Stream):
        return arrays
    y, yhat, yhat_u = arrays["Y"], arrays["Yhat"], arrays["Yhat_unlabeled"]
    assert y is not None and yhat is not None and yhat_u is not None  # checked by _stream_arrays
    w, w_u, pi, pi_u = arrays["w"], arrays["w_unlabeled"], arrays["pi"], arrays["pi_unlabeled"]
    n, big_n = int(y.size), int(yhat_u.size)
    a, b = bounds
    notes: list[str] = []
    if pi_u is not None and pi is not None and np.all(pi_u == 1.0) and np.all(pi == 1.0):
        notes.append("π = 1 for every item: every item was certain to be drawn, so the draw is uniform (weights 1)")
    # rᵢ = vᵢ / p(i), scaled so that a uniform, unweighted draw has r = 1.
    v_scale = float(np.mean(w_u)) if w_u is not None else 1.0
    p_scale = float(np.mean(pi_u)) if pi_u is not None else 1.0
    v_u = w_u / v_scale if w_u is not None else np.ones(big_n)
    r_u = v_u * (p_scale / pi_u if pi_u is not None else 1.0)
    r = (w / v_scale if w is not None else np.ones(n)) * (p_scale / pi if pi is not None else 1.0)
    mu_f = float(np.mean(v_u * yhat_u))  # Σ vᵢ Ŷᵢ
    if n == 0:
        return _failed("no expert labels yet: the interval is the whole scale", status="no_labels", big_n=big_n,
                       notes=tuple(notes))
    if lam is not None and not (isinstance(lam, int | float) and math.isfinite(lam) and 0 <= lam <= 1):
        return _failed(f"lam must be between 0 and 1 (or None: tuned on past labels), got {lam}", n=n, big_n=big_n)
    ry, ryhat = r * y, r * yhat
    lams = _lambdas(lam, n, ry, ryhat, np.concatenate([r_u * yhat_u, ryhat]), notes)
    low = np.zeros(n)
    high = np.zeros(n)
    r_all = np.concatenate([r_u, r])
    yhat_all = np.concatenate([yhat_u, yhat])
    for value in np.unique(lams) if with_bounds else ():
        mask = lams == value
        low[mask] = value * mu_f + float(np.min(r_all * (a - value * yhat_all)))
        high[mask] = value * mu_f + float(np.max(r_all * (b - value * yhat_all)))
    z = lams * mu_f + r * (y - lams * yhat)
    status = "few_labels" if n < FEW_LABELS else "ok"
    reason = (f"{n} expert label{'' if n == 1 else 's'}: the interval is valid but wide; it narrows as labels "
              "arrive" if status == "few_labels" else None)
    return _Stream(z, low, high, lams, n, big_n, notes=tuple(notes), reason=reason, status=status)


# ---------------------------------------------------------------------------------------------------------------
# The linear boundary (default)


def _crossing(a: float, b: float, horizon_t: float) -> float:
    """P(∃t ≤ T: W_t ≥ a + bt) for a standard Brownian motion (Siegmund 1985, eq. 3.15)."""
    root = math.sqrt(horizon_t)
    return float(scipy_stats.norm.sf((a + b * horizon_t) / root)
                 + math.exp(-2 * a * b) * scipy_stats.norm.cdf((b * horizon_t - a) / root))


@functools.lru_cache(maxsize=512)
def boundary_line(alpha: float, horizon: int, max_labels: int | None) -> tuple[float, float]:
    """(a, b) of the line |Σ(Z − m)| ≥ σ(a + bt) narrowest at ``horizon`` with crossing probability α/2 per side.

    max_labels None: Ville, a·b = log(2/α)/2 and a = b·horizon (Howard et al. 2021 §3). Otherwise the exact
    crossing probability by T = max_labels (Siegmund 1985 eq. 3.15), minimised over b with a solved for.
    """
    target = math.log(2 / alpha)
    b_ville = math.sqrt(target / (2 * horizon))
    if max_labels is None:
        return b_ville * horizon, b_ville

    def a_for(b: float) -> float:
        return float(optimize.brentq(lambda a: _crossing(a, b, float(max_labels)) - alpha / 2, 0.0,
                                     50.0 * math.sqrt(max_labels) + 50.0, xtol=1e-10))

    best = optimize.minimize_scalar(lambda b: a_for(b) + b * horizon, bounds=(0.0, 3 * b_ville), method="bounded",
                                    options={"xatol": 1e-7})
    b = float(best.x)
    return a_for(b), b


def _sigma(z: np.ndarray, space: tuple[float, float]) -> np.ndarray:
    """σ̂ₜ for every prefix: (σ₀² + Σ (Zₛ − Z̄ₜ)²) / t with σ₀ = range/4 (one prior pseudo-observation)."""
    t = np.arange(1, z.size + 1, dtype=float)
    mean = np.cumsum(z) / t
    centred_ss = np.maximum(np.cumsum(z * z) - t * mean * mean, 0.0)
    prior = ((space[1] - space[0]) / 4) ** 2
    return np.sqrt((prior + centred_ss) / t)


@functools.lru_cache(maxsize=256)
def _multipliers(alpha: float, horizon: int, max_labels: int | None, n: int) -> np.ndarray:
    """Half-width / σ̂ₜ for t = 1..n: the line's normal critical value (a + bt)/√t, studentised, over √t.

    The line (a + bt)/√t is a z value with tail probability p_t; it is replaced by Student's t quantile with
    t − 1 degrees of freedom at the same tail probability (the usual small-sample correction, as for a repeated
    t-interval): σ̂ₜ from a handful of labels is noisy, and from 1 label undefined (the whole space).
    """
    a, b = boundary_line(alpha, horizon, max_labels)
    t = np.arange(1, n + 1, dtype=float)
    z = (a + b * t) / np.sqrt(t)
    multiplier = np.full(n, np.inf)
    if n > 1:
        tail = scipy_stats.norm.sf(z[1:])
        multiplier[1:] = scipy_stats.t.isf(tail, df=t[1:] - 1) / np.sqrt(t[1:])
    multiplier.setflags(write=False)
    return multiplier


def _boundary_path(z: np.ndarray, space: tuple[float, float], alpha: float, horizon: int,
                   max_labels: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per prefix: running-intersection lower, upper, the current mean, and whether the intersection went empty."""
    t = np.arange(1, z.size + 1, dtype=float)
    mean = np.cumsum(z) / t
    with np.errstate(invalid="ignore"):
        half = _sigma(z, space) * _multipliers(float(alpha), int(horizon), max_labels, int(z.size))
    low = np.clip(mean - half, space[0], space[1])
    high = np.clip(mean + half, space[0], space[1])
    run_low = np.maximum.accumulate(low)
    run_high = np.minimum.accumulate(high)
    empty = run_low > run_high
    lower = np.where(empty, low, run_low)
    upper = np.where(empty, high, run_high)
    return lower, upper, mean, empty


# ---------------------------------------------------------------------------------------------------------------
# The betting sequence (WSR 2024 §4), on a stream with bounds


def _bets(z: np.ndarray, alpha: float, prior_mean: float, prior_var: float, horizon: int | None) -> np.ndarray:
    """β̂ₜ from labels before t: WSR's predictable plug-in (t log(1+t)) or tuned for a fixed horizon."""
    n = z.size
    t = np.arange(1, n + 1, dtype=float)
    mu = (prior_mean + np.cumsum(z)) / (t + 1)  # μ̂ₜ after t labels
    var = (prior_var + np.cumsum((z - mu) ** 2)) / (t + 1)  # σ̂²ₜ after t labels
    var_before = np.maximum(np.concatenate([[prior_var], var[:-1]]), 1e-12 * max(prior_var, 1e-12))
    scale = t * np.log1p(t) if horizon is None else np.full(n, float(horizon))
    return np.sqrt(2 * math.log(2 / alpha) / (var_before * scale))


def _betting_logk(m: np.ndarray, z: np.ndarray, low: np.ndarray, high: np.ndarray,
                  bet: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running max over s ≤ t of log K⁺ₛ(m) and log K⁻ₛ(m): rows t, columns m."""
    zz, lo, hi, bb = z[:, None], low[:, None], high[:, None], bet[:, None]
    mm = m[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        beta_plus = np.minimum(bb, np.where(mm > lo, BET_CAP / (mm - lo), np.inf))
        beta_minus = np.minimum(bb, np.where(hi > mm, BET_CAP / (hi - mm), np.inf))
    plus = np.maximum.accumulate(np.cumsum(np.log1p(beta_plus * (zz - mm)), axis=0), axis=0)
    minus = np.maximum.accumulate(np.cumsum(np.log1p(-beta_minus * (zz - mm)), axis=0), axis=0)
    return plus, minus


def _betting_interval(z: np.ndarray, low: np.ndarray, high: np.ndarray, space: tuple[float, float], alpha: float,
                      horizon: int | None) -> tuple[float, float, bool]:
    """The betting sequence after all of z, its ends refined in their grid cell and rounded outward."""
    bet = _bets(z, alpha, (space[0] + space[1]) / 2, ((space[1] - space[0]) / 2) ** 2, horizon)
    threshold = math.log(2 / alpha)
    grid = np.linspace(space[0], space[1], GRID)
    plus, minus = (x[-1] for x in _betting_logk(grid, z, low, high, bet))
    accepted = (plus < threshold) & (minus < threshold)
    if not accepted.any():
        k = int(np.argmin(np.maximum(plus, minus)))
        return float(grid[max(k - 1, 0)]), float(grid[min(k + 1, GRID - 1)]), True
    first, last = int(np.argmax(accepted)), int(GRID - 1 - np.argmax(accepted[::-1]))
    lower, upper = float(grid[0]), float(grid[-1])
    if first > 0:  # the edge lies in (grid[first-1], grid[first]]: keep the last rejected point of a finer grid
        fine = np.linspace(grid[first - 1], grid[first], GRID)
        fine_plus = _betting_logk(fine, z, low, high, bet)[0][-1]
        rejected = np.flatnonzero(fine_plus >= threshold)
        lower = float(fine[rejected[-1]]) if rejected.size else float(grid[first - 1])
    if last < GRID - 1:
        fine = np.linspace(grid[last], grid[last + 1], GRID)
        fine_minus = _betting_logk(fine, z, low, high, bet)[1][-1]
        rejected = np.flatnonzero(fine_minus >= threshold)
        upper = float(fine[rejected[0]]) if rejected.size else float(grid[last + 1])
    return lower, upper, False


def _betting_path(z: np.ndarray, low: np.ndarray, high: np.ndarray, space: tuple[float, float], alpha: float,
                  horizon: int | None, points: int) -> tuple[np.ndarray, np.ndarray]:
    bet = _bets(z, alpha, (space[0] + space[1]) / 2, ((space[1] - space[0]) / 2) ** 2, horizon)
    threshold = math.log(2 / alpha)
    grid = np.linspace(space[0], space[1], points)
    plus, minus = _betting_logk(grid, z, low, high, bet)
    accepted = (plus < threshold) & (minus < threshold)
    first = np.argmax(accepted, axis=1)
    last = points - 1 - np.argmax(accepted[:, ::-1], axis=1)
    lower = grid[np.maximum(first - 1, 0)]
    upper = grid[np.minimum(last + 1, points - 1)]
    for t in np.flatnonzero(~accepted.any(axis=1)):
        k = int(np.argmin(np.maximum(plus[t], minus[t])))
        lower[t], upper[t] = grid[max(k - 1, 0)], grid[min(k + 1, points - 1)]
    return lower, upper


# ---------------------------------------------------------------------------------------------------------------
# One stream → an interval


@dataclass(frozen=True)
class _Settings:
    alpha: float
    method: str
    horizon: int | None
    max_labels: int | None


def _truncate(stream: _Stream, max_labels: int | None) -> tuple[_Stream, tuple[str, ...]]:
    if max_labels is None or stream.n <= max_labels:
        return stream, ()
    note = (f"{stream.n - max_labels} label(s) after the first {max_labels} (the design's max_labels) are not "
            "used: the sequence is valid up to max_labels; start a new one to go further")
    return _Stream(stream.z[:max_labels], stream.low[:max_labels], stream.high[:max_labels],
                   stream.lam[:max_labels], max_labels, stream.big_n, stream.notes, stream.reason,
                   stream.status), (note,)


def _final(stream: _Stream, space: tuple[float, float], s: _Settings) -> tuple[float, float, float, tuple[str, ...]]:
    """(lower, upper, estimate, notes) after every label of a usable stream.

    Fewer than ``FEW_LABELS`` labels (steps) never give a zero-width interval: a boundary sequence that fell
    outside the space is clipped to one point at its edge, and the whole space is shown instead (trivially valid);
    the estimate stays the clipped one.
    """
    n = stream.n
    stream, notes = _truncate(stream, s.max_labels)
    if s.method == "betting":
        lower, upper, emptied = _betting_interval(stream.z, stream.low, stream.high, space, s.alpha, s.horizon)
        mean = float(np.mean(stream.z))
    else:
        lows, highs, means, empties = _boundary_path(stream.z, space, s.alpha, s.horizon or DEFAULT_HORIZON,
                                                     s.max_labels)
        lower, upper, mean, emptied = float(lows[-1]), float(highs[-1]), float(means[-1]), bool(empties[-1])
    notes += (EMPTIED_NOTE,) if emptied else ()
    estimate = min(max(mean, lower), upper)
    if n < FEW_LABELS and upper - lower <= 1e-12:
        lower, upper = space
        notes += (f"the interval collapsed at the edge of the scale on {n} label(s); the whole scale is shown",)
    return lower, upper, estimate, notes


def _path(stream: _Stream, space: tuple[float, float], s: _Settings, points: int) -> tuple[np.ndarray, np.ndarray]:
    stream, _ = _truncate(stream, s.max_labels)
    if s.method == "betting":
        return _betting_path(stream.z, stream.low, stream.high, space, s.alpha, s.horizon, points)
    lows, highs, _, _ = _boundary_path(stream.z, space, s.alpha, s.horizon or DEFAULT_HORIZON, s.max_labels)
    return lows, highs


def _step_sd(stream: _Stream) -> float | None:
    return float(np.std(stream.z, ddof=1)) if stream.n >= 2 else None


# ---------------------------------------------------------------------------------------------------------------
# One mean


def mean_cs(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, *, alpha: float = 0.05,  # noqa: N803
            bounds: tuple[float, float] = (0.0, 1.0), w: ArrayLike | None = None,
            w_unlabeled: ArrayLike | None = None, pi: ArrayLike | None = None,
            pi_unlabeled: ArrayLike | None = None, lam: float | None = None, method: str = "boundary",
            horizon: int | None = None, max_labels: int | None = None) -> MeanEstimate:
    """Anytime-valid prediction-powered interval for a bounded mean after the labels given, in arrival order.

    P(θ ∈ the interval after every prefix of the labels) ≥ 1 − α: an admin may look after each label and stop
    when they like. Formulas and sources in the module doc (IPW PPI pseudo-outcomes after Zrnic & Candès 2024 with
    λ tuned on past labels; a linear boundary after Howard et al. 2021 / Siegmund 1985, or WSR 2024 betting).
    The interval never leaves ``bounds``. lam: a fixed λ in [0, 1] (0 = experts only), None = tuned on past
    labels. horizon: the labels at which the sequence is narrowest (fixed in advance, never "where I stopped";
    default 50 for the boundary, t log t bets for betting). max_labels: the design's maximum (looks after it
    are not covered; None = no maximum).

    Example: ``mean_cs(Y, Yhat, Yhat_all, pi=pi_labelled, pi_unlabeled=pi_all)`` for an active draw.
    """
    bounds = (float(bounds[0]), float(bounds[1]))
    problem = _check_common(alpha, bounds, method, horizon, max_labels)
    sample = LabelledSample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled, pi, pi_unlabeled)
    stream = _failed(problem) if problem else _stream(sample, bounds=bounds, lam=lam,
                                                      with_bounds=method == "betting")
    label = METHOD_LABELS.get(method, str(method))
    if stream.status in ("invalid", "no_labels"):
        shown = _shown(bounds)
        return MeanEstimate(None, shown[0], shown[1], stream.n, stream.big_n, alpha, bounds, 0.0, stream.status,
                            stream.reason, stream.notes, label)
    lower, upper, estimate, notes = _final(stream, bounds, _Settings(alpha, method, horizon, max_labels))
    return MeanEstimate(estimate, lower, upper, stream.n, stream.big_n, alpha, bounds, float(stream.lam[-1]),
                        stream.status, stream.reason, stream.notes + notes, label)


def mean_cs_path(Y: ArrayLike, Yhat: ArrayLike, Yhat_unlabeled: ArrayLike, *, alpha: float = 0.05,  # noqa: N803
                 bounds: tuple[float, float] = (0.0, 1.0), w: ArrayLike | None = None,
                 w_unlabeled: ArrayLike | None = None, pi: ArrayLike | None = None,
                 pi_unlabeled: ArrayLike | None = None, lam: float | None = None, method: str = "boundary",
                 horizon: int | None = None, max_labels: int | None = None,
                 points: int = 801) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) after each label t = 1..n — what a monitor sees at every look (``mean_cs``'s arguments).

    The boundary's ends are exact; betting's are on a grid of ``points``, rounded outward. Raises ValueError on
    input ``mean_cs`` would mark invalid: a helper for simulations and forecasts, not for pages.
    """
    bounds = (float(bounds[0]), float(bounds[1]))
    problem = _check_common(alpha, bounds, method, horizon, max_labels)
    if problem:
        raise ValueError(problem)
    stream = _stream(LabelledSample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled, pi, pi_unlabeled), bounds=bounds,
                     lam=lam, with_bounds=method == "betting")
    if stream.status == "invalid":
        raise ValueError(stream.reason)
    if stream.n == 0:
        return _EMPTY, _EMPTY
    return _path(stream, bounds, _Settings(alpha, method, horizon, max_labels), points)


# ---------------------------------------------------------------------------------------------------------------
# Two models


def _length(values: ArrayLike | None) -> int:
    try:
        return int(np.asarray(values, dtype=float).reshape(-1).size)
    except (TypeError, ValueError):
        return 0


def _difference_stream(a: LabelledSample, b: LabelledSample, *, bounds: tuple[float, float],
                       lam: float | None, with_bounds: bool) -> _Stream:
    """Z^a_t − Z^b_t over the first min(n_a, n_b) labels of each, with bounds [L^a − U^b, U^a − L^b]."""
    sa = _stream(a, bounds=bounds, lam=lam, with_bounds=with_bounds)
    sb = _stream(b, bounds=bounds, lam=lam, with_bounds=with_bounds)
    for name, s in (("a", sa), ("b", sb)):
        if s.status == "invalid":
            return _failed(f"model {name}: {s.reason}")
    k = min(sa.n, sb.n)
    notes = tuple(f"model {name}: {note}" for name, s in (("a", sa), ("b", sb)) for note in s.notes)
    if sa.n != sb.n:
        notes += (f"{abs(sa.n - sb.n)} label(s) of model {'a' if sa.n > sb.n else 'b'} wait for a partner: the "
                  "independent-samples sequence pairs the t-th label of each model",)
    if k == 0:
        return _failed("no pair of labels yet (each model needs one): the interval is the whole range",
                       status="no_labels", notes=notes)
    status = "few_labels" if k < FEW_LABELS else "ok"
    reason = f"{k} pair{'' if k == 1 else 's'} of labels: the interval is valid but wide" if k < FEW_LABELS else None
    return _Stream(sa.z[:k] - sb.z[:k], sa.low[:k] - sb.high[:k], sa.high[:k] - sb.low[:k], sa.lam[:k], k, 0,
                   notes=notes, reason=reason, status=status)


def _paired_sample(a: LabelledSample, b: LabelledSample) -> tuple[LabelledSample | None, str | None]:
    """Per-case differences: the same cases, labelled for both models, in the same order, with the same draw."""
    arrays = {}
    for name in ("Y", "Yhat", "Yhat_unlabeled"):
        xa, pa = _array(f"a.{name}", getattr(a, name))
        xb, pb = _array(f"b.{name}", getattr(b, name))
        if pa or pb or xa is None or xb is None:
            return None, pa or pb or f"{name} is required for both models"
        if xa.size != xb.size:
            return None, (f"paired samples need the same cases for both models: a.{name} has {xa.size} values, "
                          f"b.{name} {xb.size}")
        arrays[name] = xa - xb
    for name in ("w", "w_unlabeled", "pi", "pi_unlabeled"):
        va, vb = getattr(a, name), getattr(b, name)
        if (va is None) != (vb is None) or (va is not None and not np.array_equal(np.asarray(va), np.asarray(vb))):
            return None, (f"paired samples share their cases, so {name} must be the same for both models "
                          "(the case's weight and the probability the case was drawn)")
    return LabelledSample(arrays["Y"], arrays["Yhat"], arrays["Yhat_unlabeled"], a.w, a.w_unlabeled, a.pi,
                          a.pi_unlabeled), None


def _difference(stream: _Stream, *, space: tuple[float, float], s: _Settings, paired: bool, n_a: int,
                n_b: int) -> DifferenceEstimate:
    label = METHOD_LABELS.get(s.method, str(s.method))
    if stream.status in ("invalid", "no_labels"):
        shown = _shown(space)
        return DifferenceEstimate(None, shown[0], shown[1], stream.n, n_a, n_b, s.alpha, space, paired,
                                  stream.status, stream.reason, stream.notes, label)
    lower, upper, estimate, notes = _final(stream, space, s)
    return DifferenceEstimate(estimate, lower, upper, min(stream.n, s.max_labels or stream.n), n_a, n_b, s.alpha,
                              space, paired, stream.status, stream.reason, stream.notes + notes, label,
                              _step_sd(stream))


def _pair_stream(a: LabelledSample, b: LabelledSample, *, bounds: tuple[float, float], paired: bool,
                 lam: float | None, with_bounds: bool) -> _Stream:
    space = (bounds[0] - bounds[1], bounds[1] - bounds[0])
    if not paired:
        return _difference_stream(a, b, bounds=bounds, lam=lam, with_bounds=with_bounds)
    sample, problem = _paired_sample(a, b)
    if sample is None:
        return _failed(problem)
    return _stream(sample, bounds=space, lam=lam, with_bounds=with_bounds)


def difference_cs(a: LabelledSample, b: LabelledSample, *, alpha: float = 0.05,
                  bounds: tuple[float, float] = (0.0, 1.0), lam: float | None = None, method: str = "boundary",
                  horizon: int | None = None, max_labels: int | None = None) -> DifferenceEstimate:
    """Anytime-valid interval for θ_a − θ_b from two independent samples (two models' responses, labels apart).

    The t-th label of each model forms a step: Dₜ = Z^a_t − Z^b_t has mean θ_a − θ_b given the past (bounds
    [L^a − U^b, U^a − L^b] for betting), and one sequence at level α runs on Dₜ over [lo − hi, hi − lo] —
    √2 narrower than differencing two intervals at α/2 each. Pseudo-outcomes and methods as in ``mean_cs``.
    """
    return _two(a, b, alpha=alpha, bounds=bounds, lam=lam, method=method, horizon=horizon, max_labels=max_labels,
                paired=False)


def paired_difference_cs(a: LabelledSample, b: LabelledSample, *, alpha: float = 0.05,
                         bounds: tuple[float, float] = (0.0, 1.0), lam: float | None = None,
                         method: str = "boundary", horizon: int | None = None,
                         max_labels: int | None = None) -> DifferenceEstimate:
    """Anytime-valid interval for θ_a − θ_b from both models' responses to the same cases (per-case differences).

    Case t is labelled for both models (arrays aligned case by case, the same w and π); ``mean_cs`` runs on
    Y_a − Y_b against Ŷ_a − Ŷ_b over [lo − hi, hi − lo]. Narrower than ``difference_cs`` when the models' scores
    on a case correlate (Var(Y_a − Y_b) = Var Y_a + Var Y_b − 2 Cov): issue 22's paired design, made anytime.
    """
    return _two(a, b, alpha=alpha, bounds=bounds, lam=lam, method=method, horizon=horizon, max_labels=max_labels,
                paired=True)


def _two(a: LabelledSample, b: LabelledSample, *, alpha: float, bounds: tuple[float, float], lam: float | None,
         method: str, horizon: int | None, max_labels: int | None, paired: bool) -> DifferenceEstimate:
    bounds = (float(bounds[0]), float(bounds[1]))
    space = (bounds[0] - bounds[1], bounds[1] - bounds[0])
    problem = _check_common(alpha, bounds, method, horizon, max_labels)
    stream = _failed(problem) if problem else _pair_stream(a, b, bounds=bounds, paired=paired, lam=lam,
                                                                 with_bounds=method == "betting")
    return _difference(stream, space=space, s=_Settings(alpha, method, horizon, max_labels), paired=paired,
                       n_a=_length(a.Y), n_b=_length(b.Y))


def difference_cs_path(a: LabelledSample, b: LabelledSample, *, alpha: float = 0.05,
                       bounds: tuple[float, float] = (0.0, 1.0), paired: bool = False, lam: float | None = None,
                       method: str = "boundary", horizon: int | None = None, max_labels: int | None = None,
                       points: int = 801) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of θ_a − θ_b after each step: what a monitor sees at every look.

    Raises ValueError on invalid input (a helper for simulations and forecasts, not for pages).
    """
    bounds = (float(bounds[0]), float(bounds[1]))
    space = (bounds[0] - bounds[1], bounds[1] - bounds[0])
    problem = _check_common(alpha, bounds, method, horizon, max_labels)
    if problem:
        raise ValueError(problem)
    stream = _pair_stream(a, b, bounds=bounds, paired=paired, lam=lam, with_bounds=method == "betting")
    if stream.status == "invalid":
        raise ValueError(stream.reason)
    if stream.n == 0:
        return _EMPTY, _EMPTY
    return _path(stream, space, _Settings(alpha, method, horizon, max_labels), points)


# ---------------------------------------------------------------------------------------------------------------
# Verdicts and forecasts


def _check_margin(margin: float, scale: float) -> str | None:
    if not (isinstance(margin, int | float) and math.isfinite(margin)):
        return f"the equivalence margin must be a number, got {margin}"
    if margin <= 0:
        return f"the equivalence margin must be above 0 (got {margin:g}): no interval fits inside ±0"
    if margin >= scale:
        return (f"the equivalence margin must be below the scale's range {scale:g} (got {margin:g}): every pair "
                "would be 'equivalent' before any label")
    return None


def pair_verdict(difference: DifferenceEstimate, *, margin: float = 0.05) -> Verdict:
    """separated (lower > 0: a leads; upper < 0: b leads) / equivalent (−margin < lower, upper < margin) / continue.

    Read off an anytime-valid difference sequence, so the verdict is valid whenever it is looked at (Howard et
    al. 2021 §1; equivalence as two one-sided tests, Schuirmann 1987, on the sequence). The margin is on the
    scores' scale and must lie in (0, range of the scale).
    """
    scale = (difference.bounds[1] - difference.bounds[0]) / 2
    problem = _check_margin(margin, scale)
    shown = float(margin) if isinstance(margin, int | float) and math.isfinite(margin) else 0.0
    if problem:
        return Verdict("invalid", None, shown, difference.lower, difference.upper, difference.n, problem)
    if difference.status == "invalid":
        return Verdict("invalid", None, shown, difference.lower, difference.upper, difference.n,
                       difference.reason or "invalid input")
    looks = difference.n
    if difference.status == "no_labels":
        return Verdict("continue", None, shown, difference.lower, difference.upper, 0,
                       "no labels yet: label both models to start")
    span = f"{difference.lower:+.3f} to {difference.upper:+.3f}"
    after = f"after {looks} look{'' if looks == 1 else 's'}"
    if difference.lower > 0:
        return Verdict("separated", "a", shown, difference.lower, difference.upper, looks,
                       f"a is ahead: the gap is {span} {after}, clear of 0")
    if difference.upper < 0:
        return Verdict("separated", "b", shown, difference.lower, difference.upper, looks,
                       f"b is ahead: the gap is {span} {after}, clear of 0")
    if -margin < difference.lower and difference.upper < margin:
        return Verdict("equivalent", None, shown, difference.lower, difference.upper, looks,
                       f"equivalent within ±{margin:g}: the gap is {span} {after}")
    return Verdict("continue", None, shown, difference.lower, difference.upper, looks,
                   f"not settled: the gap is {span} {after}; it includes 0 and reaches past ±{margin:g}")


def labels_to_verdict(*, gap: float, sd: float, n_so_far: int = 0, margin: float = 0.05, alpha: float = 0.05,
                      horizon: int | None = None, max_labels: int | None = None, scale: float = 1.0,
                      half_width_now: float | None = None) -> Forecast:
    """Further steps until the (boundary) difference sequence gives a verdict, if the gap and sd are as estimated.

    The mean path against the sequence's half-width sd·mₜ (mₜ = the studentised line over √t, see
    ``_multipliers``; Howard et al. 2021 / Siegmund 1985): separation at the first t with |gap| > sd·mₜ,
    equivalence at the first t with |gap| + sd·mₜ < margin. sd is one step's standard deviation
    (``DifferenceEstimate.sd``). A forecast of the typical (median-like) count, not a guarantee; the benchmark
    compares it with simulated runs. Searched up to max_labels (None: 10,000).

    half_width_now: the half-width of the interval shown after ``n_so_far`` labels. The shown interval also carries
    the running intersection, the prior in σ̂ and the scale's clip, so an sd estimated from the labels alone can
    put the mean path past the line already; with it, sd is raised to what that interval implies (sd·m_n =
    half_width_now), so the forecast starts from the interval a reader sees and counts only future labels.
    """
    problem = _check_margin(margin, scale)
    if problem:
        return Forecast(None, "none", problem)
    if not (isinstance(gap, int | float) and isinstance(sd, int | float) and math.isfinite(gap)
            and math.isfinite(sd) and sd >= 0):
        return Forecast(None, "none", f"gap and sd must be finite numbers (sd ≥ 0), got gap={gap}, sd={sd}")
    problem = _check_common(alpha, (0.0, 1.0), "boundary", horizon, max_labels)
    if problem:
        return Forecast(None, "none", problem)
    reach = max_labels or 10_000
    multiplier = _multipliers(float(alpha), int(horizon or DEFAULT_HORIZON), max_labels, reach)
    now = min(max(n_so_far, 0), reach)
    if (half_width_now is not None and math.isfinite(half_width_now) and half_width_now > 0 and now >= 2
            and math.isfinite(multiplier[now - 1])):
        sd = max(sd, half_width_now / float(multiplier[now - 1]))
    half = max(sd, 1e-9) * multiplier
    options: list[tuple[int, str]] = []
    for room, target in ((abs(gap) - half, "separated"), (margin - abs(gap) - half, "equivalent")):
        hits = np.flatnonzero(room[now:] > 0) + now  # a verdict can only come with labels still to arrive
        if hits.size:
            options.append((int(hits[0]) + 1, target))
    if not options:
        where = f"within the design's {max_labels} labels" if max_labels else f"within {reach:,} labels"
        return Forecast(None, "none", f"no verdict in reach {where}: a gap of {gap:+.3f} with sd {sd:.3f} per step "
                                      f"sits too close to 0 and to the margin ±{margin:g}")
    steps, target = min(options)
    further = max(steps - n_so_far, 0)
    return Forecast(further, target, f"about {further} more label(s) per model to '{target}' if the gap is "
                                     f"{gap:+.3f} with sd {sd:.3f} per step")
