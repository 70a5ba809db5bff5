"""The JSON shapes of :func:`stats.reliability.reliability_summary`: what it returns is stored and rendered as JSON,
so it stays a plain dict (key order included); these TypedDicts say which keys it has and what they hold.

The summary is filled step by step (the design figures first, then each coefficient), so only the keys of the
first step are ``Required``; when ``reliability_summary`` returns, every key is present except the two-rater ones
(``cohen_kappa``, ``cohen_kappa_raters``, ``spearman_rho``, ``kendall_tau_b``), which exist only when exactly two
raters rated.
"""
from __future__ import annotations

from typing import NotRequired, TypedDict

from stats.alpha import Level


class IntervalEntry(TypedDict):
    """One coefficient's reported interval: the method chosen by simulated coverage (or "F" for the ICCs).

    ``coverage`` and ``coverage_basis`` are absent, not null, where there is no simulated evidence.
    """

    low: float | None
    high: float | None
    method: str | None
    reliable: bool
    reason: str | None
    coverage: NotRequired[float]
    coverage_basis: NotRequired[str | None]


class BootstrapInfo(TypedDict):
    """How α's unit bootstrap was run."""

    n_resamples: int
    n_degenerate: int
    confidence: float
    method: str
    n_strata: int
    seed: int | None


class GwetAc2(TypedDict):
    linear: float | None
    quadratic: float | None


class CohenKappas(TypedDict):
    unweighted: float | None
    linear: float | None
    quadratic: float | None


class RaterLeftOut(TypedDict):
    """α without one rater, and its change from the full α."""

    rater: str
    alpha_without: float | None
    change: float | None


class ReliabilitySummary(TypedDict):
    """The IRR summary of one panel's ratings (see :mod:`stats.reliability` for every key's meaning)."""

    level: Level
    categories: list[float | int]
    n_units: int
    n_raters: int
    n_ratings: int
    n_pairable_units: int
    n_unpairable_units: int
    n_values_pairable: int
    krippendorff_alpha: float | None
    alpha_ci: list[float] | None
    alpha_below_min_probability: float | None
    alpha_min: float
    bootstrap: BootstrapInfo | None
    # Filled after the first step; present on return.
    percent_agreement: NotRequired[float | None]
    within_one_agreement: NotRequired[float | None]
    fleiss_kappa: NotRequired[float | None]
    gwet_ac1: NotRequired[float | None]
    gwet_ac2: NotRequired[GwetAc2]
    # Only when exactly two raters rated.
    cohen_kappa: NotRequired[CohenKappas]
    cohen_kappa_raters: NotRequired[list[str]]
    spearman_rho: NotRequired[float | None]
    kendall_tau_b: NotRequired[float | None]
    # Present on return.
    leave_one_rater_out: NotRequired[list[RaterLeftOut]]
    icc_2_1: NotRequired[float | None]
    icc_3_1: NotRequired[float | None]
    intervals: NotRequired[dict[str, IntervalEntry | None]]
    warnings: NotRequired[list[str]]
