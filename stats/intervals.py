"""One unit bootstrap for every coefficient: percentile and BCa intervals from the same resampled unit sets.

Resampling. As in :mod:`stats.bootstrap`, units (columns) are the independent draws: a replicate draws the
units with replacement (within strata when given). Units are collapsed into *patterns* — identical columns
give identical contributions — so a replicate is a vector of how often each pattern was drawn (a
multinomial draw per stratum, exactly the distribution of drawing units), and every coefficient is a
function of sums ``W @ M`` of per-pattern quantities M. For many raters a pattern is a unit's value counts
(what α, Fleiss' κ, Gwet's AC1/AC2 and agreement depend on); for exactly two raters it is the pair of
values (Cohen's κ, Spearman's ρ and Kendall's τ-b depend on who gave which value).

Per pattern g (counts r_gk over categories x_k, m_g = Σ_k r_gk, only units with m_g ≥ 2 are pairable):

* agreement with weights w (identity, |x_k − x_l| ≤ 1, Gwet's linear/quadratic):
  p_a = Σ_g W_g (Σ_kl r_gk w_kl r_gl − m_g) / (m_g (m_g − 1)) / Σ_g W_g [m_g ≥ 2] (Gwet 2014 p_a);
* π_k = Σ_g W_g r_gk / m_g / Σ_g W_g [m_g ≥ 1]; Fleiss' κ with p_e = Σ π_k², Gwet's AC with
  p_e = T_w / (q (q − 1)) Σ π_k (1 − π_k) (Gwet 2014; the formulas of :mod:`stats.kappa`, :mod:`stats.gwet`);
* α: nominal and interval from per-pattern disagreement scalars and the value marginals n_c = Σ_g W_g r_gc
  (interval: Σ_ck n_c n_k (x_c − x_k)² = 2 (n Σ n_c x_c² − (Σ n_c x_c)²), O(B × V)); ordinal and ratio from
  the summed coincidence matrices (:func:`stats.alpha.alpha_from_coincidences`; Krippendorff 2011);
* two raters: Cohen's κ_w = 1 − n Σ_g W_g v(a_g, b_g) / Σ_kl v_kl ra_k cb_l with the value marginals ra, cb
  (Cohen 1968; linear and quadratic chance terms from cumulative sums in O(B × V)); Spearman's ρ as the
  Pearson correlation of mid-ranks computed from each replicate's marginals; Kendall's τ-b
  = (P − Q) / √((n₀ − n₁)(n₀ − n₂)) with P − Q = ½ Σ_gh W_g W_h sign(a_g − a_h) sign(b_g − b_h) (Kendall 1945).

The point estimate of each coefficient is the same function at W = the pattern frequencies (tested equal
to the library point estimates to 1e-12). BCa needs the leave-one-unit-out jackknife: leaving out one unit
of pattern g is W = freq − e_g, so there are only G jackknife values, weighted by the pattern frequencies.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from stats.alpha import Level, alpha_from_coincidences, check_level, krippendorff_alpha
from stats.alpha_continuous import (
    CONTINUOUS_LEVELS,
    alpha_of_weights,
    jackknife_alphas,
    resampled_alphas,
    unit_terms,
)
from stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    bca_interval,
    edge_reason,
    interval_holds,
    percentile_interval,
    stratum_codes_of,
)
from stats.matrix import FloatArray, IntArray, as_reliability_matrix, resolve_categories, value_counts
from stats.pairwise import disagreement_weights
from stats.weights import agreement_weights, tolerance_weights

# The bootstrapped coefficients, by their key in ``reliability_summary()["intervals"]``.
MANY_RATER_COEFFICIENTS = (
    "krippendorff_alpha", "percent_agreement", "within_one_agreement", "fleiss_kappa",
    "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic",
)
TWO_RATER_COEFFICIENTS = (
    "cohen_kappa_unweighted", "cohen_kappa_linear", "cohen_kappa_quadratic", "spearman_rho", "kendall_tau_b",
)
# Above this many units × distinct values, or this many distinct values, the ratings are continuous scores: no
# units × values table (12 s and 430 MB at 1,000 units × 2 raters as categories), only α from per-unit sums.
MAX_COUNT_CELLS = 2_000_000
MAX_CATEGORIES = 400
_CHUNK_CELLS = 4_000_000  # replicates × (patterns or V²) held at once
_DENSE_V = 40  # up to this many categories the per-pattern coincidence matrices are kept dense
_MAX_COINCIDENCE_V = 400  # ordinal/ratio α bootstrap: B × V² work per replicate chunk
_MAX_KENDALL_PATTERNS = 1500  # Kendall's τ-b: a G × G sign matrix
_MAX_JACKKNIFE_PATTERNS = 3000  # BCa's jackknife evaluates every coefficient G times


@dataclass(frozen=True)
class CoefficientReplicates:
    """One coefficient's point estimate, bootstrap replicates (NaN = undefined) and both intervals."""

    estimate: float | None
    replicates: FloatArray = field(repr=False)
    percentile: tuple[float, float] | None
    bca: tuple[float, float] | None
    n_degenerate: int
    note: str | None = None  # why an interval is missing, when it is


@dataclass(frozen=True)
class Patterns:
    """Units collapsed into distinct (stratum, ratings) patterns, with how many units share each."""

    counts: FloatArray  # G × V value counts
    freq: FloatArray  # G
    stratum: IntArray  # G
    pair: IntArray | None  # G × 2 category indices of the two raters (−1 = missing), two raters only


def unit_patterns(data: FloatArray, cats: FloatArray, stratum_codes: IntArray, *, two_raters: bool) -> Patterns:
    """Collapse the columns of a raters × units matrix into patterns (value counts, or the pair of values).

    Source: exact in distribution for the unit bootstrap (drawing N units = a multinomial over patterns).
    Example: two raters, columns (1, 1), (1, 1), (2, 1) → 2 patterns with frequencies 2 and 1.
    """
    if two_raters:
        index = np.full(data.shape, -1, dtype=np.int64)
        rated = ~np.isnan(data)
        index[rated] = np.searchsorted(cats, data[rated])
        keyed = np.column_stack([stratum_codes, index.T])
    else:
        keyed = np.column_stack([stratum_codes, value_counts(data, cats)])
    groups, freq = np.unique(keyed, axis=0, return_counts=True)
    if two_raters:
        pair = groups[:, 1:3]
        counts = np.zeros((len(groups), cats.size))
        for column in (0, 1):
            has = pair[:, column] >= 0
            np.add.at(counts, (np.flatnonzero(has), pair[has, column]), 1.0)
        return Patterns(counts=counts, freq=freq.astype(np.float64), stratum=groups[:, 0], pair=pair)
    return Patterns(counts=groups[:, 1:].astype(np.float64), freq=freq.astype(np.float64), stratum=groups[:, 0],
                    pair=None)


def resample_pattern_weights(patterns: Patterns, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Return B × G draw counts: each stratum's units drawn with replacement, counted by pattern.

    Drawing N_s of a stratum's units uniformly with replacement and counting them by pattern is a
    multinomial over the stratum's patterns with probabilities freq / N_s; drawing unit indices and
    counting them (one bincount) is much faster than numpy's multinomial over many patterns.
    Source: Davison & Hinkley (1997) §3.7 (stratified bootstrap). Example: one stratum of 3 units in
    patterns with frequencies (2, 1) → rows like (3, 0), (2, 1), (1, 2).
    """
    size = patterns.freq.size
    if size * 8 <= patterns.freq.sum():  # few patterns (two raters on a short scale): multinomial draws are cheaper
        weights = np.zeros((n_resamples, size))
        for s in np.unique(patterns.stratum):
            cols = np.flatnonzero(patterns.stratum == s)
            n_s = patterns.freq[cols].sum()
            weights[:, cols] = rng.multinomial(int(n_s), patterns.freq[cols] / n_s, size=n_resamples)
        return weights
    unit_pattern = np.repeat(np.arange(size), patterns.freq.astype(np.int64))  # units listed pattern by pattern
    unit_stratum = patterns.stratum[unit_pattern]
    flat = np.zeros(n_resamples * size, dtype=np.int64)
    offsets = (np.arange(n_resamples) * size)[:, np.newaxis]
    for s in np.unique(unit_stratum):
        members = unit_pattern[unit_stratum == s]
        draws = members[rng.integers(0, members.size, size=(n_resamples, members.size))]
        flat += np.bincount((draws + offsets).ravel(), minlength=n_resamples * size)
    return flat.reshape(n_resamples, size).astype(np.float64)


_AGREEMENTS = ("percent_agreement", "within_one_agreement", "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic")
_KAPPAS = ("unweighted", "linear", "quadratic")


class CoefficientFunctions:
    """Every coefficient as a vectorised function of pattern weights W (rows = replicates, NaN = undefined).

    Everything except Kendall's τ-b and the ordinal/ratio coincidences is linear in W: one product
    ``W @ self.linear`` gives all the sums, and the coefficients follow with O(B × V) arithmetic.
    """

    def __init__(self, patterns: Patterns, cats: FloatArray, level: Level) -> None:
        self.patterns = patterns
        self.cats = cats
        self.level = level
        self.centred = cats - cats.mean() if cats.size else cats
        r = patterns.counts
        m = r.sum(axis=1)
        v = cats.size
        shares = np.divide(r, m[:, np.newaxis], out=np.zeros_like(r), where=m[:, np.newaxis] > 0)
        sparse_r = _csr(r) if v > _DENSE_V else None
        pair_denominator = np.where(m >= 2, m * (m - 1.0), 1.0)

        def unit_agreement(w: FloatArray) -> FloatArray:
            product = np.asarray(sparse_r @ w) if sparse_r is not None else r @ w  # sparse: no G × V × V work
            quad = (product * r).sum(axis=1)
            return np.where(m >= 2, (quad - m) / pair_denominator, 0.0)

        self.agreement_weights = {
            "percent_agreement": tolerance_weights(cats, 0.0),
            "within_one_agreement": tolerance_weights(cats, 1.0),
            "gwet_ac1": agreement_weights(cats, "identity"),
            "gwet_ac2_linear": agreement_weights(cats, "linear"),
            "gwet_ac2_quadratic": agreement_weights(cats, "quadratic"),
        }
        columns: dict[str, FloatArray] = {
            "pairable": (m >= 2).astype(np.float64),
            "rated": (m >= 1).astype(np.float64),
            **{name: unit_agreement(w) for name, w in self.agreement_weights.items()},
            "shares": shares,
            "n_c": r * (m >= 2)[:, np.newaxis],
        }
        self._alpha_setup(r, m, columns)
        self._pair_setup(columns)
        self.slices: dict[str, slice] = {}
        at = 0
        for name, column in columns.items():
            width = 1 if column.ndim == 1 else column.shape[1]
            self.slices[name] = slice(at, at + width)
            at += width
        self.linear = np.hstack([c[:, np.newaxis] if c.ndim == 1 else c for c in columns.values()])

    def _alpha_setup(self, r: FloatArray, m: FloatArray, columns: dict[str, FloatArray]) -> None:
        cats, level = self.cats, self.level
        scale = np.where(m >= 2, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
        self.alpha_note: str | None = None
        if level == "nominal":
            columns["alpha_observed"] = (m**2 - (r**2).sum(axis=1)) * scale
        elif level == "interval":
            x = self.centred
            columns["alpha_observed"] = 2.0 * (m * (r @ x**2) - (r @ x) ** 2) * scale
        elif cats.size > _MAX_COINCIDENCE_V:
            self.alpha_note = (
                f"{cats.size} distinct values: no bootstrap for {level} alpha (its cost grows with the square "
                "of the number of values); use the interval level for continuous data"
            )
        elif cats.size <= _DENSE_V:
            outer = r[:, :, np.newaxis] * r[:, np.newaxis, :]
            idx = np.arange(cats.size)
            outer[:, idx, idx] -= r
            self.unit_coincidences: Any = (outer * scale[:, None, None]).reshape(len(r), -1)
            self.sparse_coincidences = False
        else:
            rows, cols, vals = [], [], []
            v = cats.size
            for g in np.flatnonzero(m >= 2):
                nz = np.flatnonzero(r[g])
                n = r[g, nz]
                block = np.outer(n, n) - np.diag(n)
                rows.append(np.full(nz.size**2, g))
                cols.append((nz[:, None] * v + nz[None, :]).ravel())
                vals.append(block.ravel() * scale[g])
            self.sparse_coincidences = True
            self.unit_coincidences = _csr(
                (np.concatenate(vals or [np.empty(0)]),
                 (np.concatenate(rows or [np.empty(0, int)]), np.concatenate(cols or [np.empty(0, int)]))),
                shape=(len(r), v * v),
            )

    def _pair_setup(self, columns: dict[str, FloatArray]) -> None:
        pair = self.patterns.pair
        self.kendall_note: str | None = None
        if pair is None:
            return
        both = (pair[:, 0] >= 0) & (pair[:, 1] >= 0)
        g = np.flatnonzero(both)
        onehot_a = np.zeros((len(pair), self.cats.size))
        onehot_b = np.zeros((len(pair), self.cats.size))
        onehot_a[g, pair[g, 0]] = 1.0
        onehot_b[g, pair[g, 1]] = 1.0
        columns["ra"], columns["cb"] = onehot_a, onehot_b
        self.a_idx = np.where(both, pair[:, 0], 0)
        self.b_idx = np.where(both, pair[:, 1], 0)
        for kind, weights in zip(_KAPPAS, (None, "linear", "quadratic"), strict=True):
            v = disagreement_weights(self.cats.tolist(), weights)  # type: ignore[arg-type]
            columns[f"kappa_{kind}"] = v[self.a_idx, self.b_idx] * both
        self.both_index = g
        if g.size > _MAX_KENDALL_PATTERNS:
            self.kendall_note = f"{g.size} distinct pairs of values: no bootstrap for Kendall's tau-b"
            self.signs = np.zeros((0, 0))
        else:
            a, b = pair[g, 0], pair[g, 1]
            self.signs = (np.sign(a[:, None] - a[None, :]) * np.sign(b[:, None] - b[None, :])).astype(np.float64)

    # --- coefficients from the sums ---------------------------------------------------------------------
    def _sum(self, sums: FloatArray, name: str) -> FloatArray:
        part = sums[:, self.slices[name]]
        return part[:, 0] if part.shape[1] == 1 and name not in ("shares", "n_c", "ra", "cb") else part

    def alpha(self, w: FloatArray, sums: FloatArray) -> FloatArray:
        """Krippendorff's α of each replicate (NaN where expected disagreement is 0)."""
        if self.alpha_note is not None:
            return np.full(len(w), np.nan)
        n_c = self._sum(sums, "n_c")
        n = n_c.sum(axis=1)
        if self.level in ("nominal", "interval"):
            observed = self._sum(sums, "alpha_observed")
            if self.level == "nominal":
                expected = n**2 - (n_c**2).sum(axis=1)
            else:
                x = self.centred
                expected = 2.0 * (n * (n_c @ x**2) - (n_c @ x) ** 2)
            with np.errstate(divide="ignore", invalid="ignore"):
                value = 1.0 - (n - 1.0) * observed / expected
            used = (n_c > 0).sum(axis=1)
            return np.where((expected > 1e-9 * np.maximum(n, 1.0) ** 2) & (used >= 2), value, np.nan)
        v = self.cats.size
        out = np.empty(len(w))
        step = max(1, _CHUNK_CELLS // max(v * v, 1))
        for first in range(0, len(w), step):
            part = w[first:first + step]
            summed = np.asarray(self.unit_coincidences.T @ part.T).T if self.sparse_coincidences \
                else part @ self.unit_coincidences
            out[first:first + step] = alpha_from_coincidences(summed.reshape(-1, v, v), self.cats, self.level)
        return out

    def agreement(self, sums: FloatArray, name: str) -> FloatArray:
        """p_a of each replicate with the named weights (NaN where no unit is pairable)."""
        pairable = self._sum(sums, "pairable")
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(pairable > 0, self._sum(sums, name) / pairable, np.nan)

    def _pi(self, sums: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._sum(sums, "shares") / self._sum(sums, "rated")[:, np.newaxis]

    def fleiss_kappa(self, sums: FloatArray, pi: FloatArray) -> FloatArray:
        """Fleiss' κ (Gwet's unequal-raters form) of each replicate."""
        p_a = self.agreement(sums, "percent_agreement")
        p_e = (pi**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(p_e < 1.0 - 1e-12, (p_a - p_e) / (1.0 - p_e), np.nan)

    def gwet(self, sums: FloatArray, pi: FloatArray, name: str) -> FloatArray:
        """Gwet's AC1 / AC2 of each replicate (q = number of categories, as in stats.gwet)."""
        q = self.cats.size
        if q < 2:
            return np.full(len(sums), np.nan)
        p_e = self.agreement_weights[name].sum() / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.agreement(sums, name) - p_e) / (1.0 - p_e)

    def cohen_kappa(self, sums: FloatArray, kind: str) -> FloatArray:
        """Cohen's κ (unweighted, linear or quadratic, weights on the category values) of each replicate."""
        ra, cb = self._sum(sums, "ra"), self._sum(sums, "cb")
        n = ra.sum(axis=1)
        x = self.centred
        if kind == "unweighted":
            chance = n**2 - (ra * cb).sum(axis=1)
        elif kind == "quadratic":
            chance = n * (ra @ x**2) + n * (cb @ x**2) - 2.0 * (ra @ x) * (cb @ x)
        else:  # Σ_k ra_k Σ_l cb_l |x_k − x_l| from cumulative counts and sums of cb
            c_cum = np.cumsum(cb, axis=1)
            s_cum = np.cumsum(cb * x, axis=1)
            per_k = x * c_cum - s_cum + (s_cum[:, -1:] - s_cum) - x * (n[:, None] - c_cum)
            chance = (ra * per_k).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = 1.0 - n * self._sum(sums, f"kappa_{kind}") / chance
        return np.where((n > 0) & (chance > 1e-9 * np.maximum(n, 1.0) ** 2), value, np.nan)

    def spearman_rho(self, w: FloatArray, sums: FloatArray) -> FloatArray:
        """Spearman's ρ (Pearson correlation of mid-ranks, ties averaged) of each replicate."""
        ra, cb = self._sum(sums, "ra"), self._sum(sums, "cb")
        n = ra.sum(axis=1)
        rank_a = np.cumsum(ra, axis=1) - ra + (ra + 1.0) / 2.0
        rank_b = np.cumsum(cb, axis=1) - cb + (cb + 1.0) / 2.0
        g = self.both_index
        cross = (w[:, g] * rank_a[:, self.a_idx[g]] * rank_b[:, self.b_idx[g]]).sum(axis=1)
        mean = (n + 1.0) / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            var_a = (ra * rank_a**2).sum(axis=1) / n - mean**2
            var_b = (cb * rank_b**2).sum(axis=1) / n - mean**2
            value = (cross / n - mean**2) / np.sqrt(var_a * var_b)
        tiny = 1e-12 * np.maximum(n, 1.0) ** 2
        return np.where((n >= 2) & (var_a > tiny) & (var_b > tiny), value, np.nan)

    def kendall_tau_b(self, w: FloatArray, sums: FloatArray) -> FloatArray:
        """Kendall's τ-b of each replicate (ties in either rater handled as in scipy.stats.kendalltau)."""
        if self.kendall_note is not None:
            return np.full(len(w), np.nan)
        ra, cb = self._sum(sums, "ra"), self._sum(sums, "cb")
        n = ra.sum(axis=1)
        wb = w[:, self.both_index]
        s = ((wb @ self.signs) * wb).sum(axis=1) / 2.0
        n0 = n * (n - 1.0) / 2.0
        n1 = (ra * (ra - 1.0)).sum(axis=1) / 2.0
        n2 = (cb * (cb - 1.0)).sum(axis=1) / 2.0
        denominator = (n0 - n1) * (n0 - n2)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = s / np.sqrt(denominator)
        return np.where(denominator > 0, value, np.nan)

    # --- all --------------------------------------------------------------------------------------------
    def names(self) -> tuple[str, ...]:
        """The coefficients these patterns support (two-rater ones only for two raters)."""
        return MANY_RATER_COEFFICIENTS + (TWO_RATER_COEFFICIENTS if self.patterns.pair is not None else ())

    def evaluate(self, w: FloatArray, names: tuple[str, ...] | None = None) -> dict[str, FloatArray]:
        """Every coefficient (or those in ``names``) for each row of W, in chunks of rows to bound the memory."""
        step = max(1, _CHUNK_CELLS // max(w.shape[1], self.linear.shape[1], 1))
        parts = [self._evaluate(w[first:first + step], names) for first in range(0, len(w), step)]
        return {name: np.concatenate([p[name] for p in parts]) for name in (names or self.names())}

    def _evaluate(self, w: FloatArray, names: tuple[str, ...] | None = None) -> dict[str, FloatArray]:
        sums = w @ self.linear  # always every column: the same sums, so the same bits, whatever is asked
        if names == ("krippendorff_alpha",):
            return {"krippendorff_alpha": self.alpha(w, sums)}
        pi = self._pi(sums)
        out = {
            "krippendorff_alpha": self.alpha(w, sums),
            "percent_agreement": self.agreement(sums, "percent_agreement"),
            "within_one_agreement": self.agreement(sums, "within_one_agreement"),
            "fleiss_kappa": self.fleiss_kappa(sums, pi),
            **{name: self.gwet(sums, pi, name) for name in ("gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic")},
        }
        if self.patterns.pair is not None:
            for kind in _KAPPAS:
                out[f"cohen_kappa_{kind}"] = self.cohen_kappa(sums, kind)
            out["spearman_rho"] = self.spearman_rho(w, sums)
            out["kendall_tau_b"] = self.kendall_tau_b(w, sums)
        return out

    def note(self, name: str) -> str | None:
        """Why a coefficient has no bootstrap for these data, if it has none."""
        if name == "krippendorff_alpha":
            return self.alpha_note
        if name == "kendall_tau_b":
            return self.kendall_note
        return None


def _csr(*args: Any, **kwargs: Any) -> Any:
    """A scipy.sparse CSR matrix; imported here because scipy.sparse adds about a second to importing stats,
    and only data with more than 40 distinct values (continuous ratings) need it."""
    from scipy.sparse import csr_matrix

    return csr_matrix(*args, **kwargs)


def bootstrap_coefficients(
    data: FloatArray,
    cats: FloatArray,
    level: Level,
    *,
    stratum_codes: IntArray,
    n_resamples: int,
    rng: np.random.Generator,
    confidence: float = DEFAULT_CONFIDENCE,
    two_raters: bool = False,
    bca: bool = True,
    coefficients: tuple[str, ...] | None = None,
) -> dict[str, CoefficientReplicates]:
    """Return, per coefficient (every one, or those in ``coefficients``), the point estimate, the replicates and
    the percentile and BCa intervals; asking for fewer changes none of their bits, only the time.

    One resampling pass: every coefficient is computed on the same B resampled unit sets. Source: Efron &
    Tibshirani (1993) ch. 13–14; the coefficients' formulas in the module docstring. Example:
    ``bootstrap_coefficients(data, cats, "ordinal", stratum_codes=np.zeros(n, int), n_resamples=1000,
    rng=np.random.default_rng(1))["fleiss_kappa"].percentile`` → (low, high).
    """
    patterns = unit_patterns(data, cats, stratum_codes, two_raters=two_raters)
    functions = CoefficientFunctions(patterns, cats, level)
    names = functions.names() if coefficients is None else tuple(n for n in functions.names() if n in coefficients)
    point = functions.evaluate(patterns.freq[np.newaxis, :], names)
    replicates = functions.evaluate(resample_pattern_weights(patterns, n_resamples, rng), names)
    use_bca = bca and patterns.freq.size <= _MAX_JACKKNIFE_PATTERNS
    jackknife: dict[str, FloatArray] = {}
    if use_bca:
        jackknife = jackknife_values(functions, patterns.freq, names)
    out: dict[str, CoefficientReplicates] = {}
    for name in names:
        estimate = float(point[name][0])
        reps = replicates[name]
        finite = math.isfinite(estimate)
        note = functions.note(name)
        if not finite:
            out[name] = CoefficientReplicates(None, reps, None, None, int(np.isnan(reps).sum()), note)
            continue
        interval_bca = bca_interval(reps, estimate, jackknife[name], confidence, patterns.freq) if use_bca else None
        if use_bca is False and bca and note is None:
            note = f"{patterns.freq.size} distinct unit patterns: BCa skipped (its jackknife is too large)"
        out[name] = CoefficientReplicates(
            estimate=estimate,
            replicates=reps,
            percentile=percentile_interval(reps, confidence),
            bca=interval_bca,
            n_degenerate=int(np.isnan(reps).sum()),
            note=note,
        )
    return out


def bootstrap_continuous_alpha(
    data: FloatArray,
    level: Level,
    *,
    stratum_codes: IntArray,
    n_resamples: int,
    rng: np.random.Generator,
    confidence: float = DEFAULT_CONFIDENCE,
) -> CoefficientReplicates:
    """Interval or ratio α of continuous ratings with percentile and BCa intervals, from per-unit sums.

    The same unit bootstrap as :func:`bootstrap_coefficients` (units drawn with replacement within strata) without
    collapsing units into value-count patterns, which for continuous data would be units × values wide: each
    replicate is α of the draw counts (:func:`stats.alpha_continuous.alpha_of_weights`), the jackknife leaves one
    unit out. Source: Efron & Tibshirani (1993) ch. 13–14; Krippendorff (2011). Example:
    ``bootstrap_continuous_alpha(data, "interval", stratum_codes=np.zeros(units, int), n_resamples=1000,
    rng=np.random.default_rng(1)).percentile`` → (low, high).
    """
    terms = unit_terms(data, level)
    if terms.note is not None:
        return CoefficientReplicates(None, np.full(n_resamples, np.nan), None, None, n_resamples, terms.note)
    estimate = float(alpha_of_weights(terms, np.ones((1, terms.m.size)))[0])
    reps = resampled_alphas(terms, stratum_codes, n_resamples, rng)
    if not math.isfinite(estimate):
        return CoefficientReplicates(None, reps, None, None, int(np.isnan(reps).sum()))
    return CoefficientReplicates(
        estimate=estimate,
        replicates=reps,
        percentile=percentile_interval(reps, confidence),
        bca=bca_interval(reps, estimate, jackknife_alphas(terms), confidence),
        n_degenerate=int(np.isnan(reps).sum()),
    )


def jackknife_values(functions: CoefficientFunctions, freq: FloatArray,
               names: tuple[str, ...] | None = None) -> dict[str, FloatArray]:
    """Every coefficient (or those in ``names``) with one unit of each pattern left out (W = freq − e_g), in chunks
    of patterns."""
    names = names or functions.names()
    size = freq.size
    step = max(1, _CHUNK_CELLS // max(size, 1))
    parts: list[dict[str, FloatArray]] = []
    for first in range(0, size, step):
        rows = np.repeat(freq[np.newaxis, :], min(step, size - first), axis=0)
        rows[np.arange(rows.shape[0]), np.arange(first, first + rows.shape[0])] -= 1.0
        parts.append(functions.evaluate(rows, names))
    return {name: np.concatenate([p[name] for p in parts]) for name in names}


@dataclass(frozen=True)
class AgreementInterval:
    """One agreement coefficient with its percentile unit-bootstrap interval; ``low``/``high`` None when it has none."""

    coefficient: str
    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    n_resamples: int
    n_degenerate: int
    n_strata: int
    below_min_probability: float | None = None  # P(replicate < alpha_min), when alpha_min is given
    alpha_min: float | None = None
    notes: tuple[str, ...] = ()
    replicates: FloatArray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high), or None."""
        return None if self.low is None or self.high is None else (self.low, self.high)


def agreement_interval(
    matrix: npt.ArrayLike,
    coefficient: str = "krippendorff_alpha",
    *,
    level: Level = "ordinal",
    categories: Sequence[float] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    strata: Sequence[object] | npt.ArrayLike | None = None,
    alpha_min: float | None = None,
    seed: int | np.random.Generator | np.random.SeedSequence | None = None,
) -> AgreementInterval:
    """Return one coefficient (a key of ``MANY_RATER_COEFFICIENTS``, or of ``TWO_RATER_COEFFICIENTS`` for a
    two-row matrix) with its percentile interval from the unit bootstrap every report uses.

    The same resampling as :func:`bootstrap_coefficients` (units drawn with replacement within strata, collapsed
    into patterns); α of continuous scores (more than ``MAX_CATEGORIES`` values) goes through
    :func:`bootstrap_continuous_alpha`, or, at the nominal and ordinal levels, gets its estimate and a note. A
    replicate without a value (one category only) is counted in ``n_degenerate`` and left out of the
    percentiles. ``level`` matters for α only. Source: Efron & Tibshirani (1993) §13.3 (percentile interval);
    q = P(α < α_min) as in Hayes & Krippendorff (2007). Example: ``agreement_interval(data, "fleiss_kappa",
    categories=[0, 1, 2], seed=0).interval`` → (low, high).
    """
    level = check_level(level)
    if coefficient not in MANY_RATER_COEFFICIENTS + TWO_RATER_COEFFICIENTS:
        raise ValueError(f"unknown coefficient {coefficient!r}; use one of "
                         f"{', '.join(MANY_RATER_COEFFICIENTS + TWO_RATER_COEFFICIENTS)}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1, e.g. 0.95")
    data = as_reliability_matrix(matrix)
    two_raters = coefficient in TWO_RATER_COEFFICIENTS
    if two_raters and data.shape[0] != 2:
        raise ValueError(f"{coefficient} needs exactly two raters (rows); got {data.shape[0]}")
    cats = resolve_categories(data, categories)
    codes = stratum_codes_of(strata, data.shape[1])
    n_strata = int(codes.max()) + 1 if codes.size else 1
    if data.shape[1] == 0 or cats.size == 0:
        return AgreementInterval(coefficient, None, None, None, confidence, n_resamples, 0, n_strata,
                                 alpha_min=alpha_min, notes=(f"{coefficient} is undefined: no rated unit",))
    rng = np.random.default_rng(seed)
    if coefficient == "krippendorff_alpha" and (cats.size > MAX_CATEGORIES or cats.size * data.shape[1]
                                                > MAX_COUNT_CELLS):
        if level not in CONTINUOUS_LEVELS:
            point = krippendorff_alpha(data, level, cats.tolist())
            note = (f"{cats.size} distinct values: no bootstrap for {level} alpha (its cost grows with the square "
                    "of the number of values); use the interval level for continuous data")
            return AgreementInterval(coefficient, point.alpha, None, None, confidence, n_resamples, 0, n_strata,
                                     alpha_min=alpha_min, notes=(*point.warnings, note))
        result = bootstrap_continuous_alpha(data, level, stratum_codes=codes, n_resamples=n_resamples, rng=rng,
                                            confidence=confidence)
    else:
        result = bootstrap_coefficients(data, cats, level, stratum_codes=codes, n_resamples=n_resamples, rng=rng,
                                        confidence=confidence, two_raters=two_raters, bca=False,
                                        coefficients=(coefficient,))[coefficient]
    notes = [result.note] if result.note else []
    if result.estimate is None:
        notes.append(f"{coefficient} is undefined for these data (one category only, or no pairable unit)")
    elif result.n_degenerate:
        notes.append(f"{result.n_degenerate} of {n_resamples} bootstrap replicates had a single value only "
                     "(no expected disagreement) and were skipped")
    valid = result.replicates[np.isfinite(result.replicates)]
    if result.estimate is not None and valid.size == 0:
        notes.append("no bootstrap replicate had a defined value, so there is no interval")
    below = float((valid < alpha_min).mean()) if alpha_min is not None and valid.size else None
    low, high = result.percentile if result.percentile is not None and result.estimate is not None else (None, None)
    if result.estimate is not None and result.percentile is not None \
            and not interval_holds(result.percentile, result.estimate):
        notes.append(edge_reason(result.replicates, result.estimate))  # an interval never excludes its estimate
        low, high = None, None
    return AgreementInterval(
        coefficient=coefficient, estimate=result.estimate, low=low, high=high, confidence=confidence,
        n_resamples=n_resamples, n_degenerate=result.n_degenerate, n_strata=n_strata,
        below_min_probability=below if result.estimate is not None else None, alpha_min=alpha_min,
        notes=tuple(notes), replicates=result.replicates,
    )
