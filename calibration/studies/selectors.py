"""A study's reliability: human-vs-human per dimension (the coefficients and intervals of `manage.py irr`, from
the same `stats.reliability.reliability_summary`), and each judge against the humans."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from stats.alpha import check_level
from stats.bootstrap import named_seed_sequence
from stats.reliability import reliability_summary

from ..models import Study, StudyDimension, StudyRater, StudyScore


def _matrix(dimension: StudyDimension, raters: list[StudyRater], item_ids: list[int]) -> np.ndarray:
    """Raters × items, NaN where a rater did not score an item."""
    rows = {r.pk: i for i, r in enumerate(raters)}
    cols = {item: j for j, item in enumerate(item_ids)}
    matrix = np.full((len(raters), len(item_ids)), np.nan)
    for rater_id, item_id, value in StudyScore.objects.filter(dimension=dimension, rater_id__in=rows).values_list(
            "rater_id", "item_id", "value"):
        matrix[rows[rater_id], cols[item_id]] = value
    return matrix


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def _judge_row(judge: StudyRater, values: np.ndarray, humans: np.ndarray, dimension: StudyDimension,
               seed: int) -> dict[str, Any]:
    """One judge against the human mean (ρ, τ-b, mean signed difference) and the rounded human median (κ), and
    α of the humans with the judge added."""
    mean = np.nanmean(np.where(np.isnan(humans).all(axis=0), 0, humans), axis=0)
    rated = ~np.isnan(values) & ~np.isnan(humans).all(axis=0)
    judge_v, mean_v = values[rated], mean[rated]
    row: dict[str, Any] = {"rater": judge.name, "n_items": int(rated.sum()), "spearman_rho": None,
                           "kendall_tau_b": None, "mean_signed_difference": None, "cohen_kappa_linear": None}
    if rated.sum() >= 2:
        if np.ptp(judge_v) > 0 and np.ptp(mean_v) > 0:
            row["spearman_rho"] = _finite(scipy_stats.spearmanr(judge_v, mean_v).statistic)
            row["kendall_tau_b"] = _finite(scipy_stats.kendalltau(judge_v, mean_v).statistic)
        row["mean_signed_difference"] = float(np.mean(judge_v - mean_v))
        median = np.floor(np.nanmedian(humans[:, rated], axis=0))  # the lower middle score, as the cycle report
        pair = reliability_summary(np.vstack([judge_v, median]), level=check_level(dimension.level), n_resamples=0, seed=seed)
        row["cohen_kappa_linear"] = _finite((pair.get("cohen_kappa") or {}).get("linear")) \
            if isinstance(pair.get("cohen_kappa"), dict) else _finite(pair.get("cohen_kappa_linear"))
    with_judge = reliability_summary(np.vstack([humans, values]), level=check_level(dimension.level), n_resamples=0, seed=seed)
    row["alpha_with_judge"] = _finite(with_judge.get("krippendorff_alpha"))
    return row


def study_reliability(*, study: Study, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Per dimension: the humans' reliability summary (α at the dimension's level with its interval, ICC,
    agreement, κ, AC1/AC2 …) and each judge's agreement with them."""
    raters = list(study.raters.order_by("name"))
    humans = [r for r in raters if r.kind == StudyRater.Kind.HUMAN]
    judges = [r for r in raters if r.kind == StudyRater.Kind.JUDGE]
    out: dict[str, Any] = {"study": study.name, "source": study.source, "dimensions": {}}
    for dimension in study.dimensions.order_by("id"):
        item_ids = list(StudyScore.objects.filter(dimension=dimension).values_list("item_id", flat=True)
                        .distinct().order_by("item_id"))
        human_matrix = _matrix(dimension, humans, item_ids)
        stream = named_seed_sequence(seed, dimension.key)
        summary = reliability_summary(human_matrix, level=check_level(dimension.level), rater_labels=[h.name for h in humans],
                                      n_resamples=n_resamples, seed=np.random.default_rng(stream)) \
            if len(humans) >= 2 and item_ids else None
        judge_rows = []
        for judge in judges:
            values = _matrix(dimension, [judge], item_ids)[0]
            if not np.isnan(values).all():
                judge_rows.append(_judge_row(judge, values, human_matrix, dimension, seed))
        out["dimensions"][dimension.key] = {
            "level": dimension.level, "scale": [dimension.scale_min, dimension.scale_max], "n_items": len(item_ids),
            "n_humans": len(humans), "humans": summary, "judges": judge_rows,
        }
    return out
