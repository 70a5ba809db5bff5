"""Which bootstrap interval to report for a result, and whether it keeps its promise, from simulated coverage.

``stats/coverage_table.py`` holds the coverage of the 95 % percentile and BCa intervals that
``benchmarks/coverage.py`` measured on panels of known reliability, per coefficient and design (units,
raters, balanced or skewed marginals). For a result, the nearest simulated design is the one with the same
skew class that is closest in log(units) + log(raters); of the methods whose simulated coverage there is at
least 0.93, the one closest to the nominal 0.95 is reported; below the smallest simulated number of units no
interval is called reliable. When neither reaches 0.93 the better one is
reported with ``reliable: false`` and the reason, e.g. "3 raters × 12 units (skewed): simulated coverage
0.70". Marginals are *skewed* when one category holds at least 55 % of the ratings (the simulated skewed
panels have about 70 % in one category, the balanced ones at most 36 %). α was simulated at the ordinal
level (the report's); at the other levels its coverage is the nearest evidence there is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from stats.coverage_table import COVERAGE

COVERAGE_TARGET = 0.93
NOMINAL = 0.95
SKEWED_SHARE = 0.55
METHODS = ("percentile", "bca")


@dataclass(frozen=True)
class IntervalChoice:
    """The method to report, whether its simulated coverage reaches the target, and why not when it does not."""

    method: str
    reliable: bool
    reason: str | None
    coverage: float | None


def marginal_skew(counts: npt.ArrayLike) -> str:
    """Return "skewed" when one category holds ≥ 55 % of all ratings in a units × categories table, else "balanced".

    Example: ``marginal_skew([[3, 0], [2, 1]])`` → "skewed" (5 of 6 ratings in the first category).
    """
    totals = np.asarray(counts, dtype=np.float64).sum(axis=0)
    if totals.sum() == 0:
        return "balanced"
    return "skewed" if totals.max() / totals.sum() >= SKEWED_SHARE else "balanced"


# A report asks this for every coefficient of every group (≈ 1,500 times for the demo cycle) with few distinct
# designs; the answer depends on its arguments and the fixed table alone.
@lru_cache(maxsize=4096)
def choose_interval_method(
    coefficient: str, *, n_units: int, n_raters: int, skew: str, available: tuple[str, ...] = METHODS
) -> IntervalChoice:
    """Return the interval method for a result, from the simulated coverage of its nearest design.

    Source: the coverage table of ``benchmarks/coverage.py`` (see ``stats/coverage_table.py``).
    Example: ``choose_interval_method("fleiss_kappa", n_units=12, n_raters=3, skew="skewed")`` →
    ``IntervalChoice(method=..., reliable=False, reason="3 raters × 12 units (skewed): simulated coverage 0.7…")``.
    """
    if not available:
        raise ValueError("no interval method is available")
    table = COVERAGE.get(coefficient)
    if not table:
        return IntervalChoice(available[0], False, "no simulated coverage for this coefficient", None)
    design = min(
        table,
        key=lambda key: (
            key[2] != skew,
            abs(math.log(max(n_units, 1) / key[0])) + abs(math.log(max(n_raters, 1) / key[1])),
        ),
    )
    units, raters, design_skew = design
    coverage = {m: table[design][m] for m in available if m in table[design]}
    if not coverage:
        return IntervalChoice(available[0], False, "no simulated coverage for this method", None)
    smallest = min(key[0] for key in table)
    if n_units < smallest:  # below every simulated design: no evidence that any interval keeps its promise
        method = max(coverage, key=lambda m: (coverage[m], -METHODS.index(m)))
        return IntervalChoice(method, False, f"{n_units} units: fewer than the smallest simulated design "
                                             f"({smallest} units)", None)
    good = [m for m, c in coverage.items() if c >= COVERAGE_TARGET]
    if good:
        method = min(good, key=lambda m: (abs(coverage[m] - NOMINAL), METHODS.index(m)))
        return IntervalChoice(method, True, None, coverage[method])
    method = max(coverage, key=lambda m: (coverage[m], -METHODS.index(m)))
    reason = f"{raters} raters × {units} units ({design_skew}): simulated coverage {coverage[method]:.2f}"
    return IntervalChoice(method, False, reason, coverage[method])
