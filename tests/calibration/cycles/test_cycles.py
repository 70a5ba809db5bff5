"""Cycles through the services: commit stores the seeded draw, assigns items to panels, refreshes 25 %."""
from __future__ import annotations

import math
from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from annotations.models import Assignment, CalibrationCycle, CycleItem, Panel
from calibration.cycles.sampling import DrawParams
from calibration.cycles.selectors import draw_pool, judge_extreme_composite_response_ids, panel_size_warnings
from calibration.cycles.services import (
    cycle_assignments_create,
    cycle_commit,
    cycle_draw_compute,
    panel_create,
)
from tests.annotations.factories import (
    CaseFactory,
    EvaluatedModelFactory,
    ModelResponseFactory,
    person,
    tradition,
)

pytestmark = pytest.mark.django_db

DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]


def pool_create(per_dimension_cases: int = 20, models: int = 4) -> None:
    """per_dimension_cases × models responses per dimension, over difficulties and traditions."""
    model_objs = [EvaluatedModelFactory(name=f"maker/model-{i}", family=f"fam{i}") for i in range(models)]
    traditions = [None, tradition("catholic"), tradition("orthodox"), tradition("reformed")]
    difficulties = ["easy", "medium", "hard", "expert"]
    for d, dimension in enumerate(DIMENSIONS):
        for i in range(per_dimension_cases):
            case = CaseFactory(dimension=dimension, difficulty=difficulties[i % 4], tradition=traditions[(i + d) % 4])
            for m, model in enumerate(model_objs):
                ModelResponseFactory(test_case=case, model=model, text="word " * (20 + 7 * ((i * models + m) % 40)))


@pytest.fixture
def panels() -> dict[str, Panel]:
    result = {}
    for key in ("catholic", "orthodox", "reformed"):
        panel, _ = panel_create(name=f"{key} panel", tradition=tradition(key),
                                members=[person(tradition=tradition(key)) for _ in range(3)],
                                lead=person("adjudicator"))
        result[key] = panel
    result["neutral"], _ = panel_create(name="neutral", tradition=None, members=[person() for _ in range(3)])
    return result


def test_commit_stores_the_seeded_draw_with_its_report(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create()
    params = DrawParams(seed=99, min_per_dimension=50)
    preview = cycle_draw_compute(params=params)
    cycle, report = cycle_commit(name="C1", params=params, neutral_panel=panels["neutral"],
                                 expected_fingerprint=preview.fingerprint)
    assert cycle.seed == 99 and cycle.min_per_dimension == 50
    stored = sorted(cycle.items.values_list("response_id", "source", "is_anchor"))
    assert stored == sorted((i.response_id, i.source, i.is_anchor) for i in preview.items)
    assert cycle.draw_report["fingerprint"] == preview.fingerprint
    per_dimension = Counter(cycle.items.values_list("response__test_case__dimension", flat=True))
    assert all(per_dimension[d] == 50 for d in DIMENSIONS)
    assert report.unassigned_items == 0 and report.experts == 12


def test_the_same_seed_reproduces_the_committed_draw(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create()
    cycle, _ = cycle_commit(name="C1", params=DrawParams(seed=5), neutral_panel=panels["neutral"])
    again = cycle_draw_compute(params=DrawParams(seed=cycle.seed, min_per_dimension=cycle.min_per_dimension))
    assert again.fingerprint == cycle.draw_report["fingerprint"]
    assert sorted(cycle.items.values_list("response_id", flat=True)) == sorted(i.response_id for i in again.items)


def test_items_go_to_every_member_of_their_traditions_panel(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create(per_dimension_cases=8, models=2)
    cycle, report = cycle_commit(name="C1", params=DrawParams(seed=1), neutral_panel=panels["neutral"])
    for item in CycleItem.objects.filter(cycle=cycle).select_related("response__test_case__tradition"):
        tradition_key = item.response.test_case.tradition.key if item.response.test_case.tradition_id else "neutral"
        panel = panels[tradition_key]
        assigned = set(Assignment.objects.filter(item=item).values_list("expert_id", flat=True))
        assert assigned == set(panel.members.values_list("id", flat=True))
        assert set(Assignment.objects.filter(item=item).values_list("panel_id", flat=True)) == {panel.pk}
    assert report.assignments == Assignment.objects.filter(cycle=cycle).count() == 3 * cycle.items.count()


def test_each_expert_gets_a_seeded_shuffled_order(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create(per_dimension_cases=8, models=2)
    cycle, _ = cycle_commit(name="C1", params=DrawParams(seed=1), neutral_panel=panels["neutral"])
    members = list(panels["catholic"].members.all())

    def order(user):  # type: ignore[no-untyped-def]
        return list(Assignment.objects.filter(expert=user, cycle=cycle).order_by("position").values_list("item_id", flat=True))

    orders = [order(m) for m in members]
    assert all(sorted(o) == sorted(orders[0]) for o in orders)
    assert orders[0] != orders[1] or orders[1] != orders[2]  # not a shared order
    assert [p for p in Assignment.objects.filter(expert=members[0], cycle=cycle).order_by("position")
            .values_list("position", flat=True)] == list(range(1, len(orders[0]) + 1))
    # Reproducible: re-creating the assignments gives the same order.
    Assignment.objects.filter(cycle=cycle).delete()
    cycle_assignments_create(cycle=cycle)
    assert [order(m) for m in members] == orders


def test_items_without_a_panel_are_reported_not_assigned(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create(per_dimension_cases=8, models=2)
    cycle, report = cycle_commit(name="C1", params=DrawParams(seed=1), neutral_panel=None)
    neutral_items = cycle.items.filter(response__test_case__tradition__isnull=True).count()
    assert neutral_items > 0 and report.unassigned_items == neutral_items
    assert report.notes == [f"{neutral_items} item(s) not assigned: no panel"]


def test_commit_refuses_when_the_pool_changed_since_the_preview(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create(per_dimension_cases=8, models=2)
    preview = cycle_draw_compute(params=DrawParams(seed=1))
    ModelResponseFactory(test_case=CaseFactory(dimension="textual"))
    with pytest.raises(ValidationError) as exc:
        cycle_commit(name="C1", params=DrawParams(seed=1), expected_fingerprint=preview.fingerprint)
    assert exc.value.code == "pool_changed"
    assert not CalibrationCycle.objects.exists()


def test_next_cycle_keeps_anchors_and_refreshes_a_quarter(panels) -> None:  # type: ignore[no-untyped-def]
    pool_create(per_dimension_cases=20, models=4)  # 80 responses per dimension
    first, _ = cycle_commit(name="C1", params=DrawParams(seed=1), neutral_panel=panels["neutral"])
    anchor_ids = []
    for dimension in DIMENSIONS:
        anchor_ids += list(first.items.filter(response__test_case__dimension=dimension)
                           .order_by("id").values_list("response_id", flat=True)[:4])
    first.items.filter(response_id__in=anchor_ids).update(is_anchor=True)

    second, _ = cycle_commit(name="C2", params=DrawParams(seed=2), previous=first, neutral_panel=panels["neutral"])
    before = set(first.items.values_list("response_id", flat=True))
    after = set(second.items.values_list("response_id", flat=True))
    assert set(anchor_ids) <= after
    assert set(second.items.filter(is_anchor=True).values_list("response_id", flat=True)) == set(anchor_ids)
    for dimension in DIMENSIONS:
        prev_dim = set(first.items.filter(response__test_case__dimension=dimension).values_list("response_id", flat=True))
        next_dim = set(second.items.filter(response__test_case__dimension=dimension).values_list("response_id", flat=True))
        assert len(next_dim) == 50
        non_anchor = prev_dim - set(anchor_ids)
        assert len(non_anchor - next_dim) == math.ceil(0.25 * len(non_anchor))  # 12 of 46 replaced
        assert len(next_dim - before) == len(non_anchor - next_dim)  # by never-drawn responses
    assert second.previous == first


def test_judge_edge_cases_are_the_extreme_composites_of_the_latest_run() -> None:
    from decimal import Decimal

    from evaluations.models import JudgeResult, JudgeRun, ModelResponse, RubricVersion

    assert judge_extreme_composite_response_ids(response_ids=[1, 2, 3]) == frozenset()  # no judge run yet
    responses = [ModelResponseFactory(test_case=CaseFactory(dimension="textual")) for _ in range(40)]
    run = JudgeRun.objects.create(rubric=RubricVersion.objects.get(version="1.0"), primary_model="j",
                                  base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED)
    for index, response in enumerate(responses):
        JudgeResult.objects.create(run=run, response=response, judge_model="j", role="primary", status="scored",
                                   composite=Decimal(index) / 40, attempts=1)
    JudgeRun.objects.filter(pk=run.pk).update(total_items=40, processed_items=40, scored_items=40)
    ids = [r.pk for r in ModelResponse.objects.order_by("pk")]
    # 5 % of 40 = 2 at each end.
    assert judge_extreme_composite_response_ids(response_ids=ids) == frozenset(
        [responses[0].pk, responses[1].pk, responses[38].pk, responses[39].pk])
    # The draw passes the pool's dimensions instead of having them queried: the same edges.
    pool = {p.response_id: p.dimension for p in draw_pool()}
    assert judge_extreme_composite_response_ids(response_ids=ids, dimensions=pool) == \
        judge_extreme_composite_response_ids(response_ids=ids)


def test_panel_size_warnings_follow_the_traditions_minimum() -> None:
    catholic, warnings = panel_create(name="Catholic panel", tradition=tradition("catholic"),
                                      members=[person(), person()], lead=person("adjudicator"))
    assert warnings == ["Catholic panel has 2 expert(s), below the minimum of 3 for Catholic (methodology §6.1.1)."]
    _, warnings = panel_create(name="Pentecostal panel", tradition=tradition("pentecostal"),
                               members=[person(), person()], lead=person("adjudicator"))
    assert warnings == []  # two are enough for Pentecostal
    everything = panel_size_warnings()
    assert "Orthodox has no panel (minimum 3 experts)." in everything
    assert any(w.startswith("Catholic panel has 2 expert(s)") for w in everything)
    assert not any(w.startswith("Pentecostal panel") for w in everything)
    catholic.members.add(person())
    assert not any(w.startswith("Catholic panel") for w in panel_size_warnings())
