"""An autosave or a submission is one service call: the assignment is locked and the lifecycle asked once,
and the active seconds sent with it are still counted (they used to take a second locked transaction)."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from annotations.models import Annotation
from annotations.selectors import sub_dimensions_for
from tests.annotations.factories import world  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
MAX_AUTOSAVE_QUERIES = 22  # first autosave of an item on PostgreSQL, with its idempotency key; it was 27 with the separate time call


def lifecycle_checks(ctx: CaptureQueriesContext) -> int:
    """The lifecycle question (annotations/lifecycle.py) is the one query that names `withdrawn_reason` AS itself."""
    return sum(1 for q in ctx.captured_queries if '"withdrawn_reason" AS "withdrawn_reason"' in q["sql"])


def post(client, path, data):  # type: ignore[no-untyped-def]
    """As the page sends it: with a fresh idempotency key (annotations/receipts.py), whose receipt is part of the cost."""
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(path, data, HTTP_HX_REQUEST="true", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))
    return response, ctx


def test_autosave_and_submit_ask_the_lifecycle_once_and_count_the_seconds(client, world) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    client.force_login(world.expert)
    assignment = world.assignments(world.expert)[0]
    keys = [s.key for s in sub_dimensions_for(assignment=assignment)]
    scores = {f"score-{k}": "2" for k in keys}
    base = f"/scoring/a/{assignment.public_id}/"

    response, ctx = post(client, base + "draft/", {**scores, "rationale": "first", "seconds": "12"})
    assert response.status_code == 200
    assert lifecycle_checks(ctx) == 1
    assert len(ctx.captured_queries) <= MAX_AUTOSAVE_QUERIES
    assert Annotation.objects.get(assignment=assignment).seconds_spent == 12

    # A minute passes on the expert's side (the wall-clock clamp allows at most the time since the last report).
    minute_passes = lambda: Annotation.objects.filter(assignment=assignment).update(  # noqa: E731
        last_beat_at=F("last_beat_at") - timedelta(seconds=60))
    minute_passes()
    response, ctx = post(client, base + "draft/", {**scores, "rationale": "second", "seconds": "99"})
    assert response.status_code == 200 and lifecycle_checks(ctx) == 1
    assert Annotation.objects.get(assignment=assignment).seconds_spent == 12 + 30  # capped per report

    response, _ = post(client, base + "draft/", {**scores, "rationale": "third", "seconds": "30"})
    # No time has passed since: only the clamp's carry-over (HEARTBEAT_CARRY_SECONDS = 5) is credited, not 30.
    assert Annotation.objects.get(assignment=assignment).seconds_spent == 12 + 30 + 5

    minute_passes()
    response, ctx = post(client, base + "submit/", {**scores, "rationale": "done", "seconds": "7"})
    assert response.status_code == 200
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.status == Annotation.Status.SUBMITTED and annotation.rationale == "done"
    assert annotation.seconds_spent == 12 + 30 + 5 + 7
    # the submission's own check, then the next item's page (which asks whether it can be scored)
    assert lifecycle_checks(ctx) == 2


def test_an_invalid_autosave_still_counts_its_seconds(client, world) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    client.force_login(world.expert)
    assignment = world.assignments(world.expert)[0]
    key = sub_dimensions_for(assignment=assignment)[0].key
    # A score out of range on one of the item's sub-dimensions (one naming a sub-dimension the item does not have
    # changes nothing at all: tests/annotations/test_idempotency.py).
    response, _ = post(client, f"/scoring/a/{assignment.public_id}/draft/", {f"score-{key}": "9", "seconds": "5"})
    assert response.status_code == 422
    assert Annotation.objects.get(assignment=assignment).seconds_spent == 5


def test_a_text_is_rendered_from_markdown_once_per_process(monkeypatch) -> None:
    from annotations import rendering

    calls = []
    real = rendering._RENDERER.render
    monkeypatch.setattr(rendering._RENDERER, "render", lambda *a, **k: calls.append(a) or real(*a, **k))
    text = "A *unique* answer about בְּרֵאשִׁית and λόγος — 6f1d0c."
    first = rendering.markdown_to_safe_html(text)
    second = rendering.markdown_to_safe_html(text)
    assert first == second and len(calls) == 1
    assert '<span dir="rtl" lang="he">' in first and "<em>unique</em>" in first
    assert hasattr(second, "__html__")  # still marked safe for templates
