"""The queue and the scoring page cost the same few queries for 10 or 10,000 assignments."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations.models import Assignment, CalibrationCycle, CycleItem, Panel
from evaluations.models import ModelResponse
from evaluations.selectors import rubric_active
from tests.annotations.factories import CaseFactory, EvaluatedModelFactory, person, tradition

pytestmark = pytest.mark.django_db
MAX_QUERIES = 15


def expert_with_assignments(n: int):  # type: ignore[no-untyped-def]
    """An expert with n assignments, bulk-created (one case, n runs of one model)."""
    catholic = tradition("catholic")
    expert = person(tradition=catholic)
    panel = Panel.objects.create(name=f"panel-{n}", tradition=None)
    panel.members.add(expert)
    case = CaseFactory(tradition=catholic, prompt="Explain **transubstantiation** (Trent, Session XIII).")
    model = EvaluatedModelFactory(name=f"bulk/model-{n}")
    responses = ModelResponse.objects.bulk_create(
        ModelResponse(test_case=case, model=model, run_label=f"run-{i}", text=f"Answer {i} with *Markdown*.")
        for i in range(n)
    )
    cycle = CalibrationCycle.objects.create(name=f"bulk-{n}", rubric=rubric_active(), seed=1)
    items = CycleItem.objects.bulk_create(CycleItem(cycle=cycle, response=r, source="random") for r in responses)
    Assignment.objects.bulk_create(
        (Assignment(expert=expert, cycle=cycle, item=item, panel=panel, position=i + 1) for i, item in enumerate(items)),
        batch_size=2000,
    )
    return expert


def queries_for(client, expert) -> dict[str, int]:  # type: ignore[no-untyped-def]
    client.force_login(expert)
    resume = Assignment.objects.filter(expert=expert).order_by("position").first().public_id
    counts = {}
    for label, path, headers in (
        ("queue", reverse("annotations:queue"), {}),
        ("queue page 2", reverse("annotations:queue") + "?page=2", {}),
        ("item", reverse("annotations:item", kwargs={"public_id": resume}), {}),
        ("item partial", reverse("annotations:item", kwargs={"public_id": resume}), {"HTTP_HX_REQUEST": "true"}),
    ):
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(path, **headers)
        assert response.status_code == 200, label
        counts[label] = len(ctx.captured_queries)
    return counts


def test_queue_and_scoring_page_use_a_constant_number_of_queries(client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    small = queries_for(client, expert_with_assignments(10))
    large_expert = expert_with_assignments(10_000)
    assert Assignment.objects.filter(expert=large_expert).count() == 10_000
    large = queries_for(client, large_expert)
    assert small == large, (small, large)
    assert max(large.values()) <= MAX_QUERIES, large
    client.force_login(large_expert)
    with django_assert_max_num_queries(MAX_QUERIES):
        client.get(reverse("annotations:queue"))
    public_id = Assignment.objects.filter(expert=large_expert).order_by("position").first().public_id
    with django_assert_max_num_queries(MAX_QUERIES):
        client.get(reverse("annotations:item", kwargs={"public_id": public_id}))
