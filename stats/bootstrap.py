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
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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
from stats.matrix import (
    FloatArray,
    IntArray,
    UndefinedCoefficientError,
    as_reliability_matrix,
    resolve_categories,
    value_counts,
)

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
_CHUNK_CELLS = 2_000_000  # replicates × patterns held in memory at once


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
    counts = value_counts(data, cats)
    stratum_codes = _stratum_codes(strata, data.shape[1])
    rng = np.random.default_rng(seed)
    patterns, weights_iter = _pattern_resampler(counts, stratum_codes, n_resamples, rng)
    per_pattern = unit_coincidences(patterns).reshape(len(patterns), -1)
    v = cats.size
    chunks = [alpha_from_coincidences((w @ per_pattern).reshape(-1, v, v), cats, level) for w in weights_iter]
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
