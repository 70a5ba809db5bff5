"""Re-scoring the judge's stored sub-dimension scores under a new rubric; rank-order stability and sensitivity.

Three parts (house style): `judged_items` reads the rows, `model_dimension_scores` and `rescoring_compare`
compute, and the study service stores the report.

* Reads the newest finished judge run (`evaluations.judge.selectors.judge_run_latest_finished`) and, per
  response, the decisive result as the judge leaderboard defines it (`decisive_role`: secondary for
  self-preference, else fallback, else primary). Failed and filtered items are excluded (§5.6.4).
* Per case: `evaluations.judge.leaderboard.case_composite` (Σ raw/3 × sub-dimension weight, §5.4.1).
* Per model and dimension: the difficulty-weighted mean of composites (§5.4.2, `difficulty_weight`).
* Per model: Σ_d w_d × S_{m,d} / Σ w_d (`stats.delphi.weighted_scores`), so that dimension weights matter.
  The judge leaderboard's own overall score is a difficulty-weighted mean over all items, without
  dimension weights; the old and new scores here are both computed the dimension-weighted way, from the
  same raw scores, so only the weights differ between them.
* Stability: Kendall's τ-b between old and new model scores (`stats.delphi.kendall_tau`); sensitivity:
  every dimension weight ± 5 points, renormalised (`stats.delphi.weight_sensitivity`, §6.3.1).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from evaluations.judge.leaderboard import case_composite
from evaluations.judge.selectors import judge_decisive_raw_scores, judge_run_latest_finished, judge_run_series
from evaluations.models import JudgeRun, ModelResponse
from evaluations.selectors import difficulty_weight
from stats.delphi import kendall_tau, ranking, weight_sensitivity, weighted_scores

SubWeights = Mapping[str, Mapping[str, Decimal]]  # dimension key → {sub-dimension key: weight}
NO_JUDGE_SCORES = ("No judge scores exist yet, so the composites could not be re-scored and there is no "
                   "rank-order stability or sensitivity analysis. Run the judge, then recompute.")


@dataclass(frozen=True)
class JudgedItem:
    """One response's decisive, scored judge result: the model, the case's facets and the raw 0–3 scores."""

    model: str
    dimension: str
    difficulty_weight: Decimal
    raw_scores: dict[str, int]


def judged_items(*, run: JudgeRun) -> list[JudgedItem]:
    """The decisive scored result of every response in the run, with its raw sub-dimension scores (three queries)."""
    raw = judge_decisive_raw_scores(run=run)
    facets = ModelResponse.objects.filter(judge_results__run=run).values_list(
        "pk", "model__name", "test_case__dimension", "test_case__difficulty").distinct()
    items = []
    for response_id, model, dimension, difficulty in facets.iterator(chunk_size=5000):
        if response_id in raw:
            items.append(JudgedItem(model=model, dimension=dimension, difficulty_weight=difficulty_weight(difficulty),
                                    raw_scores=raw[response_id]))
    return items


@dataclass
class ModelDimensionScores:
    models: list[str]
    dimensions: list[str]  # the dimensions every model has a scored item in
    matrix: np.ndarray  # rows: models, columns: dimensions
    left_out: list[str]  # dimensions without a score for some model
    items_used: int
    items_skipped: int  # scored items without a score for every sub-dimension of the rubric


def model_dimension_scores(items: Sequence[JudgedItem], sub_weights: SubWeights) -> ModelDimensionScores:
    """Per model and dimension, the difficulty-weighted mean of case composites under the given sub-weights."""
    sums: dict[tuple[str, str], list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    used = skipped = 0
    for item in items:
        weights = sub_weights.get(item.dimension)
        if weights is None:
            skipped += 1
            continue
        try:
            composite = case_composite(raw_scores=item.raw_scores, sub_weights=dict(weights))
        except ValueError:
            skipped += 1
            continue
        cell = sums[(item.model, item.dimension)]
        cell[0] += composite * item.difficulty_weight
        cell[1] += item.difficulty_weight
        used += 1
    models = sorted({m for m, _ in sums})
    all_dimensions = [d for d in sub_weights if any((m, d) in sums for m in models)]
    dimensions = [d for d in all_dimensions if all((m, d) in sums for m in models)]
    matrix = np.array(
        [[float(sums[(m, d)][0] / sums[(m, d)][1]) for d in dimensions] for m in models], dtype=float
    ).reshape(len(models), len(dimensions))
    return ModelDimensionScores(models, dimensions, matrix, [d for d in all_dimensions if d not in dimensions],
                                used, skipped)


def _clean(value: float) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 6)


def rescoring_compare(
    items: Sequence[JudgedItem], *, old_dimension_weights: Mapping[str, Decimal], old_sub_weights: SubWeights,
    new_dimension_weights: Mapping[str, Decimal], new_sub_weights: SubWeights, delta: float = 5.0,
) -> dict[str, Any]:
    """The old and new model scores and ranks, Kendall's τ between them, and the ± delta sensitivity (JSON-ready)."""
    if not items:
        return {"available": False, "reason": NO_JUDGE_SCORES}
    old = model_dimension_scores(items, old_sub_weights)
    new = model_dimension_scores(items, new_sub_weights)
    if not new.models or not new.dimensions:
        return {"available": False, "reason": "The judge scores cover no dimension for every model; nothing to rank."}
    dims = [d for d in new.dimensions if d in old.dimensions]
    old_m = old.matrix[:, [old.dimensions.index(d) for d in dims]]
    new_m = new.matrix[:, [new.dimensions.index(d) for d in dims]]
    old_w = [float(old_dimension_weights[d]) for d in dims]
    new_w = [float(new_dimension_weights[d]) for d in dims]
    if sum(old_w) <= 0 or sum(new_w) <= 0:
        return {"available": False, "reason": "The dimensions the judge scored have zero total weight."}
    old_scores = weighted_scores(old_m, old_w)
    new_scores = weighted_scores(new_m, new_w)
    old_rank, new_rank = ranking(old_scores), ranking(new_scores)
    sensitivity = weight_sensitivity(new_m, new_w, delta=delta)
    return {
        "available": True,
        "dimensions_used": dims,
        "dimensions_left_out": sorted(set(new.left_out) | set(new.dimensions) - set(dims)),
        "items_used": new.items_used,
        "items_skipped": new.items_skipped,
        "models": [
            {"model": m, "old_score": _clean(old_scores[i]), "new_score": _clean(new_scores[i]),
             "old_rank": int(old_rank[i]) + 1, "new_rank": int(new_rank[i]) + 1,
             "by_dimension": {d: _clean(new_m[i, j]) for j, d in enumerate(dims)}}
            for i, m in sorted(enumerate(new.models), key=lambda pair: new_rank[pair[0]])
        ],
        "kendall_tau": _clean(kendall_tau(old_scores.tolist(), new_scores.tolist())),
        "rank_changed": bool(np.any(old_rank != new_rank)),
        "sensitivity": {
            "delta": delta,
            "perturbations": sensitivity.perturbations,
            "rank_changes": sensitivity.rank_changes,
            "change_rate": round(sensitivity.change_rate, 6),
            "min_tau": _clean(sensitivity.min_tau),
            "details": [
                {"dimension": dims[d["weight"]], "delta": d["delta"], "rank_changed": d["rank_changed"],
                 "tau": _clean(d["tau"])}
                for d in sensitivity.details
            ],
        },
    }


def rescoring_report(
    *, old_dimension_weights: Mapping[str, Decimal], old_sub_weights: SubWeights,
    new_dimension_weights: Mapping[str, Decimal], new_sub_weights: SubWeights,
) -> dict[str, Any]:
    """Re-score the newest finished judge run's stored raw scores; says so plainly when there are none."""
    run = judge_run_latest_finished()
    if run is None:
        return {"available": False, "reason": NO_JUDGE_SCORES}
    report = rescoring_compare(
        judged_items(run=run), old_dimension_weights=old_dimension_weights, old_sub_weights=old_sub_weights,
        new_dimension_weights=new_dimension_weights, new_sub_weights=new_sub_weights,
    )
    report["run"] = {"id": run.pk, "label": str(run), "rubric": run.rubric.version}
    series = judge_run_series(run=run)
    if report.get("available") and len(series) >= 2:
        report["across_runs"] = series_sensitivity(series, new_dimension_weights=new_dimension_weights,
                                                   new_sub_weights=new_sub_weights)
    return report


def series_sensitivity(
    runs: Sequence[JudgeRun], *, new_dimension_weights: Mapping[str, Decimal], new_sub_weights: SubWeights,
    delta: float = 5.0,
) -> dict[str, Any]:
    """§6.3.1 across the runs of a series (§8.4): the ± delta sensitivity of every run, and whether the runs agree
    on the ranking at the proposed weights — a ranking that changes from run to run is not stable however small
    its weight sensitivity."""
    per_run, rankings = [], []
    for run in runs:
        scores = model_dimension_scores(judged_items(run=run), new_sub_weights)
        dims = [d for d in scores.dimensions if d in new_dimension_weights]
        if not scores.models or not dims:
            continue
        matrix = scores.matrix[:, [scores.dimensions.index(d) for d in dims]]
        weights = [float(new_dimension_weights[d]) for d in dims]
        if sum(weights) <= 0:
            continue
        ranked = ranking(weighted_scores(matrix, weights))
        order = [m for _, m in sorted(zip(ranked.tolist(), scores.models, strict=True))]
        rankings.append(order)
        sensitivity = weight_sensitivity(matrix, weights, delta=delta)
        per_run.append({"run": run.pk, "ranking": order, "perturbations": sensitivity.perturbations,
                        "rank_changes": sensitivity.rank_changes, "change_rate": round(sensitivity.change_rate, 6),
                        "min_tau": _clean(sensitivity.min_tau)})
    return {
        "runs": [r["run"] for r in per_run], "per_run": per_run,
        "perturbations": sum(r["perturbations"] for r in per_run),
        "rank_changes": sum(r["rank_changes"] for r in per_run),
        "same_ranking_in_every_run": len({tuple(r) for r in rankings}) <= 1,
    }
