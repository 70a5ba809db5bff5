"""Bootstrap machinery: the unit resampling scheme, group seeds, and percentile and BCa intervals.

Every agreement coefficient (α, κ, AC1/AC2, agreement) gets its interval from one place,
:mod:`stats.intervals` (:func:`stats.intervals.bootstrap_coefficients` for a report's every coefficient,
:func:`stats.intervals.agreement_interval` for one); this module holds what that path and the other bootstraps
(a pass rate's mean, :func:`bootstrap_mean_interval`) share.

Resampling scheme. Rater-reliability data are a sample of *units* (responses) rated by a panel; the units
are the independent draws, the ratings inside a unit are not. So every replicate draws the units with
replacement — separately inside each stratum (e.g. dimension) when strata are given, keeping each
stratum's size — recomputes the coefficient, and the percentile interval is the (1 − c)/2 and (1 + c)/2
percentiles of the replicates (Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 6 and 13).
Defaults: 1,000 resamples, 95 %, as the FaithBench methodology asks.

Why not KALPHA's bootstrap. Hayes & Krippendorff's KALPHA macro (Hayes & Krippendorff 2007, Communication
Methods and Measures 1:77–89; Krippendorff, "Algorithm for bootstrapping a distribution of α", 2006/2011)
draws *pairs of values* from the observed coincidence matrix and keeps the original expected disagreement
D_e fixed. Pairs from the same unit are not independent, and D_e varies from sample to sample, so that
scheme ignores two sources of sampling error; Gwet (2015, "On Krippendorff's alpha") and Hughes (2022,
arXiv:2210.13265) show it understates the standard error. We report KALPHA's other output, q = the
probability of failing to reach α_min (share of replicates with α < α_min, default 0.667), from our
unit bootstrap. The pair-resampling scheme is not implemented.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from stats.matrix import FloatArray, IntArray

DEFAULT_RESAMPLES = 1000
# The standard normal from the standard library: scipy.special would add about a second to importing stats.
_NORMAL = NormalDist()
DEFAULT_CONFIDENCE = 0.95


def resample_counts(
    stratum_codes: npt.ArrayLike, n_resamples: int, seed: int | np.random.Generator | None = None
) -> IntArray:
    """Return B × N how-often-drawn counts for N units resampled with replacement within their strata.

    Each row sums to N and, inside each stratum, to the stratum's size (stratified bootstrap; Davison &
    Hinkley 1997, Bootstrap Methods and their Application, §3.7). Example: ``resample_counts([0, 0, 1], 2)``
    → rows like ``[2, 0, 1]``, ``[1, 1, 1]``.
    """
    codes = stratum_codes_of(stratum_codes, len(np.asarray(stratum_codes)))
    rng = np.random.default_rng(seed)
    out = np.zeros((n_resamples, codes.size), dtype=np.int64)
    for s in range(int(codes.max()) + 1):
        members = np.flatnonzero(codes == s)
        out[:, members] = rng.multinomial(members.size, np.full(members.size, 1.0 / members.size), size=n_resamples)
    return out


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


def stratum_codes_of(strata: Sequence[object] | npt.ArrayLike | None, n_units: int) -> IntArray:
    """Return integer stratum codes (all 0 without strata), one per unit, numbered in sorted label order.

    Example: ``stratum_codes_of(["b", "a", "b"], 3)`` → ``[1, 0, 1]``.
    """
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


def interval_holds(bounds: tuple[float, float] | None, estimate: float | None) -> bool:
    """Whether an interval contains its point estimate (ends equal to it up to the tie tolerance count as inside).

    Example: ``interval_holds((0.2, 0.5), 0.3)`` → True; ``interval_holds((-0.33259, -0.29520), -1 / 3)`` → False.
    """
    if bounds is None or estimate is None:
        return False
    tie = _TIE_TOLERANCE * max(1.0, abs(estimate))
    return bounds[0] - tie <= estimate <= bounds[1] + tie


def edge_reason(replicates: FloatArray, estimate: float) -> str:
    """Why a bootstrap interval that would exclude its own estimate is not reported, in words a reader can check.

    A percentile interval excludes the estimate when more than (1 + c)/2 of the replicates fall on one side of it;
    BCa's bias correction z0 = Φ⁻¹(share below) is then ±∞ or so large that its quantiles pass the estimate too.
    This happens where the estimate sits at the edge of what resampling the units can give — e.g. every unit
    disagrees, so observed agreement is 0 in every resample and only chance agreement moves, and balanced
    marginals make the estimate the extreme value of κ or AC1 — the boundary case where the bootstrap is not
    consistent (Andrews 2000, Econometrica 68:399–405; Efron & Tibshirani 1993 §14.3 on z0). No interval is
    then better than one that says the estimate is implausible. Example: 1,000 replicates all above −1/3 with
    an estimate of −1/3 → "no interval: 976 of 1000 bootstrap replicates lie above the estimate (24 equal it) …".
    """
    valid = replicates[np.isfinite(replicates)]
    tie = _TIE_TOLERANCE * max(1.0, abs(estimate))
    above, below = int((valid > estimate + tie).sum()), int((valid < estimate - tie).sum())
    side, count, other = ("above", above, below) if above >= below else ("below", below, above)
    equal = valid.size - above - below
    share = "all" if count == valid.size else f"{count} of"
    rest = [f"{equal} equal it"] if equal else []
    rest += [f"{other} lie on the other side"] if other else []
    return (f"no interval: {share} {valid.size} bootstrap replicates lie {side} the estimate"
            + (f" ({', '.join(rest)})" if rest else "")
            + ", which sits at the edge of what resampling the units can give; a percentile or BCa interval would "
              "exclude the estimate or collapse onto it (the bootstrap is not valid at such an edge)")
