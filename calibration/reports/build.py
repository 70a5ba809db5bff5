"""Build the calibration report from plain rating records (no database access here).

A *unit* is one cycle item × one rubric sub-dimension. Groups: overall, per sub-dimension, dimension,
tradition and difficulty. For every group the report gives

* experts among themselves: Krippendorff's α (ordinal) with a percentile bootstrap CI (stratified by
  dimension for groups that span dimensions), P(α < 0.667), exact agreement, Fleiss' κ, Gwet's AC1/AC2,
  pairwise quadratic Cohen's κ for every pair of experts with common units, and leave-one-rater-out α;
* the judge against the expert majority, and against adjudicated gold where it exists: α with CI,
  quadratic κ, exact agreement, a 4 × 4 confusion matrix and the mean signed difference (judge − reference);
* α of the panel with and without the judge as one more rater;
* pass / fail / uncertain against the methodology's targets (α ≥ 0.67, κ ≥ 0.61, exact agreement
  ≥ 70 %), with n and the interval, so that a pass with a wide interval reads as uncertain.

The expert majority of a unit is the median of its experts' scores. With an even number of experts whose
two middle scores differ, the median falls between two points; the tie rule takes the LOWER of the two
middle scores (a conservative reading: the judge is not credited with agreeing with a score that half
of the panel did not give).
"""
from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from stats.alpha import DEFAULT_ALPHA_MIN, krippendorff_alpha
from stats.bootstrap import named_seed
from stats.diagnostics import bland_altman, rater_bias
from stats.matrix import UndefinedCoefficientError, matrix_from_triples
from stats.pairwise import cohen_kappa_from_confusion, pairwise_confusion
from stats.reliability import reliability_summary

from ..cycles.ratings import Rating, UnitInfo
from .schema import (
    AgainstReference,
    BlandAltmanSummary,
    Experts,
    Group,
    Interval,
    Meta,
    PairwiseKappa,
    Provenance,
    RaterDiagnostic,
    Report,
    Targets,
    Verdicts,
    tree_from_json,
)

CATEGORIES = [0, 1, 2, 3]
TARGETS = {"alpha": 0.67, "kappa": 0.61, "exact_agreement": 0.70}  # methodology §5.7.2
# The coefficients of a judge-vs-reference block that have a point value in it (and so an interval).
REFERENCE_INTERVALS = ("krippendorff_alpha", "percent_agreement", "cohen_kappa_quadratic", "spearman_rho",
                       "kendall_tau_b")
MAJORITY_RULE = "median of expert scores; lower middle score when the median falls between two"
GROUP_KINDS = ("overall", "sub_dimension", "dimension", "tradition", "difficulty")


MIN_BOOTSTRAP_UNITS = 2  # the fewest units a unit bootstrap interval is computed from


def verdict(value: float | None, interval: Sequence[float] | None, target: float) -> str:
    """pass / fail when the interval (or, without one, the point) is clear of the target; else uncertain."""
    if value is None:
        return "undefined"
    if interval is None:
        return "pass" if value >= target else "fail"
    low, high = interval
    if low >= target:
        return "pass"
    if high < target:
        return "fail"
    return "uncertain"


def expert_matrix(units: list[tuple[str, str]], raters: list[str],
                  values: dict[tuple[str, tuple[str, str]], int]) -> np.ndarray:
    """The raters × units matrix of scores (NaN where a rater did not score a unit)."""
    return matrix_from_triples(((rater, unit, score) for (rater, unit), score in values.items()), raters, units)


def _safe(compute: Callable[[], float | None]) -> float | None:
    try:
        raw = compute()
    except UndefinedCoefficientError:
        return None
    if raw is None:  # undefined: the judge alone before any expert scored, or every value the same
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


def pairwise_kappas(data: np.ndarray, raters: list[str]) -> list[PairwiseKappa]:
    """Quadratic κ and exact agreement for every pair of experts with two or more common units."""
    confusion = pairwise_confusion(data, CATEGORIES)
    n_common = confusion.sum(axis=(-2, -1))
    agreeing = np.trace(confusion, axis1=-2, axis2=-1)
    kappa = cohen_kappa_from_confusion(confusion, CATEGORIES, "quadratic")
    pairs = []
    for i, j in zip(*np.triu_indices(len(raters), k=1), strict=True):
        n = int(n_common[i, j])
        if n < 2:
            continue
        value = float(kappa[i, j])
        pairs.append(PairwiseKappa(raters=[raters[i], raters[j]], n_units=n,
                                   quadratic_kappa=value if math.isfinite(value) else None,
                                   exact_agreement=int(agreeing[i, j]) / n))
    return pairs


def _verdicts(alpha: float | None, alpha_ci: list[float] | None, kappa: float | None,
              exact_agreement: float | None) -> Verdicts:
    return Verdicts(alpha=verdict(alpha, alpha_ci, TARGETS["alpha"]), kappa=verdict(kappa, None, TARGETS["kappa"]),
                    exact_agreement=verdict(exact_agreement, None, TARGETS["exact_agreement"]))


def against_reference(
    judge: np.ndarray, reference: np.ndarray, *, strata: Sequence[str] | None, n_resamples: int,
    seed: int, experts: np.ndarray | None = None, intervals: tuple[str, ...] | None = None,
) -> AgainstReference:
    """Judge vs a reference rating (expert majority or gold) over units that have both.

    The Bland–Altman summary compares the judge with the experts' median (the true median, not the
    majority's lower-middle rule) when the experts' matrix is given, else with the reference itself.
    """
    both = ~np.isnan(judge) & ~np.isnan(reference)
    n = int(both.sum())
    if n == 0:
        return AgainstReference(
            n_units=n, alpha=None, alpha_ci=None, alpha_below_min_probability=None, quadratic_kappa=None,
            exact_agreement=None, confusion=None, mean_signed_difference=None,
            warnings=["no unit has both a judge score and a reference"],
            verdicts=Verdicts(alpha="undefined", kappa="undefined", exact_agreement="undefined"))
    j, r = judge[both], reference[both]
    pair = np.vstack([j, r])
    # A unit bootstrap of fewer than two units resamples one unit again and again: a point, not an interval.
    summary = reliability_summary(
        pair, level="ordinal", categories=CATEGORIES, rater_labels=["judge", "reference"],
        n_resamples=n_resamples if n >= MIN_BOOTSTRAP_UNITS else 0,
        strata=None if strata is None else [s for s, keep in zip(strata, both, strict=True) if keep], seed=seed,
        interval_coefficients=intervals,
    )
    size = len(CATEGORIES)  # rows: judge score, columns: reference score
    confusion = np.bincount(j.astype(int) * size + r.astype(int), minlength=size * size).reshape(size, size)
    quadratic = summary["cohen_kappa"]["quadratic"] if "cohen_kappa" in summary else None
    exact = float(np.mean(j == r))
    return AgainstReference(
        n_units=n,
        alpha=summary["krippendorff_alpha"],
        alpha_ci=summary["alpha_ci"],
        alpha_below_min_probability=summary["alpha_below_min_probability"],
        quadratic_kappa=quadratic,
        exact_agreement=exact,
        confusion=confusion.tolist(),
        mean_signed_difference=float(np.mean(j - r)),
        warnings=summary["warnings"],
        spearman_rho=summary.get("spearman_rho"),
        kendall_tau_b=summary.get("kendall_tau_b"),
        intervals={key: None if interval is None else tree_from_json(Interval, interval, f"intervals.{key}")
                   for key, interval in (summary.get("intervals") or {}).items() if key in REFERENCE_INTERVALS},
        bland_altman=BlandAltmanSummary(**dataclasses.asdict(
            bland_altman(j, experts[:, both] if experts is not None and experts.shape[0] else r[np.newaxis, :]))),
        verdicts=_verdicts(summary["krippendorff_alpha"], summary["alpha_ci"], quadratic, exact),
    )


def majority_row(data: np.ndarray) -> np.ndarray:
    """`majority` of every column of a raters × units matrix at once; NaN where no expert scored the unit."""
    if data.shape[0] == 0:
        return np.full(data.shape[1], np.nan)
    rated = (~np.isnan(data)).sum(axis=0)
    lower_middle = (np.maximum(rated, 1) - 1) // 2
    picked = np.take_along_axis(np.sort(data, axis=0), lower_middle[np.newaxis, :], axis=0)[0]  # NaN sort last
    return np.where(rated > 0, picked, np.nan)


def _experts(units: list[UnitInfo], data: np.ndarray, raters: list[str], *, strata: list[str] | None,
             n_resamples: int, seed: int) -> Experts:
    """The experts' block of a group: every coefficient of `reliability_summary`, pairwise κ and the verdicts."""
    pairs = pairwise_kappas(data, raters) if len(raters) >= 2 else []
    kappas = [p.quadratic_kappa for p in pairs if p.quadratic_kappa is not None]
    mean_kappa = float(np.mean(kappas)) if kappas else None
    if len(raters) == 0:
        # The same fields as a computed summary, all empty: a report has one shape (calibration/reports/schema.py).
        return Experts(
            level="ordinal", categories=CATEGORIES, n_units=len(units), n_raters=0, n_ratings=0, n_pairable_units=0,
            n_unpairable_units=len(units), n_values_pairable=0, krippendorff_alpha=None, alpha_ci=None,
            alpha_below_min_probability=None, alpha_min=DEFAULT_ALPHA_MIN, bootstrap=None, percent_agreement=None,
            within_one_agreement=None, fleiss_kappa=None, gwet_ac1=None, gwet_ac2=None, leave_one_rater_out=[],
            warnings=["no expert scored these units"], pairwise_kappa=pairs, mean_pairwise_quadratic_kappa=mean_kappa,
            verdicts=_verdicts(None, None, mean_kappa, None))
    # reliability_summary's dict is stats' boundary: read once, strictly, into the tree
    pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    summary = reliability_summary(data, level="ordinal", categories=CATEGORIES, rater_labels=raters,
                                  n_resamples=n_resamples if pairable >= MIN_BOOTSTRAP_UNITS else 0,
                                  strata=strata, seed=seed)
    diagnostics = [RaterDiagnostic(**dataclasses.asdict(r))
                   for r in rater_bias(data, rater_labels=raters, categories=CATEGORIES)] if len(raters) >= 2 else []
    return tree_from_json(Experts, {
        **summary, "rater_diagnostics": diagnostics, "pairwise_kappa": pairs, "mean_pairwise_quadratic_kappa": mean_kappa,
        "verdicts": _verdicts(summary.get("krippendorff_alpha"), summary.get("alpha_ci"), mean_kappa,
                              summary.get("percent_agreement")),
    }, "experts")


def _group_report(
    kind: str, value: str, units: list[UnitInfo], data: np.ndarray, experts: list[str], judge_row: np.ndarray,
    gold_row: np.ndarray, *, n_resamples: int, seed: int, stratify: bool,
) -> Group:
    """One group's numbers from its columns of the experts × units matrix and the judge's and gold rows."""
    rated = ~np.isnan(data).all(axis=1)
    data, raters = data[rated], [e for e, keep in zip(experts, rated, strict=True) if keep]
    strata = [u.dimension for u in units] if stratify else None
    panel = _experts(units, data, raters, strata=strata, n_resamples=n_resamples, seed=seed)
    with_judge = np.vstack([data, judge_row]) if len(raters) else judge_row[None, :]
    alpha_with = _safe(lambda: krippendorff_alpha(with_judge, "ordinal", CATEGORIES).alpha) \
        if not np.isnan(judge_row).all() else None
    return Group(
        kind=kind, value=value, stratified_by_dimension=stratify,
        n_units=len(units),
        n_items=len({u.item for u in units}),
        experts=panel,
        judge_vs_majority=against_reference(judge_row, majority_row(data), strata=strata,
                                            n_resamples=n_resamples, seed=seed, experts=data),
        judge_vs_gold=against_reference(judge_row, gold_row, strata=strata, n_resamples=n_resamples, seed=seed),
        panel_alpha_without_judge=panel.krippendorff_alpha,
        panel_alpha_with_judge=alpha_with,
    )


def calibration_report_build(
    ratings: Iterable[Rating],
    *,
    judge: dict[tuple[str, str], int],
    gold: dict[tuple[str, str], int] | None = None,
    units: Iterable[UnitInfo] = (),
    n_resamples: int = 1000,
    seed: int = 0,
    meta: Provenance | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """The whole report as a typed tree (`Report.to_json()` is its JSON): one entry per group (overall, per facet
    value). `meta` says what it was computed from (the cycle, judge run, software, snapshot).

    `progress(done, total)` is called after each group, for a progress bar.
    """
    # One BLAS thread: the products here are small (60 raters: 240 × 240 counts from 1,344 units), so
    # OpenBLAS's worker threads cost more than they save and spin on a busy machine (a 60-rater build:
    # 1.0 s in one thread, 4 s with two while other jobs run), and a thread count cannot change a number.
    # threadpoolctl is scikit-learn's own dependency.
    with threadpool_limits(limits=1, user_api="blas"):
        return _report_build(ratings, judge=judge, gold=gold or {}, units=units, n_resamples=n_resamples,
                             seed=seed, meta=meta, progress=progress)


def ratings_collect(ratings: Iterable[Rating], units: Iterable[UnitInfo]
                    ) -> tuple[dict[tuple[str, str], UnitInfo], dict[tuple[str, tuple[str, str]], int], list[str]]:
    """Every unit (those given and those rated), each expert's score by (rater, unit key), the experts sorted."""
    all_units: dict[tuple[str, str], UnitInfo] = {u.key: u for u in units}
    values: dict[tuple[str, tuple[str, str]], int] = {}
    for rating in ratings:
        all_units.setdefault(rating.unit.key, rating.unit)
        values[(rating.rater, rating.unit.key)] = rating.score
    return all_units, values, sorted({rater for rater, _ in values})


def _report_build(
    ratings: Iterable[Rating], *, judge: dict[tuple[str, str], int], gold: dict[tuple[str, str], int],
    units: Iterable[UnitInfo], n_resamples: int, seed: int, meta: Provenance | None,
    progress: Callable[[int, int], None] | None,
) -> Report:
    all_units, expert_values, experts = ratings_collect(ratings, units)
    ordered = sorted(all_units.values(), key=lambda u: (u.dimension, u.item, u.sub_dimension))

    grouped: dict[str, dict[str, list[UnitInfo]]] = {kind: defaultdict(list) for kind in GROUP_KINDS}
    for unit in ordered:
        grouped["overall"]["all"].append(unit)
        grouped["sub_dimension"][unit.sub_dimension].append(unit)
        grouped["dimension"][unit.dimension].append(unit)
        grouped["tradition"][unit.tradition].append(unit)
        grouped["difficulty"][unit.difficulty].append(unit)

    # One experts × units matrix (and judge and gold rows) for the whole cycle; a group takes its columns.
    keys = [u.key for u in ordered]
    column = {key: i for i, key in enumerate(keys)}
    data = expert_matrix(keys, experts, expert_values)
    judge_row = np.array([judge.get(k, np.nan) for k in keys], dtype=float)
    gold_row = np.array([gold.get(k, np.nan) for k in keys], dtype=float)
    groups = []
    total = sum(len(grouped[kind]) for kind in GROUP_KINDS)
    for kind in GROUP_KINDS:
        for value in sorted(grouped[kind]):
            members = grouped[kind][value]
            columns = np.array([column[u.key] for u in members], dtype=np.intp)
            spans_dimensions = len({u.dimension for u in members}) > 1
            groups.append(_group_report(kind, value, members, data[:, columns], experts, judge_row[columns],
                                        gold_row[columns], n_resamples=n_resamples,
                                        seed=named_seed(seed, f"{kind}:{value}"), stratify=spans_dimensions))
            if progress is not None:
                progress(len(groups), total)
    about = meta or Provenance()
    return Report(
        meta=Meta(seed=seed, n_resamples=n_resamples, level="ordinal", categories=CATEGORIES,
                  targets=Targets(**TARGETS), majority_rule=MAJORITY_RULE,
                  **{f.name: getattr(about, f.name) for f in dataclasses.fields(about)}),
        n_experts=len(experts),
        groups=groups,
    )


def overall(report: Report) -> Group:
    """The overall group of a report."""
    return report.overall


__all__ = ["Provenance", "Rating", "Report", "UnitInfo", "against_reference", "calibration_report_build", "expert_matrix",
           "majority_row", "overall", "verdict"]
