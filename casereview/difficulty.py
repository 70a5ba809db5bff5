"""IRT difficulty (methodology §6.5: "difficulty: empirically adjusted, not IRT-calibrated") and anchor-item
equating of held-out rotations (§8.7), on `stats.irt`.

Data: per dimension, an item is a test case and a person is an evaluated model. A response's 0–3 score is the
dimension's weighted composite (§5.4.1, in [0, 1]) × 3, rounded half up: the experts' mean composite where submitted
expert annotations exist, the judge's decisive result otherwise; each item records how many cells came from whom.
Several responses of one model to one case (run labels) are averaged first.
"""
from __future__ import annotations

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NotRequired, TypedDict, cast

import numpy as np
from django.db import transaction
from django.db.models import Q
from scipy.stats import spearmanr

from annotations.models import Annotation, SubScore
from evaluations.judge.leaderboard import case_composite
from evaluations.judge.selectors import judge_decisive_raw_scores, judge_run_latest_finished
from evaluations.models import JudgeRun, ModelResponse, TestCase
from evaluations.selectors import rubric_active, rubric_weights
from evidence.models import Snapshot
from stats.irt import GRMFit, equate_mean_sigma, equate_stocking_lord, grm_fit
from stats.matrix import matrix_from_triples

from .reports import difficulty_fit_store
from .rules import DIFFICULTY_ORDER, DIFFICULTY_RANK


class DifficultyError(ValueError):
    pass


class CellSources(TypedDict):
    expert: int
    judge: int


class FitItem(TypedDict):
    """One case (item) of a fit: GRM parameters with SEs, fit statistics, where its scores came from."""

    case: str
    case_id: int
    tier: str
    anchor: bool
    rotation: str
    version: int
    n: int
    a: float
    a_se: float | None
    b: list[float]
    b_se: list[float | None]
    difficulty: float
    difficulty_se: float | None
    infit: float | None
    outfit: float | None
    misfit: bool
    sources: CellSources


class FitModel(TypedDict):
    model: str
    theta: float
    sd: float
    interval: list[float]


class TierRow(TypedDict):
    tier: str
    cases: int
    mean_difficulty: float | None


class TierComparison(TypedDict):
    tiers: list[TierRow]
    spearman_rho: float | None


class LinkConstants(TypedDict):
    A: float
    B: float


class EquatedItem(TypedDict):
    case: str
    difficulty: float


class EquatedModel(TypedDict):
    model: str
    theta: float
    interval: list[float]


class Equating(TypedDict):
    to_fit: int
    to_rotation: str
    anchors: list[str]
    mean_sigma: LinkConstants
    stocking_lord: LinkConstants
    items: list[EquatedItem]
    models: list[EquatedModel]


class FitPayload(TypedDict):
    """A stored fit (its JSON)."""

    dimension: str
    rotation: str
    judge_run: int | None
    score: str
    converged: bool
    iterations: int
    log_likelihood: float
    items: list[FitItem]
    models: list[FitModel]
    tiers: TierComparison
    misfit: int
    equating: NotRequired[Equating]


class Ability(FitModel):
    """A model's ability on its fit's own scale and, when the fit was equated, on the base scale."""

    equated: EquatedModel | None


def _score(composite: float) -> int:
    return int((Decimal(str(composite)) * 3).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def response_scores(*, dimension: str, judge_run: JudgeRun | None, rotation: str | None = None
                    ) -> tuple[list[TestCase], list[str], np.ndarray, dict[int, CellSources]]:
    """(cases, model names, models × cases matrix of 0–3 scores with NaN, {case id: {"expert": n, "judge": n}})."""
    rubric = judge_run.rubric if judge_run else rubric_active()
    weights = rubric_weights(rubric=rubric)
    if dimension not in weights:
        raise DifficultyError(f"rubric v{rubric.version} has no dimension {dimension!r}")
    sub_weights = weights[dimension][1]
    cases_qs = TestCase.objects.filter(dimension=dimension, is_active=True)
    if rotation:  # a rotation's cases: its own and the anchors (which stay in every rotation)
        cases_qs = cases_qs.filter(Q(rotation=rotation) | Q(is_anchor=True))
    responses = list(ModelResponse.objects.filter(test_case__in=cases_qs)
                     .values_list("pk", "test_case_id", "model__name"))
    response_ids = [r[0] for r in responses]
    # experts: mean composite of the submitted annotations of each response
    expert: dict[int, list[float]] = defaultdict(list)
    scores_by_annotation: dict[int, dict[str, int]] = defaultdict(dict)
    annotation_response: dict[int, int] = {}
    for pk, response_id in (Annotation.objects.counted().filter(status=Annotation.Status.SUBMITTED,
                                                      assignment__item__response_id__in=response_ids)
                            .values_list("pk", "assignment__item__response_id")):
        annotation_response[pk] = response_id
    for annotation_id, key, score in SubScore.objects.filter(annotation_id__in=list(annotation_response),
                                                             key__in=list(sub_weights)).values_list(
                                                                 "annotation_id", "key", "score"):
        scores_by_annotation[annotation_id][key] = score
    for annotation_id, raw in scores_by_annotation.items():
        if set(raw) >= set(sub_weights):
            expert[annotation_response[annotation_id]].append(float(case_composite(raw_scores=raw,
                                                                                   sub_weights=sub_weights)))
    judge: dict[int, float] = {}
    if judge_run is not None:
        for response_id, raw in judge_decisive_raw_scores(run=judge_run, response_ids=response_ids).items():
            if set(raw) >= set(sub_weights):
                judge[response_id] = float(case_composite(raw_scores=raw, sub_weights=sub_weights))
    cells: dict[tuple[int, str], list[tuple[float, str]]] = defaultdict(list)
    for response_id, case_id, model in responses:
        if expert.get(response_id):
            cells[(case_id, model)].append((float(np.mean(expert[response_id])), "expert"))
        elif response_id in judge:
            cells[(case_id, model)].append((judge[response_id], "judge"))
    case_ids = sorted({c for c, _ in cells})
    models = sorted({m for _, m in cells})
    cases = sorted(TestCase.objects.filter(pk__in=case_ids), key=lambda c: c.external_id)
    matrix = matrix_from_triples(((model, case_id, _score(float(np.mean([v for v, _ in values]))))
                                  for (case_id, model), values in cells.items()), models, [c.pk for c in cases])
    sources: dict[int, CellSources] = {c.pk: CellSources(expert=0, judge=0) for c in cases}
    for (case_id, _model), values in cells.items():
        if any(s == "expert" for _, s in values):
            sources[case_id]["expert"] += 1
        else:
            sources[case_id]["judge"] += 1
    return cases, models, matrix, sources


def _tier_comparison(cases: list[TestCase], fit: GRMFit) -> TierComparison:
    by_tier: dict[str, list[float]] = defaultdict(list)
    for case, difficulty in zip(cases, fit.difficulty, strict=True):
        by_tier[case.difficulty].append(float(difficulty))
    tiers = [TierRow(tier=str(t), cases=len(by_tier[t]),
                     mean_difficulty=float(np.mean(by_tier[t])) if by_tier[t] else None) for t in DIFFICULTY_ORDER]
    ranks = [DIFFICULTY_RANK[c.difficulty] for c in cases]
    rho = None
    if len(set(ranks)) > 1:
        rho = float(spearmanr(ranks, fit.difficulty).statistic)
    return TierComparison(tiers=tiers, spearman_rho=rho)


@transaction.atomic
def difficulty_fit(*, dimension: str, judge_run: JudgeRun | None = None, rotation: str = "", user: Any = None,
                   min_models: int = 2, equate_to: Snapshot | None = None) -> Snapshot:
    """Fit the graded response model to one dimension (optionally one rotation plus the anchors), put it on
    `equate_to`'s scale when given, and store it (once: a stored fit is evidence, never edited)."""
    judge_run = judge_run or judge_run_latest_finished()
    cases, models, matrix, sources = response_scores(dimension=dimension, judge_run=judge_run, rotation=rotation or None)
    if len(models) < min_models:
        raise DifficultyError(f"{dimension}: {len(models)} evaluated model(s) with scores; the fit needs {min_models}")
    if len(cases) < 2:
        raise DifficultyError(f"{dimension}: {len(cases)} scored case(s); the fit needs at least 2")
    fit = grm_fit(matrix)
    low, high = fit.theta - 1.96 * fit.theta_sd, fit.theta + 1.96 * fit.theta_sd
    items: list[FitItem] = []
    for j, case in enumerate(cases):
        items.append({
            "case": case.external_id, "case_id": case.pk, "tier": case.difficulty, "anchor": case.is_anchor,
            "rotation": case.rotation, "version": case.version, "n": int(fit.n_responses[j]),
            "a": float(fit.a[j]), "a_se": _num(fit.a_se[j]), "b": [float(v) for v in fit.b[j]],
            "b_se": [_num(v) for v in fit.b_se[j]], "difficulty": float(fit.difficulty[j]),
            "difficulty_se": _num(fit.difficulty_se[j]), "infit": _num(fit.infit[j]), "outfit": _num(fit.outfit[j]),
            "misfit": bool(fit.misfit[j]), "sources": sources[case.pk],
        })
    payload: FitPayload = {
        "dimension": dimension, "rotation": rotation, "judge_run": judge_run.pk if judge_run else None,
        "score": "round(3 × dimension composite): experts' mean where annotated, else the judge's decisive result",
        "converged": fit.converged, "iterations": fit.iterations, "log_likelihood": fit.log_likelihood,
        "items": items,
        "models": [{"model": m, "theta": float(fit.theta[i]), "sd": float(fit.theta_sd[i]),
                    "interval": [float(low[i]), float(high[i])]} for i, m in enumerate(models)],
        "tiers": _tier_comparison(cases, fit),
        "misfit": int(fit.misfit.sum()),
    }
    if equate_to is not None:
        payload["equating"] = _equating(base=equate_to, dimension=dimension, payload=payload)
    return difficulty_fit_store(dimension=dimension, rotation=rotation, items=len(cases), persons=len(models),
                                payload=payload, user=user, equated_to=equate_to)


def fit_abilities(fit: Snapshot) -> list[Ability]:
    """Each model of a fit with its own-scale ability and, when the fit was equated, its ability on the base scale
    (`equated`, else None); the most able first (on the equated scale when there is one)."""
    payload = cast(FitPayload, fit.document)
    equating = payload.get("equating")
    equated = {m["model"]: m for m in equating["models"]} if equating else {}
    rows = [Ability(**m, equated=equated.get(m["model"])) for m in payload["models"]]
    return sorted(rows, key=lambda m: -(m["equated"] or m)["theta"])


def _num(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


@transaction.atomic
def difficulty_equate(*, base: Snapshot, other: Snapshot, min_anchors: int = 2) -> Snapshot:
    """Put `other`'s rotation on `base`'s scale through the anchor cases both fits contain: mean/sigma and
    Stocking–Lord; the items' difficulties and the models' abilities are stored on the base scale (Stocking–Lord,
    the mean/sigma constants beside it), as a new version of `other`'s dimension and rotation."""
    payload: FitPayload = {**cast(FitPayload, other.document)}
    payload["equating"] = _equating(base=base, dimension=other.dimension, payload=payload, min_anchors=min_anchors)
    return difficulty_fit_store(dimension=other.dimension, rotation=other.rotation, items=other.items,
                                persons=other.persons, payload=payload, user=other.requested_by, equated_to=base)


def _equating(*, base: Snapshot, dimension: str, payload: FitPayload, min_anchors: int = 2) -> Equating:
    if base.dimension != dimension:
        raise DifficultyError("equating needs two fits of the same dimension")
    base_payload = cast(FitPayload, base.document)
    other_payload = payload
    base_items = {i["case"]: i for i in base_payload["items"] if i["anchor"]}
    other_items = {i["case"]: i for i in other_payload["items"] if i["anchor"]}
    shared = sorted(set(base_items) & set(other_items))
    if len(shared) < min_anchors:
        raise DifficultyError(f"the two fits share {len(shared)} anchor case(s); equating needs at least {min_anchors}")
    a_x = np.array([base_items[c]["a"] for c in shared])
    b_x = np.array([base_items[c]["b"] for c in shared])
    a_y = np.array([other_items[c]["a"] for c in shared])
    b_y = np.array([other_items[c]["b"] for c in shared])
    mean_sigma = equate_mean_sigma(b_x, b_y)
    stocking_lord = equate_stocking_lord(a_x, b_x, a_y, b_y, start=mean_sigma)
    return {
        "to_fit": base.pk, "to_rotation": base.rotation, "anchors": shared,
        "mean_sigma": {"A": mean_sigma.A, "B": mean_sigma.B},
        "stocking_lord": {"A": stocking_lord.A, "B": stocking_lord.B},
        "items": [{"case": i["case"], "difficulty": float(stocking_lord.difficulties(np.array(i["difficulty"])))}
                  for i in other_payload["items"]],
        "models": [{"model": m["model"], "theta": float(stocking_lord.abilities(np.array(m["theta"]))),
                    "interval": [float(stocking_lord.abilities(np.array(v))) for v in m["interval"]]}
                   for m in other_payload["models"]],
    }
