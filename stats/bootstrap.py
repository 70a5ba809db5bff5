"""Bootstrap confidence intervals: units resampled with replacement (within strata), percentile method.

Resampling scheme. Rater-reliability data are a sample of *units* (responses) rated by a panel; the units
are the independent draws, the ratings inside a unit are not. So every replicate draws the units with
replacement — separately inside each stratum (e.g. dimension) when strata are given, keeping each
stratum's size — recomputes the coefficient, and the interval is the (1 − c)/2 and (1 + c)/2 percentiles
of the replicates (Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 6 and 13). Defaults:
1,000 resamples, 95 %, as the FaithBench methodology asks.

Why not KALPHA's bootstrap. Hayes & Krippendorff's KALPHA macro (Hayes & Krippendorff 2007, Communication
Methods and Measures 1:77–89; Krippendorff, "Algorithm for bootstrapping a distribution of α", 2006/2011)
draws *pairs of values* from the observed coincidence matrix and keeps the original expected disagreement
D_e fixed. Pairs from the same unit are not independent, and D_e varies from sample to sample, so that
scheme ignores two sources of sampling error; Gwet (2015, "On Krippendorff's alpha") and Hughes (2022,
arXiv:2210.13265) show it understates the standard error. We report KALPHA's other output, q = the
probability of failing to reach α_min (share of replicates with α < α_min, default 0.667), from our
unit bootstrap. The pair-resampling scheme is not implemented.

Speed (α). Each unit's coincidence matrix (V × V, each pair weighted 1/(m_u − 1)) is computed once.
Units with identical value counts have identical matrices, so they are collapsed into G distinct
patterns per stratum; drawing N_s units uniformly with replacement is then exactly a multinomial draw
of N_s over the patterns with probabilities (pattern frequency / N_s). A replicate's coincidence matrix is
one row of ``weights @ pattern_coincidences`` (B × G times G × V²), and α follows from the summed matrix
with the level's distance function — no call to ``krippendorff.alpha`` per replicate. A replicate whose
expected disagreement is 0 (one value only) has no α: it is skipped, counted in ``n_degenerate``, and
the percentiles use the remaining replicates.

Continuous data (α). With many distinct values the per-pattern coincidence matrices (patterns × V²) do not fit
(186 GiB at 1,000 units × 5 raters): above ``_PATTERN_CELLS`` interval and ratio α are bootstrapped from
per-unit sums instead (:mod:`stats.alpha_continuous`, the same unit resampling, O(units) memory per replicate);
nominal and ordinal α, which have no such sums, get the point estimate and a note instead of an interval.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from stats.alpha import (
    DEFAULT_ALPHA_MIN,
    Level,
    alpha_from_coincidences,
    check_level,
    krippendorff_alpha,
    unit_coincidences,
)
from stats.alpha_continuous import CONTINUOUS_LEVELS, resampled_alphas, unit_terms
from stats.matrix import (
    FloatArray,
    IntArray,
    UndefinedCoefficientError,
    as_reliability_matrix,
    resolve_categories,
    value_counts,
)

DEFAULT_RESAMPLES = 1000
# The standard normal from the standard library: scipy.special would add about a second to importing stats.
_NORMAL = NormalDist()
DEFAULT_CONFIDENCE = 0.95
_CHUNK_CELLS = 2_000_000  # replicates × patterns held in memory at once
# units × V² above which α is not bootstrapped from per-pattern coincidence matrices (32 MB of them)
_PATTERN_CELLS = 4_000_000


@dataclass(frozen=True)
class BootstrapResult:
    """A percentile bootstrap interval; ``ci_low``/``ci_high`` are None when no replicate had a value."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_resamples: int
    n_degenerate: int
    n_strata: int
    below_min_probability: float | None = None
    alpha_min: float | None = None
    warnings: tuple[str, ...] = ()
    replicates: FloatArray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)


def bootstrap_alpha(
    matrix: npt.ArrayLike,
    level: Level = "ordinal",
    *,
    categories: Sequence[float] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: Sequence[object] | npt.ArrayLike | None = None,
    alpha_min: float = DEFAULT_ALPHA_MIN,
    seed: int | np.random.Generator | None = None,
) -> BootstrapResult:
    """Return Krippendorff's α with a percentile bootstrap CI (units resampled) and q = P(α < α_min).

    Source: Efron & Tibshirani (1993) percentile interval; q as in Hayes & Krippendorff (2007) KALPHA.
    Example: ``bootstrap_alpha(data, "ordinal", seed=1)`` on the 2011 paper's data → estimate 0.815,
    an interval around it and the share of replicates below 0.667.
    """
    level = check_level(level)
    _check_common(n_resamples, confidence)
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    point = krippendorff_alpha(data, level, cats.tolist())
    if point.alpha is None:
        return _empty(None, confidence, n_resamples, alpha_min, point.warnings)
    stratum_codes = _stratum_codes(strata, data.shape[1])
    rng = np.random.default_rng(seed)
    if cats.size**2 * data.shape[1] > _PATTERN_CELLS:
        n_strata = int(stratum_codes.max()) + 1
        if level not in CONTINUOUS_LEVELS:
            note = (f"{cats.size} distinct values: no bootstrap for {level} alpha (its cost grows with the square "
                    "of the number of values); use the interval level for continuous data")
            return _empty(point.alpha, confidence, n_resamples, alpha_min, (*point.warnings, note), n_strata=n_strata)
        terms = unit_terms(data, level)
        if terms.note is not None:
            return _empty(point.alpha, confidence, n_resamples, alpha_min, (*point.warnings, terms.note),
                          n_strata=n_strata)
        return _summarise(point.alpha, resampled_alphas(terms, stratum_codes, n_resamples, rng), confidence,
                          n_strata, alpha_min)
    counts = value_counts(data, cats)
    patterns, weights_iter = _pattern_resampler(counts, stratum_codes, n_resamples, rng)
    per_pattern = unit_coincidences(patterns).reshape(len(patterns), -1)
    v = cats.size
    rows = max(1, _CHUNK_CELLS // (v * v))  # replicates whose V × V coincidences are held at once
    chunks = [alpha_from_coincidences((w[first:first + rows] @ per_pattern).reshape(-1, v, v), cats, level)
              for w in weights_iter for first in range(0, len(w), rows)]
    replicates = np.concatenate(chunks)
    return _summarise(point.alpha, replicates, confidence, int(stratum_codes.max()) + 1, alpha_min)


def bootstrap_statistic(
    matrix: npt.ArrayLike,
    statistic: Callable[[FloatArray], float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: Sequence[object] | npt.ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> BootstrapResult:
    """Return a percentile bootstrap CI for any coefficient ``statistic(matrix)`` by resampling unit columns.

    The generic (slower) path: ``statistic`` is called once per replicate; a replicate that raises
    :class:`UndefinedCoefficientError` or returns NaN is counted as degenerate. Source: Efron & Tibshirani (1993).
    Example: ``bootstrap_statistic(data, fleiss_kappa, n_resamples=200, seed=0)``.
    """
    _check_common(n_resamples, confidence)
    data = as_reliability_matrix(matrix)
    try:
        estimate = float(statistic(data))
    except UndefinedCoefficientError as exc:
        return _empty(None, confidence, n_resamples, None, (str(exc),))
    stratum_codes = _stratum_codes(strata, data.shape[1])
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(stratum_codes == s) for s in range(int(stratum_codes.max()) + 1)]
    replicates = np.full(n_resamples, np.nan)
    for b in range(n_resamples):
        columns = np.concatenate([rng.choice(m, size=m.size, replace=True) for m in members])
        try:
            replicates[b] = statistic(data[:, columns])
        except UndefinedCoefficientError:
            pass
    return _summarise(estimate, replicates, confidence, len(members), None)


def resample_counts(
    stratum_codes: npt.ArrayLike, n_resamples: int, seed: int | np.random.Generator | None = None
) -> IntArray:
    """Return B × N how-often-drawn counts for N units resampled with replacement within their strata.

    Each row sums to N and, inside each stratum, to the stratum's size (stratified bootstrap; Davison &
    Hinkley 1997, Bootstrap Methods and their Application, §3.7). Example: ``resample_counts([0, 0, 1], 2)``
    → rows like ``[2, 0, 1]``, ``[1, 1, 1]``.
    """
    codes = _stratum_codes(stratum_codes, len(np.asarray(stratum_codes)))
    rng = np.random.default_rng(seed)
    out = np.zeros((n_resamples, codes.size), dtype=np.int64)
    for s in range(int(codes.max()) + 1):
        members = np.flatnonzero(codes == s)
        out[:, members] = rng.multinomial(members.size, np.full(members.size, 1.0 / members.size), size=n_resamples)
    return out


def _pattern_resampler(
    counts: IntArray, stratum_codes: IntArray, n_resamples: int, rng: np.random.Generator
) -> tuple[IntArray, list[FloatArray]]:
    """Collapse units into (stratum, value-count pattern) groups; return the patterns and the weight chunks."""
    keyed = np.column_stack([stratum_codes, counts])
    groups, inverse, freq = np.unique(keyed, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    group_stratum = groups[:, 0]
    patterns = groups[:, 1:]
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(len(groups), 1)))
    chunks: list[FloatArray] = []
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        weights = np.zeros((size, len(groups)))
        for s in np.unique(group_stratum):
            cols = np.flatnonzero(group_stratum == s)
            n_s = int(freq[cols].sum())
            weights[:, cols] = rng.multinomial(n_s, freq[cols] / n_s, size=size)
        chunks.append(weights)
        done += size
    return patterns, chunks


def named_seed_sequence(seed: int | None, name: str) -> np.random.SeedSequence:
    """Return the random stream of the group called ``name``: SeedSequence([seed, SHA-256 of the name]).

    A group's interval then depends on the seed and its own name only — adding, removing or reordering
    other groups cannot change it (spawning by position could). The hash is hashlib's, not ``hash()``,
    which Python salts per process. ``seed=None`` gives fresh entropy (not reproducible, as before).
    Source: numpy's SeedSequence design (NEP 19). Example: ``named_seed_sequence(0, "dimension:textual")``.
    """
    if seed is None:
        return np.random.SeedSequence()
    digest = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:16], "big")
    return np.random.SeedSequence([int(seed), digest])


def named_seed(seed: int, name: str) -> int:
    """Return an integer seed for the group ``name``, drawn from :func:`named_seed_sequence` (for int-only APIs).

    Example: ``named_seed(0, "overall:all")`` is the same in every process and for every set of groups.
    """
    return int(named_seed_sequence(seed, name).generate_state(1, np.uint64)[0]) >> 11  # 53 bits: exact in JSON


def percentile_interval(replicates: FloatArray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """Return the percentile interval of the finite replicates (linear interpolation), or None if there are none.

    Source: Efron & Tibshirani (1993) §13.3. Example: replicates 0..100 at 0.9 → (5.0, 95.0).
    """
    valid = np.sort(replicates[np.isfinite(replicates)])
    if valid.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0
    return _sorted_quantiles(valid, (tail, 1.0 - tail))


def _sorted_quantiles(ordered: FloatArray, levels: tuple[float, float]) -> tuple[float, float]:
    """``np.quantile(values, levels)`` (its default "linear" method) of already sorted values, without its overhead."""
    out = []
    for q in levels:
        position = q * (ordered.size - 1)
        below = int(math.floor(position))
        above = min(below + 1, ordered.size - 1)
        fraction = position - below
        out.append(float(ordered[below] + (ordered[above] - ordered[below]) * fraction))
    return out[0], out[1]


_TIE_TOLERANCE = 1e-9  # relative: far below any gap between distinct values of a coefficient on real data


def bca_interval(
    replicates: FloatArray,
    estimate: float,
    jackknife: FloatArray,
    confidence: float = DEFAULT_CONFIDENCE,
    jackknife_weights: FloatArray | None = None,
) -> tuple[float, float] | None:
    """Return the bias-corrected and accelerated (BCa) interval, or None when it cannot be formed.

    z0 = Φ⁻¹(share of replicates below the estimate, ties — equal to 1e-9 relative — counted half); acceleration
    a = Σ U³ / (6 (Σ U²)^{3/2}), U_i = θ̄_(·) − θ_(i) from the leave-one-unit-out jackknife values θ_(i);
    the interval is the replicates' quantiles at Φ(z0 + (z0 + z_q)/(1 − a (z0 + z_q))) for q = (1 ∓ c)/2.
    ``jackknife_weights`` counts how many units share each jackknife value (units with the same rating
    pattern leave the same value). Source: Efron & Tibshirani (1993) §14.3, eq. 14.10–14.15, as in
    ``scipy.stats.bootstrap(method="BCa")``, which it reproduces to 1e-12 (tests/stats/test_intervals.py).
    Example: ``bca_interval(reps, reps_mean, jack)`` → (low, high).
    """
    valid = np.sort(replicates[np.isfinite(replicates)])
    jack = np.asarray(jackknife, dtype=np.float64)
    counts = np.ones_like(jack) if jackknife_weights is None else np.asarray(jackknife_weights, dtype=np.float64)
    keep = np.isfinite(jack) & (counts > 0)
    jack, counts = jack[keep], counts[keep]
    if valid.size == 0 or jack.size < 2 or not math.isfinite(estimate):
        return None
    # A replicate equal to the estimate up to rounding is a tie: agreement-type coefficients take few distinct
    # values, and the same value summed in another order differs in the last bits, which must not move z0.
    tie = _TIE_TOLERANCE * max(1.0, abs(estimate))
    below = (np.searchsorted(valid, estimate - tie, "left") + np.searchsorted(valid, estimate + tie, "right")) \
        / (2.0 * valid.size)
    if not 0.0 < below < 1.0:  # every replicate on one side of the estimate: no bias correction exists
        return None
    z0 = _NORMAL.inv_cdf(below)
    mean = float((counts * jack).sum() / counts.sum())
    u = mean - jack
    denominator = float((counts * u**2).sum()) ** 1.5
    accel = float((counts * u**3).sum()) / (6.0 * denominator) if denominator > 0 else 0.0
    tail = (1.0 - confidence) / 2.0
    levels = []
    for z in (_NORMAL.inv_cdf(tail), _NORMAL.inv_cdf(1.0 - tail)):
        shifted = z0 + z
        levels.append(_NORMAL.cdf(z0 + shifted / (1.0 - accel * shifted)))
    if not all(math.isfinite(q) for q in levels):
        return None
    return _sorted_quantiles(valid, (levels[0], levels[1]))


def _stratum_codes(strata: Sequence[object] | npt.ArrayLike | None, n_units: int) -> IntArray:
    if strata is None:
        return np.zeros(n_units, dtype=np.int64)
    labels = np.asarray(strata, dtype=object)
    if labels.shape != (n_units,):
        raise ValueError(f"strata must give one label per unit ({n_units}); got shape {labels.shape}")
    _, codes = np.unique(labels.astype(str), return_inverse=True)
    return codes.ravel().astype(np.int64)


def _check_common(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1, e.g. 0.95")


def _summarise(
    estimate: float, replicates: FloatArray, confidence: float, n_strata: int, alpha_min: float | None
) -> BootstrapResult:
    valid = replicates[~np.isnan(replicates)]
    n_degenerate = int(replicates.size - valid.size)
    notes: list[str] = []
    if n_degenerate:
        notes.append(
            f"{n_degenerate} of {replicates.size} bootstrap replicates had a single value only "
            "(no expected disagreement) and were skipped"
        )
    if valid.size == 0:
        notes.append("no bootstrap replicate had a defined value, so there is no interval")
        return _empty(estimate, confidence, replicates.size, alpha_min, tuple(notes), n_degenerate, n_strata)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(valid, [tail, 1.0 - tail])
    below = float((valid < alpha_min).mean()) if alpha_min is not None else None
    return BootstrapResult(
        estimate=estimate,
        ci_low=float(low),
        ci_high=float(high),
        confidence=confidence,
        n_resamples=int(replicates.size),
        n_degenerate=n_degenerate,
        n_strata=n_strata,
        below_min_probability=below,
        alpha_min=alpha_min,
        warnings=tuple(notes),
        replicates=replicates,
    )


def _empty(
    estimate: float | None,
    confidence: float,
    n_resamples: int,
    alpha_min: float | None,
    notes: tuple[str, ...],
    n_degenerate: int = 0,
    n_strata: int = 1,
) -> BootstrapResult:
    return BootstrapResult(
        estimate=estimate,
        ci_low=None,
        ci_high=None,
        confidence=confidence,
        n_resamples=n_resamples,
        n_degenerate=n_degenerate,
        n_strata=n_strata,
        alpha_min=alpha_min,
        warnings=notes,
    )


def bootstrap_mean_interval(
    values: npt.ArrayLike, *, n_resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE,
    seed: int | np.random.Generator | np.random.SeedSequence | None = None,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of a mean (e.g. a pass rate of 0/1 outcomes), cases resampled with replacement.

    Source: Efron & Tibshirani (1993) §13.3. Example: 50 passes of 100 at 0.95 → about (0.40, 0.60); None when
    there are no values.
    """
    _check_common(n_resamples, confidence)
    data = np.asarray(values, dtype=np.float64).ravel()
    if data.size == 0:
        return None
    rng = np.random.default_rng(seed)
    replicates = data[rng.integers(0, data.size, size=(n_resamples, data.size))].mean(axis=1)
    return percentile_interval(replicates, confidence)
