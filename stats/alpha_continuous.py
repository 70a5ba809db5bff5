"""Interval and ratio α of continuous ratings, and their unit bootstrap, from per-unit sums (no values × values table).

The coincidence form of α (Krippendorff 2011, p. 4) needs a values × values matrix per unit; continuous ratings
have about as many distinct values as ratings, so that is units × n² memory (29.8 GiB at 1,000 units × 2 raters).
The same α, written with ordered pairs of values over the pairable units u (m_u ≥ 2 values, n = Σ m_u):

    α = 1 − (n − 1) · D_o / D_e,   D_o = Σ_u o_u,   o_u = Σ_{i≠j in u} δ²(x_i, x_j) / (m_u − 1),
    D_e = Σ_{a≠b, pooled pairable values} δ²(a, b).

* interval (δ² = (a − b)²): Σ_{i≠j} (x_i − x_j)² = 2 (m Σx² − (Σx)²), within a unit and over the pooled values,
  so every unit is summarised by (m_u, o_u, Σx, Σx²) — O(n) time and memory. Values are centred on their mean
  first, so the difference of the two large terms loses no precision.
* ratio (δ² = ((a − b)/(a + b))²): no sum decomposition exists (1/(a + b)² does not separate), so D_e is the
  quadratic form wᵀ G w of the unit weights w with the units × units matrix G_uv = Σ_{a∈u, b∈v} δ²(a, b),
  computed in blocks from the values (O(n²) time, O(units²) memory); o_u = G_uu / (m_u − 1). Exact; its size is
  capped (``RATIO_MAX_UNITS``, ``RATIO_MAX_PAIRS``) and larger data get the point estimate without an interval.

The unit bootstrap (as in :mod:`stats.bootstrap`: units drawn with replacement, within strata) is then a
matrix product of the B × units draw counts with these per-unit columns, in chunks of replicates; unpairable
units are drawn too and contribute nothing (their values are not pairable). The leave-one-unit-out jackknife
for BCa subtracts one unit's terms (ratio: one row and column of G). Tested equal to ``krippendorff.alpha`` to
1e-9 and to a replicate-by-replicate reference bootstrap with the same draws (tests/stats/test_alpha_continuous.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stats.alpha import Level
from stats.matrix import FloatArray, IntArray

CONTINUOUS_LEVELS: tuple[Level, ...] = ("interval", "ratio")
RATIO_MAX_UNITS = 4_000  # G is units × units float64: 128 MB at this many pairable units
RATIO_MAX_PAIRS = 400_000_000  # pairs of pooled values evaluated for G (a few seconds)
_CHUNK_CELLS = 2_000_000  # replicates × units of draw counts held at once
_BLOCK_CELLS = 4_000_000  # values × values differences held at once while building G


@dataclass(frozen=True)
class UnitTerms:
    """Per unit (all units, in column order; unpairable ones all zero): what α's two disagreements are sums of."""

    level: Level
    m: FloatArray  # pairable values in the unit (0 when fewer than two)
    observed: FloatArray  # o_u = Σ_{i≠j} δ²(x_i, x_j) / (m_u − 1)
    s1: FloatArray  # Σ (x − centre) (interval)
    s2: FloatArray  # Σ (x − centre)² (interval)
    gram: FloatArray | None  # ratio: G over the pairable units (rows/columns in ``pairable`` order)
    pairable: IntArray  # column index of every pairable unit
    note: str | None = None  # why no bootstrap is possible (ratio data too large), if none is


def unit_terms(data: FloatArray, level: Level, *, with_gram: bool = True) -> UnitTerms:
    """Return the per-unit sums of interval or ratio α for a raters × units matrix (np.nan = missing).

    Source: Krippendorff (2011), α as pair sums (module docstring). Example: units (1, 2) and (3, 3) at the
    interval level → m = (2, 2), o = (2, 0).
    """
    if level not in CONTINUOUS_LEVELS:
        raise ValueError(f"per-unit sums exist for the interval and ratio levels only, not {level!r}")
    present = ~np.isnan(data)
    count = present.sum(axis=0)
    pairable = np.flatnonzero(count >= 2)
    n_units = data.shape[1]
    m = np.where(count >= 2, count, 0).astype(np.float64)
    s1 = np.zeros(n_units)
    s2 = np.zeros(n_units)
    observed = np.zeros(n_units)
    if level == "interval":
        values = data[:, pairable]
        mask = present[:, pairable]
        centre = float(values[mask].mean()) if mask.any() else 0.0
        x = np.where(mask, values - centre, 0.0)
        s1[pairable] = x.sum(axis=0)
        s2[pairable] = (x * x).sum(axis=0)
        mp = m[pairable]
        observed[pairable] = 2.0 * (mp * s2[pairable] - s1[pairable] ** 2) / (mp - 1.0)
        return UnitTerms(level, m, observed, s1, s2, None, pairable.astype(np.int64))
    if (data[present] < 0).any():
        raise ValueError("the ratio level needs non-negative values (a true zero)")
    n_values = float(m.sum())
    if not with_gram or pairable.size > RATIO_MAX_UNITS or n_values * n_values > RATIO_MAX_PAIRS:
        note = (f"{pairable.size} pairable units with {int(n_values)} values: no bootstrap for ratio alpha at this "
                "size (its expected disagreement needs every pair of values); the interval level has one")
        return UnitTerms(level, m, observed, s1, s2, None, pairable.astype(np.int64), note if with_gram else None)
    gram = ratio_unit_gram(data[:, pairable])
    observed[pairable] = np.diag(gram) / (m[pairable] - 1.0)
    return UnitTerms(level, m, observed, s1, s2, gram, pairable.astype(np.int64))


def ratio_unit_gram(data: FloatArray) -> FloatArray:
    """Return G_uv = Σ_{a in unit u, b in unit v} ((a − b)/(a + b))² for the columns of ``data`` (units × units).

    Values are laid out unit by unit, differences evaluated in blocks of rows, and summed into units with
    ``np.add.reduceat`` along both axes. Source: Krippendorff (2011), p. 6, the ratio metric.
    Example: units (1, 3) and (1,) → G = [[0.5, 0.25], [0.25, 0]].
    """
    present = ~np.isnan(data)
    values = data.T[present.T]  # unit by unit
    sizes = present.sum(axis=0)
    if (sizes == 0).any():
        raise ValueError("every unit of the ratio Gram matrix needs at least one value")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n_units = data.shape[1]
    gram = np.empty((n_units, n_units))
    rows_per_block = max(1, _BLOCK_CELLS // max(values.size, 1))
    first = 0
    while first < n_units:
        last = first + 1  # units whose values fit the block (at least one unit)
        while last < n_units and starts[last] + sizes[last] - starts[first] <= rows_per_block:
            last += 1
        block = values[starts[first]:starts[last - 1] + sizes[last - 1]]
        delta = ratio_delta(block[:, np.newaxis], values[np.newaxis, :])
        by_unit = np.add.reduceat(delta, starts, axis=1)
        gram[first:last] = np.add.reduceat(by_unit, starts[first:last] - starts[first], axis=0)
        first = last
    return gram


def ratio_delta(a: FloatArray, b: FloatArray) -> FloatArray:
    """((a − b)/(a + b))² elementwise, 0 where a + b = 0 (both values 0). Source: Krippendorff (2011), p. 6."""
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total != 0, ((a - b) / np.where(total != 0, total, 1.0)) ** 2, 0.0)


def alpha_of_weights(terms: UnitTerms, weights: FloatArray) -> FloatArray:
    """α of each row of ``weights`` (B × units: how often each unit is counted); NaN where D_e is 0.

    Rows of ones give the sample's α. Source: the module docstring's sums (Krippendorff 2011).
    Example: ``alpha_of_weights(unit_terms(data, "interval"), np.ones((1, units)))[0]`` = α of ``data``.
    """
    w = np.atleast_2d(weights)
    n = w @ terms.m
    observed = w @ terms.observed
    if terms.level == "interval":
        s2 = w @ terms.s2
        expected = 2.0 * (n * s2 - (w @ terms.s1) ** 2)
        scale = 2.0 * n * s2  # expected is this minus a square: below 1e-10 of it, it is rounding
    else:
        if terms.gram is None:
            return np.full(len(w), np.nan)
        wp = w[:, terms.pairable]
        expected = ((wp @ terms.gram) * wp).sum(axis=1)
        scale = n * n  # δ² ≤ 1
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (n - 1.0) * observed / expected
    return np.where((n >= 2) & (expected > 1e-10 * scale), value, np.nan)


def resampled_alphas(
    terms: UnitTerms, stratum_codes: IntArray, n_resamples: int, rng: np.random.Generator
) -> FloatArray:
    """α of ``n_resamples`` unit bootstrap replicates (units drawn with replacement within strata).

    Each replicate's draw counts come from uniform unit indices (one ``rng.integers`` call per stratum and
    chunk) counted with ``np.bincount``; memory is O(chunk × units). Source: Davison & Hinkley (1997) §3.7.
    Example: ``resampled_alphas(unit_terms(data, "interval"), np.zeros(units, int), 1000, rng)``.
    """
    n_units = terms.m.size
    codes = np.asarray(stratum_codes, dtype=np.int64)
    members = [np.flatnonzero(codes == s) for s in np.unique(codes)]
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(n_units, 1)))
    out = np.empty(n_resamples)
    for first in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - first)
        offsets = (np.arange(size) * n_units)[:, np.newaxis]
        flat = np.zeros(size * n_units, dtype=np.int64)
        for unit_ids in members:
            draws = unit_ids[rng.integers(0, unit_ids.size, size=(size, unit_ids.size))]
            flat += np.bincount((draws + offsets).ravel(), minlength=size * n_units)
        out[first:first + size] = alpha_of_weights(terms, flat.reshape(size, n_units).astype(np.float64))
    return out


def jackknife_alphas(terms: UnitTerms) -> FloatArray:
    """α with each unit left out in turn (units in column order), for BCa's acceleration; NaN where undefined.

    Interval: the sums minus the unit's terms. Ratio: D_e − 2 Σ_v G_uv + G_uu. O(units) and O(units²).
    Source: Efron & Tibshirani (1993) §11.2. Example: a unit that is not pairable leaves α unchanged.
    """
    n = terms.m.sum() - terms.m
    observed = terms.observed.sum() - terms.observed
    if terms.level == "interval":
        s1 = terms.s1.sum() - terms.s1
        s2 = terms.s2.sum() - terms.s2
        expected = 2.0 * (n * s2 - s1**2)
        scale = 2.0 * n * s2
    else:
        if terms.gram is None:
            return np.full(terms.m.size, np.nan)
        total = terms.gram.sum()
        expected = np.full(terms.m.size, total)
        expected[terms.pairable] = total - 2.0 * terms.gram.sum(axis=1) + np.diag(terms.gram)
        scale = n * n
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (n - 1.0) * observed / expected
    return np.where((n >= 2) & (expected > 1e-10 * scale), value, np.nan)
