"""Which bootstrap interval to report for a result, and whether it keeps its promise, from simulated coverage.

``stats/coverage_table.py`` holds the coverage of the 95 % percentile and BCa intervals that
``benchmarks/coverage.py`` measured on panels of known reliability, per coefficient and design (units,
raters, balanced or skewed marginals, share of missing ratings). A result's own design is rarely a row of that
table, so its coverage is *estimated* from the rows around it, never read off the nearest one:

* a design is placed at (log pairable units, log ratings per pairable unit, missing share): the units with two
  or more ratings (the n a report shows) and how many ratings each has on average — for a table row, the
  values expected at its missing share. In the simulation every rater is alike, so a panel of 60 whose units
  each get 8 ratings sits with the 10-rater designs, not the 30-rater ones;
* within each marginal class (balanced, skewed) a local linear regression over those coordinates, with Gaussian
  weights of bandwidth ``BANDWIDTH`` grid steps, gives the coverage at the result's design (Cleveland & Devlin
  1988, "Locally weighted regression", JASA 83:596–610): it follows the table's slopes between rows and
  smooths their binomial noise;
* the two class estimates are interpolated linearly in the share of ratings in the most common category,
  between the shares the simulated classes have (``SKEW_SHARES``), and held at the end classes beyond them.

A design beyond the simulated ones (more units, more ratings per unit or a larger missing share than any row)
is read at the nearest edge, and the figure's description says so; fewer than 12 pairable units (the smallest
simulated design) has no evidence, and no interval is then called reliable.

Of the methods whose estimated coverage is at least 0.93, the one closest to the nominal 0.95 is reported;
when neither reaches 0.93 the better one is reported with ``reliable: false``. Either way the choice carries
the coverage figure it used and where it came from, e.g. "simulated coverage 0.946 (local fit over ≈ 9
simulated designs)". ``benchmarks/coverage.py --loo`` measures the estimate's leave-one-design-out error over
the table. α was simulated at the ordinal level (the report's); at the other levels its coverage is the
nearest evidence there is.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from stats.coverage_table import COVERAGE, SKEW_SHARES

COVERAGE_TARGET = 0.93
NOMINAL = 0.95
METHODS = ("percentile", "bca")
# Gaussian kernel bandwidth in grid steps of each coordinate (chosen by leave-one-design-out error, see the
# benchmark's --loo); the steps: ×2.5 units, ×1.5 raters, 20 points of missing share.
BANDWIDTH = 0.75
UNIT_STEP, RATER_STEP, MISSING_STEP = math.log(2.5), math.log(1.5), 0.2

# (units, raters, skew class, missing share) → {method: coverage}
Table = Mapping[tuple[int, int, str, float], Mapping[str, float]]


@dataclass(frozen=True)
class IntervalChoice:
    """The method to report, whether its estimated coverage reaches the target, the figure, and its source."""

    method: str
    reliable: bool
    reason: str | None
    coverage: float | None
    basis: str | None = None  # e.g. "simulated coverage 0.946 (local fit over ≈ 9 simulated designs)"


@dataclass(frozen=True)
class CoverageEstimate:
    """Estimated coverage per method at one design, the effective number of table rows behind it, and caveats."""

    coverage: dict[str, float]
    n_designs: float
    outside: str | None = None  # why there is no estimate (fewer units than any simulated design)
    clamped: tuple[str, ...] = ()  # coordinates read at the edge of the simulated designs


def pairable_units(n_units: float, n_raters: int, missing: float) -> float:
    """Expected number of units keeping ≥ 2 of ``n_raters`` ratings when each is missing with probability ``missing``.

    Example: ``pairable_units(30, 3, 0.2)`` → 30 × (1 − 0.2³ − 3 · 0.8 · 0.2²) = 26.88.
    """
    keep = 1.0 - missing
    return n_units * (1.0 - missing**n_raters - n_raters * keep * missing ** (n_raters - 1))


def ratings_per_pairable_unit(n_raters: int, missing: float) -> float:
    """Expected ratings of a unit that has ≥ 2, each of ``n_raters`` ratings missing with probability ``missing``.

    E[K | K ≥ 2] for K ~ Binomial(n_raters, 1 − missing): (E[K] − P(K = 1)) / P(K ≥ 2).
    Example: ``ratings_per_pairable_unit(3, 0.2)`` → (2.4 − 0.096) / 0.896 = 2.571.
    """
    keep = 1.0 - missing
    one = n_raters * keep * missing ** (n_raters - 1)
    return (n_raters * keep - one) / (1.0 - missing**n_raters - one)


def top_category_share(counts: npt.ArrayLike) -> float:
    """The share of all ratings in the most common category of a units × categories table of value counts.

    Example: ``top_category_share([[3, 0], [2, 1]])`` → 5/6 (5 of 6 ratings in the first category).
    """
    totals = np.asarray(counts, dtype=np.float64).sum(axis=0)
    return float(totals.max() / totals.sum()) if totals.sum() > 0 else 0.0


def _coordinates(units: float, ratings: float, missing: float) -> npt.NDArray[np.float64]:
    return np.array([math.log(units) / UNIT_STEP, math.log(ratings) / RATER_STEP, missing / MISSING_STEP])


@functools.cache
def _rows(coefficient: str, skew: str) -> tuple[npt.NDArray[np.float64], dict[str, npt.NDArray[np.float64]]]:
    """The committed table's rows of one coefficient and marginal class: coordinates and coverage per method."""
    return table_rows(COVERAGE.get(coefficient, {}), skew)


def table_rows(
    table: Table, skew: str
) -> tuple[npt.NDArray[np.float64], dict[str, npt.NDArray[np.float64]]]:
    """Coordinates (pairable units, ratings per pairable unit, missing share; grid steps) and coverages of a class."""
    keys = sorted(key for key in table if key[2] == skew)
    coords = np.array([
        _coordinates(pairable_units(u, r, m), ratings_per_pairable_unit(r, m), m) for u, r, _, m in keys
    ]).reshape(-1, 3)
    coverage = {method: np.array([table[key].get(method, np.nan) for key in keys]) for method in METHODS}
    return coords, coverage


def local_linear(
    coords: npt.NDArray[np.float64], values: npt.NDArray[np.float64], at: npt.NDArray[np.float64],
    bandwidth: float = BANDWIDTH,
) -> tuple[npt.NDArray[np.float64], float]:
    """Locally weighted linear regression of ``values`` on ``coords`` evaluated at ``at``; (estimates, Kish n).

    ``values`` is rows × series (one fit per column, one weighting); rows with a missing value in any column
    are left out. Gaussian weights exp(−|x − at|² / 2h²); coordinates on which every row agrees are left out
    of the fit (a two-rater coefficient has one rater count). Kish's effective number of rows, (Σw)² / Σw²,
    says how many rows the estimate rests on. Source: Cleveland & Devlin (1988). Example: rows on a plane are
    reproduced exactly anywhere between them.
    """
    values = values.reshape(len(coords), -1)
    usable = np.isfinite(values).all(axis=1)
    coords, values = coords[usable], values[usable]
    if not len(values):
        return np.full(values.shape[1], np.nan), 0.0
    weights = np.exp(-0.5 * (((coords - at) / bandwidth) ** 2).sum(axis=1))
    if weights.sum() <= 1e-12:
        return np.full(values.shape[1], np.nan), 0.0
    varying = np.ptp(coords, axis=0) > 1e-9
    design = np.column_stack([np.ones(len(values)), (coords - at)[:, varying]])
    root = np.sqrt(weights)
    solution, *_ = np.linalg.lstsq(design * root[:, None], values * root[:, None], rcond=None)
    kish = float(weights.sum() ** 2 / (weights**2).sum())
    return np.clip(solution[0], 0.0, 1.0), kish


SMALLEST_UNITS = 12  # the smallest simulated design: below it there is no evidence


def table_extent(table: Table) -> tuple[float, float, float]:
    """The largest pairable units, ratings per pairable unit and missing share of a table's rows."""
    return (max(pairable_units(u, r, m) for u, r, _, m in table),
            max(ratings_per_pairable_unit(r, m) for _, r, _, m in table), max(k[3] for k in table))


@functools.cache
def _extent(coefficient: str) -> tuple[float, float, float]:
    return table_extent(COVERAGE[coefficient])


def estimate_coverage(
    coefficient: str, *, n_units: int, ratings_per_unit: float, missing_share: float, top_share: float,
    table: Table | None = None, bandwidth: float = BANDWIDTH,
) -> CoverageEstimate:
    """The simulated coverage of each interval method at a result's design, estimated from the coverage table.

    ``n_units`` counts the pairable units (≥ 2 ratings), ``ratings_per_unit`` their mean number of ratings,
    ``missing_share`` the share of missing cells of the raters × units matrix, ``top_share`` the share of ratings
    in the most common category. ``table`` replaces the committed table (the leave-one-design-out check).
    Example: ``estimate_coverage("krippendorff_alpha", n_units=50, ratings_per_unit=5, missing_share=0.0,
    top_share=0.36).coverage`` → about {"percentile": 0.94, "bca": 0.94}.
    """
    source = COVERAGE.get(coefficient, {}) if table is None else table
    if not source:
        return CoverageEstimate({}, 0.0, "no simulated coverage for this coefficient")
    if n_units < SMALLEST_UNITS:
        return CoverageEstimate({}, 0.0, f"fewer pairable units than the smallest simulated design "
                                         f"({SMALLEST_UNITS} units)")
    largest_units, largest_ratings, largest_missing = _extent(coefficient) if table is None else table_extent(table)
    clamped = []
    units, ratings, missing = float(n_units), max(float(ratings_per_unit), 2.0), float(missing_share)
    if units > largest_units:
        units = largest_units
        clamped.append(f"{n_units} units read as {largest_units:.0f}")
    if ratings > largest_ratings + 1e-9:
        ratings = largest_ratings
        clamped.append(f"{ratings_per_unit:.1f} ratings per unit read as {largest_ratings:.0f}")
    if missing > largest_missing + 1e-9:
        missing = largest_missing
        clamped.append(f"{missing_share:.0%} missing read as {largest_missing:.0%}")
    at = _coordinates(units, ratings, missing)
    balanced, skewed = SKEW_SHARES["balanced"], SKEW_SHARES["skewed"]
    toward_skewed = min(max((top_share - balanced) / (skewed - balanced), 0.0), 1.0)
    total = np.zeros(len(METHODS))
    weight_sum = 0.0
    n_designs = 0.0
    for skew, weight in (("balanced", 1.0 - toward_skewed), ("skewed", toward_skewed)):
        if weight <= 0.0:
            continue
        coords, values = _rows(coefficient, skew) if table is None else table_rows(table, skew)
        estimates, kish = local_linear(coords, np.column_stack([values[m] for m in METHODS]), at, bandwidth)
        if np.isnan(estimates).any():
            continue
        total += weight * estimates
        weight_sum += weight
        if weight >= 0.5:  # the class the design is nearer to says how many rows the figure rests on
            n_designs = kish
    coverage = {m: float(total[i] / weight_sum) for i, m in enumerate(METHODS)} if weight_sum else {}
    return CoverageEstimate(coverage, n_designs, clamped=tuple(clamped))


# A report asks this for every coefficient of every group (≈ 1,500 times for the demo cycle) with few distinct
# designs; the answer depends on its arguments and the fixed table alone.
@lru_cache(maxsize=4096)
def choose_interval_method(
    coefficient: str, *, n_units: int, ratings_per_unit: float, missing_share: float = 0.0, top_share: float,
    available: tuple[str, ...] = METHODS,
) -> IntervalChoice:
    """Return the interval method for a result, from the simulated coverage estimated at its own design.

    Source: the coverage table of ``benchmarks/coverage.py`` (see ``stats/coverage_table.py``), by
    :func:`estimate_coverage`. Example: ``choose_interval_method("fleiss_kappa", n_units=12, ratings_per_unit=3,
    top_share=0.7)`` → ``IntervalChoice(method=..., reliable=False, reason="12 pairable units × 3.0 ratings, 0 %
    missing, 70 % of ratings in one category: simulated coverage 0.8… (local fit over ≈ … simulated designs)")``.
    """
    if not available:
        raise ValueError("no interval method is available")
    estimate = estimate_coverage(coefficient, n_units=n_units, ratings_per_unit=ratings_per_unit,
                                 missing_share=missing_share, top_share=top_share)
    design = (f"{n_units} pairable units × {ratings_per_unit:.1f} ratings, {missing_share:.0%} missing, "
              f"{top_share:.0%} of ratings in one category")
    if estimate.outside is not None:
        return IntervalChoice(available[0], False, f"{design}: {estimate.outside}", None, "no simulated coverage")
    coverage = {m: estimate.coverage[m] for m in available if m in estimate.coverage}
    if not coverage:
        return IntervalChoice(available[0], False, f"{design}: no simulated coverage for this method", None,
                              "no simulated coverage")
    good = [m for m, c in coverage.items() if c >= COVERAGE_TARGET]
    if good:
        method = min(good, key=lambda m: (abs(coverage[m] - NOMINAL), METHODS.index(m)))
    else:
        method = max(coverage, key=lambda m: (coverage[m], -METHODS.index(m)))
    caveat = "".join(f"; {c}" for c in estimate.clamped)
    basis = (f"simulated coverage {coverage[method]:.3f} (local fit over ≈ {estimate.n_designs:.0f} simulated "
             f"designs{caveat})")
    if good:
        return IntervalChoice(method, True, None, coverage[method], basis)
    return IntervalChoice(method, False, f"{design}: {basis}", coverage[method], basis)
