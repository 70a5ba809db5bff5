"""The IRR summary of one panel's ratings: every coefficient the report shows, as JSON-ready plain data.

A coefficient that has no value for the data (no pairable unit, one category only, one rater) is ``None``
and the ``warnings`` list says why; NaN never leaves this module. Cohen's κ, Spearman's ρ and Kendall's
τ-b are reported only when exactly two raters rated (a judge against a reference, or a pair of experts).
Fleiss' κ uses Gwet's (2014) generalisation to a varying number of raters per unit (see :mod:`stats.kappa`),
so missing ratings need no imputation and no unit is dropped for them.

Intervals. ``intervals`` has one entry per coefficient, keyed by its name (``krippendorff_alpha``,
``percent_agreement``, ``within_one_agreement``, ``fleiss_kappa``, ``gwet_ac1``, ``gwet_ac2_linear``,
``gwet_ac2_quadratic``; with two raters ``cohen_kappa_unweighted|linear|quadratic``, ``spearman_rho``,
``kendall_tau_b``): ``{"low", "high", "method", "reliable", "reason"}`` plus ``"coverage", "coverage_basis"``
where there is simulated evidence, or ``None`` where the coefficient is ``None``. All come from one unit bootstrap (:mod:`stats.intervals`: every
coefficient on the same resampled unit sets); the method — percentile or BCa — is the one whose simulated
coverage, estimated at the data's own design (pairable units, raters, missing share, share of the most common
category; :mod:`stats.interval_choice`), reaches 0.93, else ``reliable`` is false and ``reason`` says why;
``coverage`` is the figure used and ``coverage_basis`` where it came from. A reported interval always contains its
estimate and has width when the replicates vary: where the chosen method's would not (the estimate at the edge of
the resampling distribution, e.g. every unit disagreeing regularly), the other method's is reported, flagged not
reliable, or none, with ``reason`` saying why (:func:`stats.bootstrap.edge_reason`).
``alpha_ci`` is the interval reported for α (the chosen method's; None when α has none). ICC(2,1) and ICC(3,1) (:mod:`stats.icc`,
units every rater scored) carry their F-based intervals (method "F"). Data with too many distinct values for a
units × values table (continuous scores: more than ``MAX_CATEGORIES`` distinct values, or more than
``MAX_COUNT_CELLS`` units × values) get α with its interval (interval and ratio levels, from per-unit sums:
:func:`stats.intervals.bootstrap_continuous_alpha`), ICC and rank correlations only, with a warning.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from stats.agreement import weighted_observed_agreement
from stats.alpha import DEFAULT_ALPHA_MIN, Level, check_level, krippendorff_alpha, leave_one_rater_out
from stats.alpha_continuous import RATIO_MAX_PAIRS
from stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, edge_reason, interval_holds
from stats.gwet import gwet_ac_from_counts
from stats.icc import IccPair, icc
from stats.interval_choice import IntervalChoice, choose_interval_method, top_category_share
from stats.intervals import (
    MAX_CATEGORIES,
    MAX_COUNT_CELLS,
    CoefficientFunctions,
    CoefficientReplicates,
    bootstrap_coefficients,
    bootstrap_continuous_alpha,
    stratum_codes_of,
    unit_patterns,
)
from stats.kappa import fleiss_kappa_from_counts
from stats.matrix import (
    FloatArray,
    IntArray,
    UndefinedCoefficientError,
    as_reliability_matrix,
    level_warnings,
    resolve_categories,
    value_counts,
)
from stats.pairwise import KappaWeights, cohen_kappa_from_confusion, pairwise_confusion
from stats.shapes import CohenKappas, IntervalEntry, ReliabilitySummary
from stats.weights import tolerance_weights

# MAX_COUNT_CELLS, MAX_CATEGORIES (from stats.intervals, the one place they are set): above either the ratings are
# continuous scores and only α (from per-unit sums), ICC and rank correlations are computed.


Coefficient = Callable[[str, Callable[[], float]], float | None]


def _coefficient_recorder(warnings: list[str]) -> Coefficient:
    """A function computing a named coefficient: its value, or None with a warning when it is undefined."""

    def coefficient(name: str, compute: Callable[[], float]) -> float | None:
        try:
            value = compute()
        except UndefinedCoefficientError as exc:
            warnings.append(f"{name}: undefined — {exc}")
            return None
        if not math.isfinite(value):
            warnings.append(f"{name}: undefined for these data")
            return None
        return value

    return coefficient


def _summary_head(data: FloatArray, rated_rows: npt.NDArray[np.bool_], level: Level, cat_list: list[float],
                  alpha_min: float, warnings: list[str]) -> ReliabilitySummary:
    """The summary's counts and Krippendorff's α (its interval filled in later)."""
    alpha = krippendorff_alpha(data, level, cat_list)
    warnings.extend(alpha.warnings)
    return {
        "level": level,
        "categories": [_plain(c) for c in cat_list],
        "n_units": alpha.n_units,
        "n_raters": int(rated_rows.sum()),
        "n_ratings": int((~np.isnan(data)).sum()),
        "n_pairable_units": alpha.n_pairable_units,
        "n_unpairable_units": alpha.n_unpairable_units,
        "n_values_pairable": alpha.n_values_pairable,
        "krippendorff_alpha": alpha.alpha,
        "alpha_ci": None,
        "alpha_below_min_probability": None,
        "alpha_min": alpha_min,
        "bootstrap": None,
    }


def _count_coefficients(summary: ReliabilitySummary, counts: IntArray, cats: FloatArray,
                        coefficient: Coefficient) -> None:
    """Agreement, Fleiss' κ and Gwet's AC1/AC2: the same functions as percent_agreement, fleiss_kappa and gwet_ac,
    on one table of value counts."""
    summary["percent_agreement"] = coefficient(
        "percent_agreement", lambda: weighted_observed_agreement(counts, tolerance_weights(cats, 0.0))
    )
    summary["within_one_agreement"] = coefficient(
        "within_one_agreement", lambda: weighted_observed_agreement(counts, tolerance_weights(cats, 1.0))
    )
    summary["fleiss_kappa"] = coefficient("fleiss_kappa", lambda: fleiss_kappa_from_counts(counts))
    summary["gwet_ac1"] = coefficient("gwet_ac1", lambda: gwet_ac_from_counts(counts, cats, "identity"))
    summary["gwet_ac2"] = {
        "linear": coefficient("gwet_ac2 (linear)", lambda: gwet_ac_from_counts(counts, cats, "linear")),
        "quadratic": coefficient("gwet_ac2 (quadratic)", lambda: gwet_ac_from_counts(counts, cats, "quadratic")),
    }


def _rater_coefficients(summary: ReliabilitySummary, data: FloatArray, rated: npt.NDArray[np.intp], *,
                        cats: FloatArray, level: Level, labels: list[str], coefficient: Coefficient,
                        warnings: list[str]) -> None:
    """Cohen's κ and rank correlations (two raters), leave-one-rater-out α (three or more)."""
    cat_list = cats.tolist()
    if rated.size == 2:
        summary["cohen_kappa"] = _cohen_kappas(data[rated], cat_list, coefficient)
        summary["cohen_kappa_raters"] = [labels[rated[0]], labels[rated[1]]]
        summary["spearman_rho"] = coefficient("spearman_rho", lambda: _rank_correlation(data[rated], cats, "spearman"))
        summary["kendall_tau_b"] = coefficient("kendall_tau_b", lambda: _rank_correlation(data[rated], cats, "kendall"))
    elif rated.size < 2:
        warnings.append("fewer than two raters rated anything, so no agreement can be measured")

    if rated.size >= 3:
        summary["leave_one_rater_out"] = [
            {"rater": r.rater, "alpha_without": r.alpha_without, "change": r.change}
            for r in leave_one_rater_out(data[rated], level, cat_list, [labels[i] for i in rated])
        ]
    else:
        summary["leave_one_rater_out"] = []


def reliability_summary(
    matrix: npt.ArrayLike,
    *,
    level: Level = "ordinal",
    categories: Sequence[float] | None = None,
    rater_labels: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha_min: float = DEFAULT_ALPHA_MIN,
    strata: Sequence[object] | None = None,
    seed: int | np.random.Generator | np.random.SeedSequence | None = None,
    interval_coefficients: tuple[str, ...] | None = None,
) -> ReliabilitySummary:
    """Return α (with bootstrap CI and P(α < α_min)), agreement, Fleiss' κ, Gwet's AC1/AC2 and Cohen's κ.

    ``interval_coefficients`` (keys of ``intervals``, e.g. ``("krippendorff_alpha",)``) bootstraps only those: their
    intervals are bit for bit the ones of a full summary, the others are left out of ``intervals``.

    Sources: Krippendorff (2011); Hayes & Krippendorff (2007); Fleiss (1971) / Gwet (2014); Gwet (2014);
    Cohen (1960, 1968). ``n_resamples=0`` turns the bootstrap off. Example: the 2011 paper's 4 × 12 data at
    the ordinal level → ``{"krippendorff_alpha": 0.8154, "n_pairable_units": 11, ...}``.
    """
    level = check_level(level)
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    cat_list = cats.tolist()
    labels = list(rater_labels) if rater_labels is not None else [str(i) for i in range(data.shape[0])]
    warnings: list[str] = []

    rated_rows: npt.NDArray[np.bool_] = np.asarray((~np.isnan(data)).any(axis=1), dtype=bool)
    summary = _summary_head(data, rated_rows, level, cat_list, alpha_min, warnings)
    coefficient = _coefficient_recorder(warnings)

    warnings.extend(level_warnings(data, level))
    if cats.size * data.shape[1] > MAX_COUNT_CELLS or cats.size > MAX_CATEGORIES:
        _continuous_summary(summary, data, rated_rows, labels, level, warnings)
        _add_continuous_interval(summary, data[rated_rows], level, n_resamples=n_resamples, confidence=confidence,
                                 alpha_min=alpha_min, strata=strata, seed=seed, warnings=warnings)
        return summary

    counts = value_counts(data, cats)
    _count_coefficients(summary, counts, cats, coefficient)
    rated = np.flatnonzero(rated_rows)
    _rater_coefficients(summary, data, rated, cats=cats, level=level, labels=labels, coefficient=coefficient,
                        warnings=warnings)

    icc_pair = _icc(data[rated], confidence, warnings) if rated.size >= 2 else None
    summary["icc_2_1"] = icc_pair.icc_2_1.value if icc_pair else None
    summary["icc_3_1"] = icc_pair.icc_3_1.value if icc_pair else None

    _add_intervals(
        summary, data[rated], cats, level, counts=counts, n_resamples=n_resamples, confidence=confidence,
        alpha_min=alpha_min, strata=strata, seed=seed, warnings=warnings, only=interval_coefficients,
    )
    summary["intervals"].update(_icc_intervals(icc_pair))
    chosen = summary["intervals"].get("krippendorff_alpha")
    if chosen and chosen["low"] is not None and chosen["high"] is not None:  # α's reported interval is the one chosen by simulated coverage
        summary["alpha_ci"] = [chosen["low"], chosen["high"]]
    elif chosen:
        summary["alpha_ci"] = None  # e.g. a percentile interval that would exclude α itself (_interval_entry)
    summary["warnings"] = warnings
    return summary


def _icc(data: FloatArray, confidence: float, warnings: list[str]) -> IccPair | None:
    """ICC(2,1) and ICC(3,1) over the units every rater scored, or None with the reason in ``warnings``."""
    try:
        pair = icc(data, confidence=confidence)
    except UndefinedCoefficientError as exc:
        warnings.append(f"icc: {exc}")
        return None
    for name, result in (("icc_2_1", pair.icc_2_1), ("icc_3_1", pair.icc_3_1)):
        if result.value is None:
            warnings.append(f"{name}: undefined — no variance between units beyond the raters' differences")
    if pair.icc_2_1.n_units_dropped:
        warnings.append(f"icc: computed over the {pair.icc_2_1.n_units} unit(s) every rater scored "
                        f"({pair.icc_2_1.n_units_dropped} with a missing rating left out)")
    return pair


def _icc_intervals(pair: IccPair | None) -> dict[str, IntervalEntry | None]:
    """The F-based intervals of the ICCs (McGraw & Wong 1996), in the shape of the bootstrap intervals."""
    if pair is None:
        return {"icc_2_1": None, "icc_3_1": None}
    out: dict[str, IntervalEntry | None] = {}
    for name, result in (("icc_2_1", pair.icc_2_1), ("icc_3_1", pair.icc_3_1)):
        if result.value is None:
            out[name] = None
            continue
        out[name] = ({"low": result.low, "high": result.high, "method": "F", "reliable": True, "reason": None}
                     if result.low is not None else _no_interval("the F quantiles are undefined for these data"))
    return out


def _continuous_summary(
    summary: ReliabilitySummary, data: FloatArray, rated_rows: npt.NDArray[np.bool_], labels: list[str], level: Level,
    warnings: list[str],
) -> ReliabilitySummary:
    """Data with too many distinct values for a units × values table: α, ICC and rank correlations only.

    The categorical coefficients (agreement, Fleiss' κ, AC1/AC2, Cohen's κ) and their bootstrap need that
    table; they are left out with one warning instead of exhausting memory. α's interval is added by
    :func:`_add_continuous_interval`.
    """
    distinct = int(np.unique(data[~np.isnan(data)]).size)
    warnings.append(f"{distinct} distinct values over {data.shape[1]} units: agreement, Fleiss' kappa, AC1/AC2, "
                    "Cohen's kappa and their intervals are not computed (they treat values as categories); "
                    "alpha (with its interval at the interval and ratio levels), ICC and rank correlations are")
    for name in ("percent_agreement", "within_one_agreement", "fleiss_kappa", "gwet_ac1"):
        summary[name] = None
    summary["gwet_ac2"] = {"linear": None, "quadratic": None}
    rated = np.flatnonzero(rated_rows)
    if rated.size == 2:
        pair = data[rated]
        both = ~np.isnan(pair).any(axis=0)
        summary["cohen_kappa"] = {"unweighted": None, "linear": None, "quadratic": None}
        summary["cohen_kappa_raters"] = [labels[rated[0]], labels[rated[1]]]
        summary["spearman_rho"], summary["kendall_tau_b"] = _scipy_rank(pair[:, both], warnings)
    summary["leave_one_rater_out"] = []
    full = summary["krippendorff_alpha"]
    loo = rated if rated.size >= 3 else np.empty(0, dtype=np.int64)
    n_values = float(summary["n_values_pairable"])
    if level == "ratio" and loo.size and n_values * n_values > RATIO_MAX_PAIRS:
        # Each rater left out needs its own sum over every pair of values (no decomposition exists for ratio).
        warnings.append(f"leave_one_rater_out: not computed for ratio alpha over {int(n_values)} values (each would "
                        "sum every pair of values again); the interval level gives it")
        loo = np.empty(0, dtype=np.int64)
    for i in loo:  # α without each rater, each from the value-pair form
        without = krippendorff_alpha(np.delete(data, i, axis=0), level).alpha
        summary["leave_one_rater_out"].append({
            "rater": labels[i], "alpha_without": without,
            "change": without - full if without is not None and full is not None else None})
    icc_pair = _icc(data[rated], DEFAULT_CONFIDENCE, warnings) if rated.size >= 2 else None
    summary["icc_2_1"] = icc_pair.icc_2_1.value if icc_pair else None
    summary["icc_3_1"] = icc_pair.icc_3_1.value if icc_pair else None
    summary["intervals"] = {
        name: None if value is None else _no_interval("no bootstrap for data with this many distinct values")
        for name, value in _point_values(summary).items()
    } | _icc_intervals(icc_pair)
    summary["warnings"] = warnings
    return summary


def _add_continuous_interval(
    summary: ReliabilitySummary,
    data: FloatArray,
    level: Level,
    *,
    n_resamples: int,
    confidence: float,
    alpha_min: float,
    strata: Sequence[object] | None,
    seed: int | np.random.Generator | np.random.SeedSequence | None,
    warnings: list[str],
) -> None:
    """α's interval for continuous data (interval and ratio levels), from the unit bootstrap over per-unit sums."""
    if summary["krippendorff_alpha"] is None:
        return
    if n_resamples <= 0:
        warnings.append("alpha_ci: bootstrap turned off (0 resamples)")
        summary["intervals"]["krippendorff_alpha"] = _no_interval("bootstrap turned off (0 resamples)")
        return
    if level not in ("interval", "ratio"):
        why = (f"no bootstrap for {level} alpha with this many distinct values (its cost grows with their square); "
               "use the interval level for continuous data")
        warnings.append(f"alpha_ci: {why}")
        summary["intervals"]["krippendorff_alpha"] = _no_interval(why)
        return
    codes = stratum_codes_of(strata, data.shape[1])
    result = bootstrap_continuous_alpha(data, level, stratum_codes=codes, n_resamples=n_resamples,
                                        rng=np.random.default_rng(seed), confidence=confidence)
    _record_alpha_bootstrap(summary, result, n_resamples=n_resamples, confidence=confidence, alpha_min=alpha_min,
                            strata=strata, codes=codes, seed=seed, warnings=warnings)
    missing_share = float(np.isnan(data).mean()) if data.size else 0.0
    entry = _interval_entry("krippendorff_alpha", result, n_units=summary["n_pairable_units"],
                            ratings_per_unit=summary["n_values_pairable"] / summary["n_pairable_units"],
                            missing_share=missing_share,
                            top_share=0.0)  # continuous: no value holds a large share of ratings (the balanced class)
    if entry["low"] is None or entry["high"] is None:
        warnings.append(f"intervals: krippendorff_alpha: {entry['reason']}")
        summary["alpha_ci"] = None
    else:
        summary["alpha_ci"] = [entry["low"], entry["high"]]
    summary["intervals"]["krippendorff_alpha"] = entry


def _record_alpha_bootstrap(
    summary: ReliabilitySummary,
    alpha_boot: CoefficientReplicates,
    *,
    n_resamples: int,
    confidence: float,
    alpha_min: float,
    strata: Sequence[object] | None,
    codes: npt.NDArray[np.int64],
    seed: int | np.random.Generator | np.random.SeedSequence | None,
    warnings: list[str],
) -> None:
    """Fill ``alpha_ci`` (percentile), ``alpha_below_min_probability`` and ``bootstrap`` from α's replicates."""
    valid = alpha_boot.replicates[np.isfinite(alpha_boot.replicates)]
    if alpha_boot.n_degenerate:
        warnings.append(
            f"bootstrap: {alpha_boot.n_degenerate} of {n_resamples} bootstrap replicates had a single value only "
            "(no expected disagreement) and were skipped"
        )
    if alpha_boot.percentile is None:
        warnings.append("bootstrap: no bootstrap replicate had a defined value, so there is no interval")
    else:
        summary["alpha_ci"] = list(alpha_boot.percentile)
    summary["alpha_below_min_probability"] = float((valid < alpha_min).mean()) if valid.size else None
    summary["bootstrap"] = {
        "n_resamples": n_resamples,
        "n_degenerate": alpha_boot.n_degenerate,
        "confidence": confidence,
        "method": "percentile and BCa; units resampled with replacement"
        + (" within strata" if strata is not None else "")
        + "; alpha_ci is the interval reported for alpha (its method in intervals)",
        "n_strata": int(codes.max()) + 1 if codes.size else 1,
        "seed": seed if isinstance(seed, int) else None,
    }


def _scipy_rank(pair: FloatArray, warnings: list[str]) -> tuple[float | None, float | None]:
    """Spearman's ρ and Kendall's τ-b of two long continuous score vectors (scipy.stats, imported here only)."""
    if pair.shape[1] < 3 or np.ptp(pair[0]) == 0 or np.ptp(pair[1]) == 0:
        warnings.append("spearman_rho, kendall_tau_b: undefined — fewer than three common units or a constant rater")
        return None, None
    from scipy.stats import kendalltau, spearmanr

    return float(spearmanr(pair[0], pair[1]).statistic), float(kendalltau(pair[0], pair[1]).statistic)


def _point_values(summary: ReliabilitySummary) -> dict[str, float | None]:
    """The summary's point estimate of every coefficient that gets an interval, by interval key."""
    values: dict[str, float | None] = {
        name: summary[name]
        for name in ("krippendorff_alpha", "percent_agreement", "within_one_agreement", "fleiss_kappa", "gwet_ac1")
    }
    values["gwet_ac2_linear"] = summary["gwet_ac2"]["linear"]
    values["gwet_ac2_quadratic"] = summary["gwet_ac2"]["quadratic"]
    if "cohen_kappa" in summary:
        for kind in ("unweighted", "linear", "quadratic"):
            values[f"cohen_kappa_{kind}"] = summary["cohen_kappa"][kind]
        values["spearman_rho"] = summary["spearman_rho"]
        values["kendall_tau_b"] = summary["kendall_tau_b"]
    return values


def _add_intervals(
    summary: ReliabilitySummary,
    data: FloatArray,
    cats: FloatArray,
    level: Level,
    *,
    counts: npt.NDArray[np.int64],
    n_resamples: int,
    confidence: float,
    alpha_min: float,
    strata: Sequence[object] | None,
    seed: int | np.random.Generator | np.random.SeedSequence | None,
    warnings: list[str],
    only: tuple[str, ...] | None = None,
) -> None:
    """Fill ``alpha_ci``, ``alpha_below_min_probability``, ``bootstrap`` and ``intervals`` from one unit bootstrap
    (of every coefficient, or of those in ``only``)."""
    values = _point_values(summary)
    if only is not None:
        values = {name: value for name, value in values.items() if name in only}
    summary["intervals"] = {}
    if n_resamples <= 0 or summary["n_pairable_units"] == 0:
        if n_resamples <= 0:
            why = "bootstrap turned off (0 resamples)"
            warnings.append(f"alpha_ci: {why}")
        else:
            why = "no unit has two or more ratings"
            warnings.append("alpha_ci: no bootstrap because alpha itself is undefined")
        summary["intervals"] = {
            name: None if value is None else _no_interval(why) for name, value in values.items()
        }
        return
    replicates = bootstrap_coefficients(
        data, cats, level, stratum_codes=stratum_codes_of(strata, data.shape[1]), n_resamples=n_resamples,
        rng=np.random.default_rng(seed), confidence=confidence, two_raters=data.shape[0] == 2,
        coefficients=None if only is None else tuple(dict.fromkeys(("krippendorff_alpha", *only))),
    )
    if summary["krippendorff_alpha"] is None:
        warnings.append("alpha_ci: no bootstrap because alpha itself is undefined")
    else:
        _record_alpha_bootstrap(summary, replicates["krippendorff_alpha"], n_resamples=n_resamples,
                                confidence=confidence, alpha_min=alpha_min, strata=strata,
                                codes=stratum_codes_of(strata, data.shape[1]), seed=seed, warnings=warnings)
    # The design the interval's simulated coverage is estimated at: pairable units, raters, missing share, skew.
    top_share = top_category_share(counts)
    missing_share = float(np.isnan(data).mean()) if data.size else 0.0
    for name, value in values.items():
        if value is None:
            summary["intervals"][name] = None
            continue
        entry = _interval_entry(name, replicates.get(name), n_units=summary["n_pairable_units"],
                                ratings_per_unit=summary["n_values_pairable"] / summary["n_pairable_units"],
                                missing_share=missing_share, top_share=top_share)
        if entry["low"] is None:
            warnings.append(f"intervals: {name}: {entry['reason']}")
        summary["intervals"][name] = entry


def _interval_entry(
    name: str, result: CoefficientReplicates | None, *, n_units: int, ratings_per_unit: float, missing_share: float,
    top_share: float,
) -> IntervalEntry:
    """The reported interval of one coefficient: the method chosen by simulated coverage, its bounds and flag."""
    if result is None:
        return _no_interval("not bootstrapped")
    available = tuple(m for m, bounds in (("percentile", result.percentile), ("bca", result.bca)) if bounds)
    if not available:
        return _no_interval(result.note or "no bootstrap replicate had a defined value")

    def choose(methods: tuple[str, ...]) -> IntervalChoice:
        return choose_interval_method(name, n_units=n_units, ratings_per_unit=ratings_per_unit,
                                      missing_share=missing_share, top_share=top_share, available=methods)

    choice = choose(available)
    bounds = {"percentile": result.percentile, "bca": result.bca}
    finite = result.replicates[np.isfinite(result.replicates)]
    spread = bool(finite.size and finite.max() > finite.min())

    def acceptable(method: str) -> bool:
        # An interval never excludes its own estimate; nor is it of zero width when the replicates vary (at the
        # edge of the resampling distribution BCa collapses onto the estimate, its z0 being extreme): that would
        # claim a certainty the bootstrap does not show.
        low_high = bounds[method]
        return interval_holds(low_high, result.estimate) and low_high is not None \
            and (not spread or low_high[1] > low_high[0])

    reason = choice.reason
    if not acceptable(choice.method):
        # The other method if it is acceptable (flagged, since the method chosen for its coverage failed on this
        # sample), else words (stats.bootstrap.edge_reason).
        holding = tuple(m for m in available if acceptable(m))
        if not holding or result.estimate is None:
            return _no_interval(edge_reason(result.replicates, result.estimate or 0.0))
        failed = choice.method
        choice = choose(holding)
        reason = (f"the {failed} interval would exclude the estimate or have no width (the bootstrap distribution "
                  f"lies almost wholly on one side of it); the {choice.method} interval is shown"
                  + (f"; {choice.reason}" if choice.reason else ""))
        choice = dataclasses.replace(choice, reliable=False, reason=reason)
    low, high = bounds[choice.method]  # type: ignore[misc]
    entry: IntervalEntry = {"low": low, "high": high, "method": choice.method, "reliable": choice.reliable,
                            "reason": reason}
    if choice.coverage is not None:  # absent, not null, where there is no simulated evidence: the reason says why
        entry |= {"coverage": round(choice.coverage, 3), "coverage_basis": choice.basis}
    return entry


def _no_interval(reason: str) -> IntervalEntry:
    return {"low": None, "high": None, "method": None, "reliable": False, "reason": reason}


def _rank_correlation(pair: FloatArray, cats: FloatArray, kind: str) -> float:
    """Spearman's ρ or Kendall's τ-b of two raters over the units both rated; raises when undefined.

    ρ is the Pearson correlation of mid-ranks (Spearman 1904), τ-b Kendall's (1945) tie-corrected τ; both from
    :class:`stats.intervals.CoefficientFunctions` at the sample itself (equal to scipy.stats.spearmanr and
    kendalltau to 1e-10, tests/stats/test_intervals.py) — no scipy.stats import, which costs about a second.
    Example: ratings (0, 1, 2) and (0, 2, 1) → ρ = 0.5, τ-b = 1/3.
    """
    both = ~np.isnan(pair).any(axis=0)
    a, b = pair[0, both], pair[1, both]
    if a.size < 2:
        raise UndefinedCoefficientError("fewer than two units were rated by both raters")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise UndefinedCoefficientError("a rater gave one and the same value to every common unit")
    patterns = unit_patterns(pair, cats, np.zeros(pair.shape[1], dtype=np.int64), two_raters=True)
    functions = CoefficientFunctions(patterns, cats, "interval")
    weights = patterns.freq[np.newaxis, :]
    sums = weights @ functions.linear
    value = functions.spearman_rho(weights, sums) if kind == "spearman" else functions.kendall_tau_b(weights, sums)
    return float(value[0])


def _cohen_kappas(
    pair: FloatArray, categories: list[float], coefficient: Callable[[str, Callable[[], float]], float | None]
) -> CohenKappas:
    """Unweighted, linear and quadratic κ of a two-rater matrix, from one confusion table (stats.pairwise).

    Equal to :func:`stats.kappa.cohen_kappa` (scikit-learn) to 1e-12, without its per-call validation cost.
    """
    confusion = pairwise_confusion(pair, categories)[0, 1]

    def kappa(weights: KappaWeights) -> float:
        if confusion.sum() == 0:
            raise UndefinedCoefficientError("no unit was rated by both raters")
        value = float(cohen_kappa_from_confusion(confusion, categories, weights))
        if math.isnan(value):
            raise UndefinedCoefficientError(
                "both raters used one and the same category for every unit, so chance agreement is 1"
            )
        return value

    return {
        "unweighted": coefficient("cohen_kappa (unweighted)", lambda: kappa(None)),
        "linear": coefficient("cohen_kappa (linear)", lambda: kappa("linear")),
        "quadratic": coefficient("cohen_kappa (quadratic)", lambda: kappa("quadratic")),
    }


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)
