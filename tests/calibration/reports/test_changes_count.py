"""Issue 32: the report page's "what changed since version N" counts scores, not events — three items scored
(one of them undone and submitted again) are 3 new scores, not 4."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotations.models import Assignment
from annotations.services import (
    AnnotationInput,
    annotation_reopen,
    annotation_submit,
    annotation_undo,
    sub_dimension_keys,
)
from calibration.reports.snapshots import snapshot_changes
from tests.calibration.reports.test_report_views import compute, scored_world


def submit(assignment: Assignment, score: int) -> None:
    keys = sub_dimension_keys(assignment=assignment)
    annotation_submit(assignment=assignment, actor=assignment.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, score), rationale="scored"))


@pytest.mark.django_db
def test_changes_count_scores_not_events_after_an_undo(immediate_tasks, client) -> None:  # type: ignore[no-untyped-def]
    world, _ = scored_world()
    client.force_login(world.admin)
    three = list(Assignment.objects.filter(cycle=world.cycle).select_related("expert", "panel")
                 .order_by("item_id", "public_id")[:3])
    for assignment in three:  # open again before the snapshot: the snapshot reads them as unscored
        annotation_reopen(assignment=assignment, actor=world.admin, note="not yet")
    snapshot = compute(client, world.cycle)
    for assignment in three:
        submit(assignment, 2)
    last = three[-1]
    annotation_undo(assignment=last, actor=last.expert)
    submit(last, 3)
    changes = snapshot_changes(snapshot=snapshot)
    assert changes.scores == 3
    page = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    assert "3 new or changed scores since version 1" in page


@pytest.mark.django_db
def test_changes_count_a_score_submitted_and_taken_back_after_the_snapshot_as_no_change(immediate_tasks, client) -> None:  # type: ignore[no-untyped-def]
    world, _ = scored_world()
    client.force_login(world.admin)
    first = Assignment.objects.filter(cycle=world.cycle).select_related("expert", "panel").order_by("item_id").first()
    annotation_reopen(assignment=first, actor=world.admin, note="not yet")
    snapshot = compute(client, world.cycle)
    submit(first, 1)
    annotation_undo(assignment=first, actor=first.expert)  # back to a draft: the report's input is as it was
    assert snapshot_changes(snapshot=snapshot).scores == 0
