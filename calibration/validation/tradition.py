"""Tradition fairness (methodology §6.2.3): cross-tradition cycles, in which the experts of tradition A blindly score
a sample of tradition B's responses alongside B's own panel, and the out-group minus in-group score difference per
scored tradition × scoring tradition × dimension (flagged beyond ±0.5 points); with the judge's per-tradition
agreement gap (α against the majority per tradition minus the pooled α) from the newest report version."""
from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from annotations.models import Annotation, Assignment, CalibrationCycle, CycleItem, Panel, SubScore
from evaluations.models import ModelResponse, RubricVersion, Tradition
from evaluations.selectors import rubric_active
from evidence.models import Snapshot
from stats.means import mean_t_interval

from ..cycles.services import cycle_assignments_create
from .payloads import JudgeGap, JudgeTraditionGap, TraditionGroup, TraditionPayload
from .store import CheckKind, bias_check_record

FLAG_POINTS = 0.5  # §6.2.3: no tradition scored > 0.5 points differently by out-group experts


@transaction.atomic
def cross_tradition_cycle_commit(
    *, name: str, pairs: dict[str, str], per_tradition: int, seed: int, rubric: RubricVersion | None = None,
    created_by: User | None = None,
) -> CalibrationCycle:
    """A cross-tradition cycle: for each scored tradition, `per_tradition` of its responses drawn at random, spread
    over its dimensions (reproducible from `seed`); assigned to its own panel and to the panels of the traditions
    that score it (`pairs`: scoring → scored). Experts see the usual blind scoring page."""
    errors: list[str] = []
    if CalibrationCycle.objects.filter(name=name).exists():
        errors.append(f"a cycle named {name!r} already exists")
    if not pairs:
        errors.append("name at least one pair: scoring tradition → scored tradition")
    if per_tradition < 1:
        errors.append("per_tradition must be at least 1")
    known = {p.tradition.key: p for p in Panel.objects.filter(tradition__isnull=False, language="")
             .select_related("tradition")
             .prefetch_related("members") if p.tradition is not None}
    for scoring, scored in pairs.items():
        if scoring == scored:
            errors.append(f"{scoring}: a tradition cannot be its own out-group")
        for key in (scoring, scored):
            if key not in known:
                errors.append(f"{key}: no panel of this tradition")
            elif not known[key].members.exists():
                errors.append(f"{key}: its panel has no members")
    if errors:
        raise ValidationError(sorted(set(errors)))
    drawn: list[int] = []
    inclusion: dict[int, tuple[float, list[str]]] = {}
    for scored in sorted(set(pairs.values())):
        by_dimension: dict[str, list[int]] = defaultdict(list)
        for response_id, dimension in ModelResponse.objects.filter(
                test_case__tradition__key=scored, test_case__is_active=True).order_by("id").values_list(
                "id", "test_case__dimension"):
            by_dimension[dimension].append(response_id)
        if not by_dimension:
            raise ValidationError([f"{scored}: no responses to its cases"])
        queues = []
        for dimension in sorted(by_dimension):
            ids = by_dimension[dimension][:]
            random.Random(f"{seed}:{scored}:{dimension}").shuffle(ids)
            queues.append(ids)
        picked: list[int] = []
        taken = [0] * len(queues)
        while len(picked) < per_tradition and any(queues):  # round-robin over dimensions
            for index, queue in enumerate(queues):
                if queue and len(picked) < per_tradition:
                    picked.append(queue.pop())
                    taken[index] += 1
        # How many come from each dimension depends only on the sizes; which ones is a uniformly random subset of
        # the dimension's responses (the tail of a seeded shuffle): π = taken / responses, exactly.
        share = {dimension: taken[index] / len(by_dimension[dimension])
                 for index, dimension in enumerate(sorted(by_dimension))}
        dimension_of = {rid: dimension for dimension, ids in by_dimension.items() for rid in ids}
        for response_id in picked:
            dimension = dimension_of[response_id]
            inclusion[response_id] = (share[dimension], ["cross", scored, dimension])
        drawn += picked
    cycle = CalibrationCycle.objects.create(
        name=name, kind=CalibrationCycle.Kind.CROSS_TRADITION, cross_pairs=dict(pairs), rubric=rubric or rubric_active(),
        seed=seed, min_per_dimension=max(1, per_tradition), created_by=created_by,
        draw_report={"kind": "cross_tradition", "pairs": dict(pairs), "per_tradition": per_tradition, "seed": seed,
                     "items": len(drawn)})
    CycleItem.objects.bulk_create(
        CycleItem(cycle=cycle, response_id=r, source=CycleItem.Source.CROSS, inclusion_probability=inclusion[r][0],
                  inclusion_basis=CycleItem.InclusionBasis.CROSS, stratum=inclusion[r][1]) for r in drawn)
    cycle_assignments_create(cycle=cycle)
    return cycle


def tradition_fairness(*, cycle: CalibrationCycle) -> TraditionPayload:
    """Per scored tradition × scoring tradition × dimension: mean over items of (out-group mean score − in-group
    mean score), each expert's score being the mean of their sub-dimension scores (0–3), with a t interval; flagged
    beyond ±0.5. Plus the judge's per-tradition agreement gap from the newest ready report of a standard cycle."""
    keys = dict(Tradition.objects.values_list("id", "key"))
    rows = SubScore.objects.counted().filter(  # first scorings only: a re-served item never counts twice
        annotation__assignment__cycle=cycle, annotation__status=Annotation.Status.SUBMITTED,
    ).values_list("annotation__assignment_id", "score")
    per_assignment: dict[int, list[int]] = defaultdict(list)
    for assignment_id, score in rows.iterator(chunk_size=5000):
        per_assignment[assignment_id].append(score)
    facts = Assignment.objects.filter(pk__in=list(per_assignment)).values_list(
        "pk", "item_id", "panel__tradition_id", "item__response__test_case__tradition_id",
        "item__response__test_case__dimension")
    scores: dict[tuple[int, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for assignment_id, item_id, panel_tradition, item_tradition, dimension in facts:
        scored, scoring = keys.get(item_tradition, ""), keys.get(panel_tradition, "")
        scores[(item_id, scored, dimension)][scoring].append(float(np.mean(per_assignment[assignment_id])))
    cells: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for (_, scored, dimension), by_group in scores.items():
        if scored not in by_group:
            continue
        home = float(np.mean(by_group[scored]))
        for scoring, values in by_group.items():
            if scoring != scored:
                cells[(scored, scoring, dimension)].append(float(np.mean(values)) - home)
                cells[(scored, scoring, "all dimensions")].append(float(np.mean(values)) - home)
    groups: list[TraditionGroup] = []
    for (scored, scoring, dimension), diffs in sorted(cells.items()):
        mean, ci = mean_t_interval(diffs)
        groups.append({"scored": scored, "scoring": scoring, "dimension": dimension, "n_items": len(diffs),
                       "mean_difference": mean, "ci": ci,
                       "flagged": mean is not None and abs(mean) > FLAG_POINTS})
    gap = judge_tradition_gap()
    return {"cycle": cycle.pk, "threshold_points": FLAG_POINTS, "groups": groups, "judge_gap": gap,
            "n": len(scores), "flagged": _fails(groups) or bool(gap and gap["flagged"])}


def _fails(groups: list[TraditionGroup]) -> bool:
    """Over all dimensions beyond ±0.5, or in a dimension with the interval clear of ±0.5."""
    for g in groups:
        ci = g["ci"]
        if g["flagged"] and (g["dimension"] == "all dimensions"
                             or (ci is not None and (ci[0] > FLAG_POINTS or ci[1] < -FLAG_POINTS))):
            return True
    return False


def judge_tradition_gap() -> JudgeGap | None:
    """From the newest ready report of a standard cycle, per tradition: the judge's α against the expert majority
    and its gap to the pooled α, and the judge's mean signed difference (judge − majority, 0–3) against that of the
    other traditions' units — flagged beyond ±0.5 points (a judge that scores one tradition half a point lower)."""
    snapshot = (Snapshot.objects.of(Snapshot.Kind.CYCLE_REPORT).ready()
                .filter(cycle__kind=CalibrationCycle.Kind.STANDARD)
                .order_by("-finished_at", "-id").first())
    if snapshot is None:
        return None
    groups = (snapshot.payload or {}).get("groups", [])
    pooled = next((g["judge_vs_majority"]["alpha"] for g in groups if g["kind"] == "overall"), None)
    per = {g["value"]: g["judge_vs_majority"] for g in groups if g["kind"] == "tradition"}
    traditions: dict[str, JudgeTraditionGap] = {}
    for key, block in sorted(per.items()):
        others = [(b["mean_signed_difference"], b["n_units"]) for k, b in per.items()
                  if k != key and b.get("mean_signed_difference") is not None and b["n_units"]]
        rest = sum(m * n for m, n in others) / sum(n for _, n in others) if others else None
        msd = block.get("mean_signed_difference")
        shift = None if msd is None or rest is None else msd - rest
        traditions[key] = {"alpha": block["alpha"], "gap": None if block["alpha"] is None or pooled is None
                           else block["alpha"] - pooled, "n_units": block["n_units"], "mean_signed_difference": msd,
                           "difference_to_other_traditions": shift,
                           "flagged": shift is not None and abs(shift) > FLAG_POINTS}
    return {"cycle": snapshot.cycle_id, "version": snapshot.version, "pooled_alpha": pooled,
            "traditions": traditions, "flagged": any(t["flagged"] for t in traditions.values())}


def tradition_check(*, cycle: CalibrationCycle, requested_by: User | None = None) -> Snapshot:
    if cycle.kind != CalibrationCycle.Kind.CROSS_TRADITION:
        raise ValidationError("tradition fairness reads a cross-tradition cycle")
    payload = tradition_fairness(cycle=cycle)
    return bias_check_record(kind=CheckKind.TRADITION, cycle=cycle, flagged=payload["flagged"], n=payload["n"],
                             payload=payload, requested_by=requested_by)
