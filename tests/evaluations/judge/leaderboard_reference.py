"""The leaderboard as it was computed before the aggregated path (commit b5bd157), kept as a test oracle.

Per item: one result row per role read from the database and grouped in Python, LeaderboardItem
objects, per-model lists, and the bootstrap drawing all (n_resamples × n) indices of a stratum at once.
tests/evaluations/judge/test_leaderboard.py checks that the current code gives exactly these results.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from itertools import combinations
from typing import Any

import numpy as np

from evaluations.judge.leaderboard import (
    NO_TRADITION,
    Comparison,
    Leaderboard,
    LeaderboardItem,
    ModelRow,
    Score,
    paired_comparison,
)
from evaluations.judge.selectors import decisive_role
from evaluations.models import JudgeResult, JudgeRun
from evaluations.selectors import difficulty_weight
from stats.means import weighted_mean


def as_float(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)


def bootstrap_weighted_mean_ci(values: Sequence[float], weights: Sequence[float], strata: Sequence[object], *,
                               n_resamples: int, confidence: float, seed: int) -> tuple[float, float]:
    x = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    labels = np.unique(np.asarray(strata, dtype=object).astype(str), return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    numerator = np.zeros(n_resamples)
    denominator = np.zeros(n_resamples)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        draws = members[rng.integers(0, members.size, size=(n_resamples, members.size))]
        numerator += (w[draws] * x[draws]).sum(axis=1)
        denominator += w[draws].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = numerator / denominator
    alpha = 1 - confidence
    low, high = np.nanpercentile(stats, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def _clean(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


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


def leaderboard_compute(items: list[LeaderboardItem], *, n_resamples: int = 1000, confidence: float = 0.95,
                        seed: int = 0, alpha: float = 0.05) -> Leaderboard:
    by_model: dict[str, list[LeaderboardItem]] = defaultdict(list)
    for item in items:
        by_model[item.model].append(item)
    rows = []
    for model, model_items in by_model.items():
        scored = [i for i in model_items if i.scored]
        primary = [(i.primary_composite, i.difficulty_weight) for i in model_items if i.primary_composite is not None]
        row = ModelRow(
            model=model, family=model_items[0].family, items=len(model_items), scored=len(scored),
            excluded=len(model_items) - len(scored),
            failure_rate=(len(model_items) - len(scored)) / len(model_items),
            overall=_score(model_items, n_resamples=n_resamples, confidence=confidence, seed=seed),
            primary_judge_score=_clean(weighted_mean([c for c, _ in primary], [w for _, w in primary])),
            self_preference=any(i.self_preference for i in model_items),
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
    pairs = list(combinations([r.model for r in rows], 2))
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


def leaderboard_items(*, run: JudgeRun) -> list[LeaderboardItem]:
    rows = (
        JudgeResult.objects.filter(run=run)
        .values_list("response_id", "role", "status", "composite", "response__model__name", "response__model__family",
                     "response__test_case_id", "response__test_case__dimension", "response__test_case__difficulty",
                     "response__test_case__tradition__key")
        .order_by("response_id")
    )
    grouped: dict[int, dict[str, Any]] = {}
    for response_id, role, status, composite, model, family, case_id, dimension, difficulty, tradition in rows:
        entry = grouped.setdefault(response_id, {
            "model": model, "family": family, "case_id": case_id, "dimension": dimension,
            "weight": float(difficulty_weight(difficulty)), "tradition": tradition or NO_TRADITION, "roles": {},
        })
        entry["roles"][role] = (status, composite)
    items = []
    for entry in grouped.values():
        roles = entry["roles"]
        status, composite = roles[decisive_role(set(roles))]
        primary_slot = roles.get(JudgeResult.Role.FALLBACK) or roles.get(JudgeResult.Role.PRIMARY)
        primary_composite = primary_slot[1] if primary_slot and primary_slot[0] == JudgeResult.Status.SCORED else None
        secondary = roles.get(JudgeResult.Role.SECONDARY)
        items.append(LeaderboardItem(
            model=entry["model"], family=entry["family"], case_id=entry["case_id"], dimension=entry["dimension"],
            difficulty_weight=entry["weight"], tradition=entry["tradition"],
            scored=status == JudgeResult.Status.SCORED, composite=as_float(composite),
            primary_composite=as_float(primary_composite), self_preference=secondary is not None,
        ))
    return items


def leaderboard_build(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> Leaderboard:
    return leaderboard_compute(leaderboard_items(run=run), n_resamples=n_resamples, seed=seed)
