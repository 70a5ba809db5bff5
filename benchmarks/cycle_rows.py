"""Real rows for the report benchmarks: throwaway databases, the demo, and cycles written through the ORM in bulk.

`tests/calibration/synthetic.py` makes the builder's plain records; `synthetic_cycle_write` turns them into
the rows a real cycle has (traditions, experts with profiles, panels, test cases, responses, the cycle and
its items, assignments, submitted annotations with their sub-scores and audit events, a finished judge run
with its scores, current gold decisions), so `report_snapshot_compute` reads them the way it reads
production data. `scoring_cycle_write` adds an open cycle whose assignments are still to be scored.

Used by benchmarks/report_snapshot.py, benchmarks/report_load.py and benchmarks/load.py; nothing here is timed.
The databases, Django's set-up, the demo and the admin come from benchmarks/kit.py.
"""
from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal
from typing import TYPE_CHECKING, Any

# Re-exported: report_snapshot.py and other benchmarks import the kit's database and demo helpers from here.
from benchmarks.kit import (  # noqa: F401
    Database,
    admin_user,
    demo_load,
    django_setup,
    load_average,
    throwaway_database,
)

if TYPE_CHECKING:  # Django is set up by the caller, after this module is imported
    from accounts.models import User
    from evaluations.models import ModelResponse, Tradition

PASSAGE = (
    "The answer reads the passage in its canonical setting and names the key terms in the original language: "
    "*logos* in John 1:1 (λόγος), *hesed* in the Psalms (חֶסֶד), and the way the tradition's confessional "
    "documents receive them. It distinguishes what the text says from what later doctrine drew out of it, "
    "quotes the council or catechism it relies on, and says where interpreters inside the tradition differ. "
)


def _traditions(keys: set[str]) -> dict[str, Tradition]:
    """The Tradition rows for these keys ("none" is no tradition), creating the ones the reference data lacks."""
    from evaluations.models import Tradition
    from evaluations.services import reference_data_ensure

    reference_data_ensure()
    traditions = {t.key: t for t in Tradition.objects.all()}
    for key in sorted(keys - set(traditions) - {"none"}):
        traditions[key] = Tradition.objects.create(key=key, name=key.title(), order=len(traditions))
    return traditions


def _panel(tradition: Any) -> Any:
    from annotations.models import Panel

    if tradition is None:
        return Panel.objects.get_or_create(name="Bench tradition-neutral panel", defaults={"tradition": None})[0]
    return Panel.objects.get_or_create(tradition=tradition, defaults={"name": f"{tradition.name} panel"})[0]


def _experts(codes: list[str], tradition_of: dict[str, str], traditions: dict[str, Tradition], *,
             prefix: str) -> dict[str, User]:
    """One expert per code, on their tradition's panel: {code: user}."""
    from accounts.models import User
    from accounts.services import user_create

    users = {}
    for code in codes:
        email = f"{prefix}{code.lower()}@bench.test"
        tradition = traditions.get(tradition_of[code])
        user = User.objects.filter(email=email).first() or user_create(
            email=email, password=None, role=User.Role.EXPERT, display_name=f"Expert {code}", tradition=tradition)
        _panel(tradition).members.add(user)
        users[code] = user
    return users


def _cases_and_responses(cells: list[tuple[str, str, str, str]], traditions: dict[str, Tradition], *,
                         prefix: str, words: int) -> dict[str, ModelResponse]:
    """One test case and one model response per (item, dimension, tradition, difficulty): {item: response}."""
    from evaluations.models import EvaluatedModel, ModelResponse, TestCase

    model, _ = EvaluatedModel.objects.get_or_create(name="bench/model-a", defaults={"provider": "Bench",
                                                                                    "family": "bench"})
    text = (PASSAGE * (words // 70 + 1)).strip()
    cases = TestCase.objects.bulk_create([
        TestCase(external_id=f"{prefix}-{item}", dimension=dimension, difficulty=difficulty,
                 tradition=traditions.get(tradition), question_type="applied_reasoning",
                 prompt=f"{prefix} question {item} ({dimension}, {tradition}): how does the tradition read "
                        "the passage, and on what authority?")
        for item, dimension, tradition, difficulty in cells
    ], batch_size=500)
    responses = ModelResponse.objects.bulk_create(
        [ModelResponse(test_case=case, model=model, text=text) for case in cases], batch_size=500)
    return {cell[0]: response for cell, response in zip(cells, responses, strict=True)}


def _cycle(name: str, *, admin: Any, per_dimension: int, status: str = "open") -> Any:
    from annotations.models import CalibrationCycle
    from evaluations.models import RubricVersion

    return CalibrationCycle.objects.create(
        name=name, rubric=RubricVersion.objects.get(version="1.0"), seed=1, min_per_dimension=per_dimension,
        neutral_panel=_panel(None), created_by=admin, status=status)


def synthetic_cycle_write(synthetic: Any, *, name: str, admin: Any, prefix: str = "syn", words: int = 250) -> Any:
    """Write a `tests.calibration.synthetic.SyntheticCycle` as real rows; returns the (closed) cycle."""
    from django.db import transaction
    from django.utils import timezone

    from annotations.models import (
        AdjudicationDecision,
        Annotation,
        AnnotationEvent,
        Assignment,
        CycleItem,
        GoldScore,
        SubScore,
    )
    from evaluations.models import JudgeResult, JudgeRun, JudgeScore, RubricVersion

    now = timezone.now()
    facets: dict[str, tuple[str, str, str]] = {}
    for unit in synthetic.units:
        facets.setdefault(unit.item, (unit.dimension, unit.tradition, unit.difficulty))
    tradition_of = {}
    scores: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)  # (item, rater) → {key: score}
    for rating in synthetic.ratings:
        tradition_of[rating.rater] = rating.unit.tradition
        scores[(rating.unit.item, rating.rater)][rating.unit.sub_dimension] = rating.score
    with transaction.atomic():
        traditions = _traditions({t for _, t, _ in facets.values()})
        experts = _experts([r for r in synthetic.raters if r in tradition_of], tradition_of, traditions,
                           prefix=prefix)
        panel_of = {t: _panel(traditions.get(t)) for t in {t for _, t, _ in facets.values()}}
        members = defaultdict(list)
        for code, tradition in tradition_of.items():
            members[tradition].append(code)
        responses = _cases_and_responses([(item, *cell) for item, cell in facets.items()], traditions,
                                         prefix=prefix, words=words)
        per_dimension = max(sum(1 for d, _, _ in facets.values() if d == dim) for dim, _, _ in facets.values())
        cycle = _cycle(name, admin=admin, per_dimension=per_dimension, status="closed")
        items = dict(zip(facets, CycleItem.objects.bulk_create(
            [CycleItem(cycle=cycle, response=responses[item], source="random") for item in facets],
            batch_size=1000), strict=True))

        position: dict[str, int] = defaultdict(int)
        assignments, done = [], []
        for item, (_, tradition, _) in facets.items():
            for code in members[tradition]:
                position[code] += 1
                submitted = (item, code) in scores
                assignment = Assignment(expert=experts[code], cycle=cycle, item=items[item],
                                        panel=panel_of[tradition], position=position[code],
                                        status="submitted" if submitted else "pending")
                assignments.append(assignment)
                if submitted:
                    done.append((assignment, scores[(item, code)]))
        Assignment.objects.bulk_create(assignments, batch_size=1000)
        annotations = Annotation.objects.bulk_create(
            [Annotation(assignment=a, status="submitted", submitted_at=now, seconds_spent=240,
                        rationale="Scored against the tradition's confessional sources.") for a, _ in done],
            batch_size=1000)
        SubScore.objects.bulk_create(
            [SubScore(annotation=annotation, key=key, score=score)
             for annotation, (_, given) in zip(annotations, done, strict=True) for key, score in given.items()],
            batch_size=2000)
        AnnotationEvent.objects.bulk_create(
            [AnnotationEvent(annotation=annotation, actor=assignment.expert, at=now, kind="submitted",
                             changes={f"score:{k}": [None, v] for k, v in given.items()})
             for annotation, (assignment, given) in zip(annotations, done, strict=True)], batch_size=1000)

        judged: dict[str, dict[str, int]] = defaultdict(dict)
        for (item, key), score in synthetic.judge.items():
            judged[item][key] = score
        run = JudgeRun.objects.create(
            label=f"{prefix} judge", rubric=RubricVersion.objects.get(version="1.0"), primary_model="bench/judge",
            base_url="http://127.0.0.1:9/v1", status="finished", total_items=len(judged),
            processed_items=len(judged), scored_items=len(judged), started_at=now, finished_at=now)
        results = JudgeResult.objects.bulk_create(
            [JudgeResult(run=run, response=responses[item], judge_model="bench/judge", role="primary",
                         status="scored", attempts=1, composite=Decimal("0.5")) for item in judged],
            batch_size=1000)
        JudgeScore.objects.bulk_create(
            [JudgeScore(result=result, sub_dimension=key, raw_score=score, reasoning="As the rubric asks.")
             for result, given in zip(results, judged.values(), strict=True) for key, score in given.items()],
            batch_size=2000)

        gold: dict[str, dict[str, int]] = defaultdict(dict)
        for (item, key), score in synthetic.gold.items():
            gold[item][key] = score
        decisions = AdjudicationDecision.objects.bulk_create(
            [AdjudicationDecision(item=items[item], adjudicator=admin, reason="rubric_ambiguity", created_at=now)
             for item in gold], batch_size=1000)
        GoldScore.objects.bulk_create(
            [GoldScore(decision=decision, key=key, score=score)
             for decision, given in zip(decisions, gold.values(), strict=True) for key, score in given.items()],
            batch_size=2000)
    return cycle


def scoring_cycle_write(*, name: str, admin: Any, n_experts: int, items_per_expert: int, prefix: str = "load",
                        words: int = 250, seed: int = 5) -> tuple[Any, list[Any]]:
    """An open cycle where `n_experts` experts (two or three per tradition panel) each have `items_per_expert`
    pending assignments, every item scored by its tradition's whole panel. Returns (cycle, experts)."""
    from django.db import transaction

    from annotations.models import Assignment, CycleItem
    from tests.calibration.synthetic import DIFFICULTIES, RUBRIC, TRADITIONS

    rng = random.Random(seed)
    traditions_used = TRADITIONS[: max(1, n_experts // 2)] if n_experts < 2 * len(TRADITIONS) else TRADITIONS
    codes = [f"E{i + 1:02d}" for i in range(n_experts)]
    tradition_of = {code: traditions_used[i % len(traditions_used)] for i, code in enumerate(codes)}
    dimensions = list(RUBRIC)
    with transaction.atomic():
        traditions = _traditions(set(traditions_used))
        experts = _experts(codes, tradition_of, traditions, prefix=prefix)
        cells = [(f"{tradition}-{n:04d}", dimensions[n % len(dimensions)], tradition, rng.choice(DIFFICULTIES))
                 for tradition in traditions_used for n in range(items_per_expert)]
        responses = _cases_and_responses(cells, traditions, prefix=prefix, words=words)
        cycle = _cycle(name, admin=admin, per_dimension=items_per_expert)
        items = CycleItem.objects.bulk_create(
            [CycleItem(cycle=cycle, response=responses[cell[0]], source="random") for cell in cells], batch_size=1000)
        by_tradition = defaultdict(list)
        for cell, item in zip(cells, items, strict=True):
            by_tradition[cell[2]].append(item)
        assignments = []
        for code in codes:
            queue = list(by_tradition[tradition_of[code]])
            rng.shuffle(queue)
            panel = _panel(traditions.get(tradition_of[code]))
            assignments += [Assignment(expert=experts[code], cycle=cycle, item=item, panel=panel, position=p)
                            for p, item in enumerate(queue, start=1)]
        Assignment.objects.bulk_create(assignments, batch_size=1000)
    return cycle, [experts[code] for code in codes]


def snapshot_compute(cycle: Any, *, n_resamples: int = 1000, requested_by: Any = None) -> Any:
    """Request and compute the next version of a cycle's report in this process; the ready snapshot."""
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request

    snapshot = report_snapshot_request(cycle=cycle, requested_by=requested_by, n_resamples=n_resamples)
    snapshot = report_snapshot_compute(snapshot_id=snapshot.pk)
    if not snapshot.is_ready:
        raise RuntimeError(f"snapshot {snapshot} is {snapshot.status}: {snapshot.error}")
    return snapshot
