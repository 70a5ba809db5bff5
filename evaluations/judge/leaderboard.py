"""Leaderboard arithmetic over judged items — pure Python/numpy/scipy, no database.

Per model (methodology §5.4.2, §5.7): score = Σ w_d × composite / Σ w_d over the model's scored items,
w_d the difficulty weight (Easy 1.0, Medium 1.5, Hard 2.0, Expert 3.0); the same per dimension and per
tradition; a 95 % percentile bootstrap interval (1,000 resamples, seeded) stratified by dimension;
failure rate = excluded items / finished items. Self-preference (§5.3.2): when a model's item has a
secondary-judge result, the leaderboard uses it, and the primary judge's score is shown beside it.

Pairwise (§5.7.3): for every pair of models, the per-case composites on the cases both have scored
(a model's responses to one case averaged) are compared with a paired t-test (scipy.stats.ttest_rel);
p-values are reported uncorrected and Bonferroni-corrected (× number of pairs, capped at 1), with
Cohen's d for paired samples, d = mean(a − b) / sd(a − b) (ddof = 1; Cohen 1988, "d_z").
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import combinations

import numpy as np
from scipy import stats as scipy_stats

from stats.means import bootstrap_weighted_mean_ci, weighted_mean

NO_TRADITION = "none"


@dataclass(frozen=True)
class LeaderboardItem:
    """One judged response: its case facets and the composites that count."""

    model: str
    family: str
    case_id: int
    dimension: str
    difficulty_weight: float
    tradition: str  # tradition key, or NO_TRADITION
    scored: bool  # the decisive result (secondary, else fallback, else primary) is scored
    composite: float | None  # decisive composite
    primary_composite: float | None  # primary judge's composite (fallback's when the primary failed)
    self_preference: bool  # a secondary judge scored this item too


@dataclass
class Score:
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass
class ModelRow:
    model: str
    family: str
    items: int
    scored: int
    excluded: int
    failure_rate: float
    overall: Score
    primary_judge_score: float | None
    self_preference: bool
    by_dimension: dict[str, Score] = field(default_factory=dict)
    by_tradition: dict[str, Score] = field(default_factory=dict)


@dataclass
class Comparison:
    model_a: str
    model_b: str
    n_common: int
    mean_difference: float | None
    t_statistic: float | None
    p_value: float | None
    p_bonferroni: float | None
    cohens_d: float | None
    significant: bool


@dataclass
class Leaderboard:
    models: list[ModelRow]
    comparisons: list[Comparison]
    n_resamples: int
    confidence: float
    seed: int


def _clean(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _score(items: list[LeaderboardItem], *, n_resamples: int, confidence: float, seed: int) -> Score:
    scored = [i for i in items if i.scored and i.composite is not None]
    if not scored:
        return Score(None, None, None, 0)
    values = np.array([i.composite for i in scored], dtype=float)
    weights = np.array([i.difficulty_weight for i in scored], dtype=float)
    strata = [i.dimension for i in scored]
    low, high = bootstrap_weighted_mean_ci(values, weights, strata, n_resamples=n_resamples,
                                           confidence=confidence, seed=seed)
    return Score(_clean(weighted_mean(values, weights)), _clean(low), _clean(high), len(scored))


def paired_comparison(a: list[float], b: list[float]) -> tuple[float | None, float | None, float | None, float | None]:
    """(mean difference, t, p, Cohen's d_z) of paired samples; None where undefined (n < 2, zero spread)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) < 2:
        return (float(np.mean(np.subtract(a, b))) if a else None), None, None, None
    diff = np.subtract(a, b, dtype=float)
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1))
    if sd == 0:
        return mean, None, None, None
    result = scipy_stats.ttest_rel(a, b)
    return mean, float(result.statistic), float(result.pvalue), mean / sd


def leaderboard_compute(
    items: list[LeaderboardItem], *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
    alpha: float = 0.05,
) -> Leaderboard:
    """Model rows (sorted by score, best first) and Bonferroni-corrected pairwise comparisons."""
    by_model: dict[str, list[LeaderboardItem]] = defaultdict(list)
    for item in items:
        by_model[item.model].append(item)
    rows = []
    for model, model_items in by_model.items():
        scored = [i for i in model_items if i.scored]
        primary = [(i.primary_composite, i.difficulty_weight) for i in model_items if i.primary_composite is not None]
        self_pref = any(i.self_preference for i in model_items)
        row = ModelRow(
            model=model, family=model_items[0].family, items=len(model_items), scored=len(scored),
            excluded=len(model_items) - len(scored),
            failure_rate=(len(model_items) - len(scored)) / len(model_items),
            overall=_score(model_items, n_resamples=n_resamples, confidence=confidence, seed=seed),
            primary_judge_score=_clean(weighted_mean([c for c, _ in primary], [w for _, w in primary])),
            self_preference=self_pref,
        )
        for attribute, target in (("dimension", row.by_dimension), ("tradition", row.by_tradition)):
            groups: dict[str, list[LeaderboardItem]] = defaultdict(list)
            for item in model_items:
                groups[getattr(item, attribute)].append(item)
            for key in sorted(groups):
                target[key] = _score(groups[key], n_resamples=n_resamples, confidence=confidence, seed=seed)
        rows.append(row)
    rows.sort(key=lambda r: (r.overall.score is None, -(r.overall.score or 0), r.model))

    per_case: dict[str, dict[int, float]] = {}
    for model, model_items in by_model.items():
        sums: dict[int, list[float]] = defaultdict(list)
        for item in model_items:
            if item.scored and item.composite is not None:
                sums[item.case_id].append(item.composite)
        per_case[model] = {case: sum(v) / len(v) for case, v in sums.items()}
    ordered = [r.model for r in rows]
    pairs = list(combinations(ordered, 2))
    comparisons = []
    for model_a, model_b in pairs:
        common = sorted(set(per_case[model_a]) & set(per_case[model_b]))
        a = [per_case[model_a][c] for c in common]
        b = [per_case[model_b][c] for c in common]
        mean, t, p, d = paired_comparison(a, b)
        corrected = None if p is None else min(1.0, p * len(pairs))
        comparisons.append(Comparison(model_a, model_b, len(common), mean, t, p, corrected, d,
                                      corrected is not None and corrected < alpha))
    return Leaderboard(rows, comparisons, n_resamples, confidence, seed)


def as_float(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)
