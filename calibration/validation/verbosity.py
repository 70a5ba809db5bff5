"""Verbosity bias of a judge run (methodology §6.2.2), per dimension and overall: the judge's decisive composite
against response length in words, and — with a cycle — against length holding the experts' score fixed (gold where
adjudicated, else the lower median of the experts, averaged over the response's sub-dimensions). The numbers come
from `stats.bias`; the result is stored as a bias-check `evidence.Snapshot`."""
from __future__ import annotations

import numpy as np

from accounts.models import User
from annotations.models import CalibrationCycle, CycleItem
from evaluations.judge.selectors import judge_decisive_scored
from evaluations.models import JudgeRun, ModelResponse
from evidence.models import Snapshot
from stats.bias import FLAG_AT, length_bias, length_normalised

from ..cycles.ratings import majority, report_inputs
from .payloads import VerbosityGroup, VerbosityPayload
from .store import CheckKind, bias_check_record

ALL = "all dimensions"


def _reference(cycle: CalibrationCycle) -> dict[int, float]:
    """{response id: the experts' score on 0–1} — per sub-dimension gold if adjudicated, else the lower median of
    the experts' scores (the report's majority rule), averaged over the sub-dimensions, divided by 3."""
    inputs = report_inputs(cycle=cycle, run=None)
    by_unit: dict[tuple[str, str], list[int]] = {}
    for rating in inputs.ratings:
        by_unit.setdefault(rating.unit.key, []).append(rating.score)
    per_item: dict[str, list[float]] = {}
    for key, scores in by_unit.items():
        value = inputs.gold.get(key)
        per_item.setdefault(key[0], []).append(float(value if value is not None else majority(scores)))
    for key, value in inputs.gold.items():
        if key not in by_unit:
            per_item.setdefault(key[0], []).append(float(value))
    response_of = dict(CycleItem.objects.filter(cycle=cycle).values_list("id", "response_id"))
    return {response_of[int(item)]: float(np.mean(values)) / 3 for item, values in per_item.items()}


def verbosity_analysis(*, run: JudgeRun, cycle: CalibrationCycle | None = None) -> VerbosityPayload:
    """Per dimension and over all: n, Pearson r (CI), Spearman ρ, partial r given the experts (CI), the experts'
    own length correlation, the slope per 100 words, the flag, and mean raw vs length-normalised judge scores."""
    decisive = judge_decisive_scored(run=run)
    rows = ModelResponse.objects.filter(pk__in=list(decisive)).values_list("pk", "text", "test_case__dimension",
                                                                          "model__name")
    reference = _reference(cycle) if cycle is not None else {}
    data: dict[str, list[tuple[float, float, float]]] = {}
    models: dict[str, list[str]] = {}
    for response_id, text, dimension, model in rows.iterator(chunk_size=2000):
        composite = decisive[response_id].composite
        if composite is None:
            continue
        point = (float(len(text.split())), float(composite), reference.get(response_id, float("nan")))
        for group in (dimension, ALL):
            data.setdefault(group, []).append(point)
            models.setdefault(group, []).append(model)
    groups: dict[str, VerbosityGroup] = {}
    for name in sorted(data, key=lambda k: (k == ALL, k)):
        words, judge, ref = (np.array(column) for column in zip(*data[name], strict=True))
        bias = length_bias(words, judge, ref if cycle is not None else None)
        entry: VerbosityGroup = {**bias.as_dict(), "mean_words": float(words.mean()), "judge_mean": float(judge.mean())}
        if bias.flagged:  # §6.2.2: "if violated, implement length-normalisation" — shown beside the raw score
            adjusted = length_normalised(words, judge, bias)
            entry["normalised_spread"] = float(np.std(adjusted))
            entry["raw_spread"] = float(np.std(judge))
            names = np.array(models[name])
            entry["models"] = {m: {"raw": float(judge[names == m].mean()), "length_normalised":
                                   float(adjusted[names == m].mean()), "mean_words": float(words[names == m].mean())}
                               for m in sorted(set(models[name]))}
        groups[name] = entry
    return {"judge_run": run.pk, "cycle": cycle.pk if cycle else None, "threshold": FLAG_AT,
            "scale": "judge composite 0–1 (Σ raw/3 × weight); length in words", "groups": groups,
            # The check fails when the judge is length-driven over all responses, or clearly so (the interval clear
            # of ±0.3) in a dimension: a dimension's point estimate over 0.3 on 30 responses is often chance.
            "flagged": bool((ALL in groups and groups[ALL]["flagged"])
                            or any(entry["verdict"] == "fail" for entry in groups.values())),
            "n": len(data.get(ALL, []))}


def verbosity_check(*, run: JudgeRun, cycle: CalibrationCycle | None = None,
                    requested_by: User | None = None) -> Snapshot:
    """Compute the verbosity analysis and store it."""
    payload = verbosity_analysis(run=run, cycle=cycle)
    return bias_check_record(kind=CheckKind.VERBOSITY, judge_run=run, cycle=cycle, flagged=payload["flagged"],
                             n=payload["n"], payload=payload, requested_by=requested_by)
