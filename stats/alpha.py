"""Krippendorff's α at the nominal, ordinal, interval and ratio levels, with missing data.

The point estimate comes from the ``krippendorff`` package (``krippendorff.alpha``). This module adds what
a report needs around it: the count of units that are not pairable (fewer than two values — they carry no
pair and drop out of α; Krippendorff 2011, §"Computing α", step on m_u), a reason instead of a crash when α
is undefined, leave-one-rater-out α, and the coincidence-matrix arithmetic that the fast bootstrap in
:mod:`stats.intervals` reuses.

Formulas (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", Annenberg working paper, pp. 1–6):
coincidences o_ck = Σ_u Σ_{i≠j} [v_iu = c][v_ju = k] / (m_u − 1); n_c = Σ_k o_ck; n = Σ_c n_c;
α = 1 − (n − 1) · Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck, with δ² the level's squared difference function.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import numpy.typing as npt

from stats.matrix import FloatArray, IntArray, as_reliability_matrix, resolve_categories, value_counts

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
DEFAULT_ALPHA_MIN = 0.667  # Krippendorff (2004) Content Analysis, 2nd ed., p. 241: lowest conceivable limit
_LOO_CELLS = 4_000_000  # raters × units × categories held at once by leave_one_rater_out
# Above this many units × distinct values, α is computed from the values themselves (memory O(raters × units))
# instead of the units × values count table and its values × values coincidences (continuous data).
_COUNT_CELLS = 2_000_000
# The ``krippendorff`` package builds a units × values × values float array from the count table (29.8 GiB at
# 1,000 units × 2,000 distinct values): above this many cells α comes from the values instead.
_PACKAGE_CELLS = 4_000_000
_RATIO_CELLS = 1_000_000  # pooled value pairs per block of the ratio level's expected disagreement (8 MB each)


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's α with the counts that say what it rests on; ``alpha`` is None when undefined."""

    alpha: float | None
    level: Level
    n_units: int
    n_pairable_units: int
    n_unpairable_units: int
    n_values_pairable: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RaterInfluence:
    """α of the panel without one rater, and the change against the full panel (positive = better without)."""

    rater: str
    alpha_without: float | None
    change: float | None


def check_level(level: str) -> Level:
    """Return ``level`` if it is one of nominal, ordinal, interval, ratio; raise ValueError otherwise.

    Source: Krippendorff (2011) defines α's difference functions for these four metrics.
    Example: ``check_level("ordinal")`` → ``"ordinal"``.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    return level


def unit_coincidences(counts: npt.ArrayLike) -> FloatArray:
    """Return each unit's coincidence matrix, shape units × V × V: n_uc n_uk (minus the diagonal) / (m_u − 1).

    Units with m_u < 2 get a zero matrix. Source: Krippendorff (2011), p. 3, o_ck as a sum over units.
    Example: one unit with values {1, 1, 2} → ``[[2/2, 2/2], [2/2, 0]]`` = ``[[1, 1], [1, 0]]``.
    """
    n = np.asarray(counts, dtype=np.float64)
    m_u = n.sum(axis=1)
    outer = n[:, :, np.newaxis] * n[:, np.newaxis, :]
    idx = np.arange(n.shape[1])
    outer[:, idx, idx] -= n
    scale = np.where(m_u >= 2, 1.0 / np.maximum(m_u - 1.0, 1.0), 0.0)
    return outer * scale[:, np.newaxis, np.newaxis]


def coincidence_matrix(counts: npt.ArrayLike) -> FloatArray:
    """Return the V × V coincidence matrix o_ck summed over all pairable units.

    Source: Krippendorff (2011), p. 3. Example: the 2011 paper's 4 × 12 data give n = 40 pairable values.
    """
    return unit_coincidences(counts).sum(axis=0)


def squared_differences(categories: npt.ArrayLike, level: Level, n_c: npt.ArrayLike | None = None) -> FloatArray:
    """Return δ²_ck for ``level``; ordinal needs the marginals n_c and then accepts a batch (..., V).

    nominal: [c ≠ k]; ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)²; interval: (c − k)²; ratio: ((c − k)/(c + k))².
    Source: Krippendorff (2011), pp. 5–6. Example: ``squared_differences([1, 2, 4], "interval")[0, 2]`` → 9.
    """
    values = np.asarray(categories, dtype=np.float64)
    diff = values[:, np.newaxis] - values[np.newaxis, :]
    if level == "nominal":
        return (diff != 0).astype(np.float64)
    if level == "interval":
        return diff**2
    if level == "ratio":
        total = values[:, np.newaxis] + values[np.newaxis, :]
        return np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    if level == "ordinal":
        if n_c is None:
            raise ValueError("the ordinal metric needs the value marginals n_c")
        n = np.asarray(n_c, dtype=np.float64)
        idx = np.arange(values.size)
        lo = np.minimum(idx[:, np.newaxis], idx[np.newaxis, :])
        hi = np.maximum(idx[:, np.newaxis], idx[np.newaxis, :])
        cum = np.cumsum(n, axis=-1)
        between = cum[..., hi] - cum[..., lo] + n[..., lo]  # Σ_{g=lo..hi} n_g
        return (between - (n[..., lo] + n[..., hi]) / 2.0) ** 2
    raise ValueError(f"unknown level {level!r}")


def alpha_from_coincidences(coincidences: npt.ArrayLike, categories: npt.ArrayLike, level: Level) -> FloatArray:
    """Return α for one (V × V) or a batch (B × V × V) of coincidence matrices; NaN where D_e = 0.

    α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck (Krippendorff 2011, p. 4).
    Example: the 2011 paper's coincidences at the nominal level give 0.743.
    """
    o = np.asarray(coincidences, dtype=np.float64)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    delta = squared_differences(categories, level, n_c if level == "ordinal" else None)
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (n_c[..., :, np.newaxis] * n_c[..., np.newaxis, :] * delta).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 1e-12, alpha, np.nan)


def krippendorff_alpha(
    matrix: npt.ArrayLike, level: Level = "ordinal", categories: Sequence[float] | None = None
) -> AlphaResult:
    """Return Krippendorff's α of a raters × units matrix (np.nan = missing) with its pairable counts.

    Source: Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability"; value by ``krippendorff.alpha``.
    Example (the paper's 4 observers × 12 units): nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
    """
    level = check_level(level)
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    if level == "ratio" and (cats < 0).any():
        raise ValueError("the ratio level needs non-negative values (a true zero)")
    if cats.size * data.shape[1] > _COUNT_CELLS or cats.size**2 * data.shape[1] > _PACKAGE_CELLS:
        return alpha_from_values(data, level)
    counts = value_counts(data, cats)
    return _alpha_result(data, counts, cats, level)


def _unpairable_notes(n_units: int, n_pairable: int) -> list[str]:
    """The warning every α result carries when some units have fewer than two ratings."""
    if n_units == n_pairable:
        return []
    return [f"{n_units - n_pairable} of {n_units} unit(s) have fewer than two ratings: not pairable, "
            "left out of alpha and the agreement coefficients"]


def _alpha_result(data: FloatArray, counts: IntArray, cats: FloatArray, level: Level) -> AlphaResult:
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    n_units = int(data.shape[1])
    n_pairable = int(pairable.sum())
    n_values = int(m_u[pairable].sum())
    notes = _unpairable_notes(n_units, n_pairable)

    def result(alpha: float | None) -> AlphaResult:
        return AlphaResult(
            alpha=alpha,
            level=level,
            n_units=n_units,
            n_pairable_units=n_pairable,
            n_unpairable_units=n_units - n_pairable,
            n_values_pairable=n_values,
            warnings=tuple(notes),
        )

    if n_pairable == 0:
        notes.append("alpha undefined: no unit has two or more ratings, so there is no pair to compare")
        return result(None)
    used = cats[counts[pairable].sum(axis=0) > 0]
    if used.size < 2:
        notes.append(
            f"alpha undefined: every pairable rating is the same value ({_fmt(used[0])}), so expected "
            "disagreement is 0 and agreement cannot be told apart from chance"
        )
        return result(None)
    # The counts are what krippendorff.alpha would build from the data itself (same int64 table), so the
    # value is the same to the last bit and the package does not count again.
    return result(float(krippendorff.alpha(value_counts=counts, value_domain=cats, level_of_measurement=level)))


def alpha_from_values(data: FloatArray, level: Level) -> AlphaResult:
    """α from sums over value pairs within units, never a values × values table (continuous data).

    Same α as the coincidence form (Krippendorff 2011, p. 4), rewritten with ordered pairs of values:
    α = 1 − (n − 1) · Σ_u Σ_{i≠j in u} δ²(x_i, x_j) / (m_u − 1)  /  Σ_{a≠b pooled} δ²(a, b), over pairable units.
    * interval: Σ_{i≠j} (x_i − x_j)² = 2(m Σx² − (Σx)²), within a unit and over the pooled values alike;
    * ordinal: δ²_ck = (M_k − M_c)² with M_c = Σ_{g<c} n_g + n_c/2 (the value's mid-rank among the pooled
      pairable values), so ordinal α is interval α of the mid-ranks;
    * nominal: Σ_{i≠j} [x_i ≠ x_j] = m² − Σ_c n_c² (within units from rater pairs; pooled from value counts);
    * ratio: within units from rater pairs; the pooled sum over distinct values in blocks (time grows with
      distinct values², memory does not).
    Memory is O(raters × units); time O(raters² × units) within units. Example: the 2011 paper's 4 × 12 data
    give the same four values as :func:`krippendorff_alpha` (tested against it and the ``krippendorff`` package).
    """
    present = ~np.isnan(data)
    m_u = present.sum(axis=0)
    pairable = m_u >= 2
    n_units = int(data.shape[1])
    n_pairable = int(pairable.sum())
    values = data[:, pairable]
    mask = present[:, pairable]
    m = m_u[pairable].astype(np.float64)
    n = float(m.sum())
    notes = _unpairable_notes(n_units, n_pairable)

    def result(alpha: float | None) -> AlphaResult:
        return AlphaResult(alpha=alpha, level=level, n_units=n_units, n_pairable_units=n_pairable,
                           n_unpairable_units=n_units - n_pairable, n_values_pairable=int(n), warnings=tuple(notes))

    if n_pairable == 0:
        notes.append("alpha undefined: no unit has two or more ratings, so there is no pair to compare")
        return result(None)
    pooled, pooled_counts = np.unique(values[mask], return_counts=True)
    if pooled.size < 2:
        notes.append(
            f"alpha undefined: every pairable rating is the same value ({_fmt(pooled[0])}), so expected "
            "disagreement is 0 and agreement cannot be told apart from chance"
        )
        return result(None)
    counts = pooled_counts.astype(np.float64)
    if level in ("interval", "ordinal"):
        if level == "ordinal":
            mid = np.cumsum(counts) - counts / 2.0  # M_c, the mid-rank of each distinct value
            values = np.where(mask, mid[np.searchsorted(pooled, np.where(mask, values, pooled[0]))], np.nan)
            pooled = mid
        x = np.where(mask, values, 0.0)
        within = 2.0 * (m * (x * x).sum(axis=0) - x.sum(axis=0) ** 2)
        expected = 2.0 * (n * (counts * pooled * pooled).sum() - (counts * pooled).sum() ** 2)
    else:
        within = np.zeros(n_pairable)
        for i in range(values.shape[0] - 1):
            both = mask[i] & mask[i + 1:]
            delta = _delta(values[i][np.newaxis, :], values[i + 1:], level)
            within += 2.0 * np.where(both, delta, 0.0).sum(axis=0)
        if level == "nominal":
            expected = n * n - float((counts * counts).sum())
        else:
            expected = 0.0
            step = max(1, _RATIO_CELLS // pooled.size)
            for first in range(0, pooled.size, step):  # δ² is symmetric: each block against the values after it, twice
                block = pooled[first:first + step, np.newaxis]
                weights = counts[first:first + step, np.newaxis]
                rest = slice(first + block.shape[0], None)
                expected += float((weights * counts[np.newaxis, first:first + step]
                                   * _delta(block, block.T, level)).sum())
                expected += 2.0 * float((weights * counts[np.newaxis, rest]
                                         * _delta(block, pooled[np.newaxis, rest], level)).sum())
    observed = float((within / (m - 1.0)).sum())
    if expected <= 1e-12 * max(n * n, 1.0):
        notes.append("alpha undefined: expected disagreement is 0")
        return result(None)
    return result(1.0 - (n - 1.0) * observed / expected)


def _delta(a: FloatArray, b: FloatArray, level: Level) -> FloatArray:
    """δ²(a, b) elementwise for the nominal and ratio levels (NaN where a value is missing)."""
    if level == "nominal":
        return (a != b).astype(np.float64)
    total = a + b
    diff = a - b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total != 0, (diff / np.where(total != 0, total, 1.0)) ** 2, 0.0)


def leave_one_rater_out(
    matrix: npt.ArrayLike,
    level: Level = "ordinal",
    categories: Sequence[float] | None = None,
    rater_labels: Sequence[str] | None = None,
) -> list[RaterInfluence]:
    """Return, for each rater, α of the panel without that rater and the change α_without − α_all.

    A large positive change flags a rater who lowers the panel's reliability. Source: the "alpha if item
    deleted" diagnostic of classical test theory, applied to raters instead of items; α by Krippendorff (2011).
    Without rater r a unit's value counts are n_u − e_ru (e_ru: r's own rating as a one-hot row), so every
    rater's coincidence matrix is one batched product Σ_u (n_u − e_ru)(n_u − e_ru)ᵀ / (m_u − 1) (minus the
    diagonal term), and α follows from it as in :func:`alpha_from_coincidences` — equal to
    ``krippendorff.alpha`` on the matrix without the row to 1e-12, without one call per rater.
    Example: three raters where one rates at random → removing that rater gives the largest positive change.
    """
    level = check_level(level)
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    labels = list(rater_labels) if rater_labels is not None else [str(i) for i in range(data.shape[0])]
    if len(labels) != data.shape[0]:
        raise ValueError("rater_labels must name every row of the matrix")
    counts = value_counts(data, cats)
    full = _alpha_result(data, counts, cats, level).alpha
    n_raters, n_units = data.shape
    alphas: list[float | None] = []
    batch = max(1, _LOO_CELLS // max(n_units * cats.size, 1))  # raters per step, to bound the memory
    for first in range(0, n_raters if n_raters > 1 else 0, batch):
        rows = data[first:first + batch]
        without = counts[np.newaxis] - (rows[:, :, np.newaxis] == cats).astype(np.int64)  # raters × units × V
        m_u = without.sum(axis=2)
        pairable = m_u >= 2
        scale = np.where(pairable, 1.0 / np.maximum(m_u - 1.0, 1.0), 0.0)
        weighted = without * scale[:, :, np.newaxis]
        coincidences = np.matmul(weighted.transpose(0, 2, 1), without)
        idx = np.arange(cats.size)
        coincidences[:, idx, idx] -= weighted.sum(axis=1)
        values = alpha_from_coincidences(coincidences, cats, level)
        # Defined exactly when _alpha_result would give a value: two categories among the pairable units.
        n_used = ((without * pairable[:, :, np.newaxis]).sum(axis=1) > 0).sum(axis=1)
        alphas.extend(float(a) if used >= 2 and np.isfinite(a) else None
                      for a, used in zip(values, n_used, strict=True))
    out: list[RaterInfluence] = []
    for label, without_alpha in zip(labels, alphas or [None] * n_raters, strict=True):
        change = without_alpha - full if without_alpha is not None and full is not None else None
        out.append(RaterInfluence(rater=label, alpha_without=without_alpha, change=change))
    return out


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
