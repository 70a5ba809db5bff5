"""Undo: an expert takes back a submission (or skip) within the window; afterwards the item stays locked (409)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from annotations.lifecycle import cycle_close
from annotations.models import Annotation, AnnotationEvent, Assignment
from annotations.services import (
    AnnotationInput,
    annotation_can_undo,
    annotation_draft_save,
    annotation_skip,
    annotation_submit,
    annotation_undo,
    sub_dimension_keys,
)

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def submit_first(world, value: int = 2):  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    annotation_submit(assignment=assignment, actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, value), rationale="why"))
    return assignment, keys


def url(name: str, assignment: Assignment) -> str:
    return reverse(f"annotations:{name}", kwargs={"public_id": assignment.public_id})


def test_undo_within_the_window_turns_the_submission_back_into_a_draft_and_is_audited(world) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = submit_first(world)
    assert annotation_can_undo(assignment=assignment, actor=world.expert)
    annotation = annotation_undo(assignment=assignment, actor=world.expert)
    assert annotation.status == Annotation.Status.DRAFT and annotation.submitted_at is None
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.DRAFT
    assert dict(annotation.scores.values_list("key", "score")) == dict.fromkeys(keys, 2)  # scores kept as a draft
    event = annotation.events.order_by("-id").first()
    assert event.kind == AnnotationEvent.Kind.UNDONE and event.actor == world.expert
    assert event.changes == {"status": ["submitted", "draft"]}
    # The draft can be changed and submitted again.
    annotation_submit(assignment=assignment, actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, 1)))
    assert Annotation.objects.get(pk=annotation.pk).status == Annotation.Status.SUBMITTED


def test_undo_of_a_skip_restores_a_draft_without_the_skip_reason(world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    annotation_skip(assignment=assignment, actor=world.expert)
    annotation = annotation_undo(assignment=assignment, actor=world.expert)
    assert annotation.status == Annotation.Status.DRAFT and annotation.skip_reason == ""
    assert annotation.events.order_by("-id").first().changes == {
        "status": ["skipped", "draft"], "skip_reason": ["outside_expertise", ""]}


def test_undo_after_the_window_is_refused(world, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SCORING_UNDO_SECONDS = 120
    assignment, _ = submit_first(world)
    Annotation.objects.filter(assignment=assignment).update(submitted_at=timezone.now() - timedelta(seconds=121))
    assert not annotation_can_undo(assignment=assignment, actor=world.expert)
    with pytest.raises(ValidationError) as exc:
        annotation_undo(assignment=assignment, actor=world.expert)
    assert exc.value.code == "undo_expired"
    assert Annotation.objects.get(assignment=assignment).status == Annotation.Status.SUBMITTED
    assert not AnnotationEvent.objects.filter(kind=AnnotationEvent.Kind.UNDONE).exists()


def test_the_window_is_a_setting(world, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SCORING_UNDO_SECONDS = 600
    assignment, _ = submit_first(world)
    Annotation.objects.filter(assignment=assignment).update(submitted_at=timezone.now() - timedelta(seconds=300))
    assert annotation_undo(assignment=assignment, actor=world.expert).status == Annotation.Status.DRAFT


def test_undo_closes_once_the_expert_works_on_another_item(world) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = submit_first(world)
    other = world.assignments(world.expert)[1]
    annotation_draft_save(assignment=other, actor=world.expert,
                          data=AnnotationInput(scores={sub_dimension_keys(assignment=other)[0]: 1}))
    with pytest.raises(ValidationError) as exc:
        annotation_undo(assignment=assignment, actor=world.expert)
    assert exc.value.code == "undo_expired"


def test_another_experts_work_does_not_close_my_window(world) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = submit_first(world)
    theirs = world.assignments(world.other_expert)[0]
    annotation_draft_save(assignment=theirs, actor=world.other_expert,
                          data=AnnotationInput(scores={sub_dimension_keys(assignment=theirs)[0]: 1}))
    assert annotation_undo(assignment=assignment, actor=world.expert).status == Annotation.Status.DRAFT


def test_only_the_assignments_expert_may_undo(world) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = submit_first(world)
    for someone in (world.other_expert, world.lead, world.admin):
        with pytest.raises(PermissionDenied):
            annotation_undo(assignment=assignment, actor=someone)
    assert Annotation.objects.get(assignment=assignment).status == Annotation.Status.SUBMITTED


def test_a_draft_cannot_be_undone_and_a_second_undo_is_refused(world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    with pytest.raises(ValidationError) as exc:
        annotation_undo(assignment=assignment, actor=world.expert)
    assert exc.value.code == "not_locked"
    submit_first(world)
    annotation_undo(assignment=assignment, actor=world.expert)
    with pytest.raises(ValidationError) as again:
        annotation_undo(assignment=assignment, actor=world.expert)
    assert again.value.code == "not_locked"


def test_undo_is_refused_when_the_cycle_closed_meanwhile(world) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = submit_first(world)
    cycle_close(cycle=world.cycle, actor=world.admin, reason="end of the round")
    with pytest.raises(ValidationError) as exc:
        annotation_undo(assignment=assignment, actor=world.expert)
    assert exc.value.code == "cycle_closed"
    assert Annotation.objects.get(assignment=assignment).status == Annotation.Status.SUBMITTED


# Over HTTP


def test_htmx_submit_offers_undo_and_undo_brings_the_item_back_as_a_draft(client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    first, second = world.assignments(world.expert)[:2]
    keys = sub_dimension_keys(assignment=first)
    response = client.post(url("submit", first), {f"score-{k}": "2" for k in keys}, **HX)
    html = response.content.decode()
    assert f'data-item="{second.public_id}"' in html
    assert f'hx-post="{url("undo", first)}"' in html and 'id="undo-button"' in html

    undone = client.post(url("undo", first), **HX)
    assert undone.status_code == 200
    assert undone["HX-Replace-Url"] == url("item", first)
    page = undone.content.decode()
    assert f'data-item="{first.public_id}"' in page and 'data-locked="false"' in page
    assert "Taken back: the item is a draft again." in page
    assert Annotation.objects.get(assignment=first).status == Annotation.Status.DRAFT


def test_locked_item_page_offers_undo_only_within_the_window(client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    assignment, _ = submit_first(world)
    assert 'id="undo-button"' in client.get(url("item", assignment)).content.decode()
    Annotation.objects.filter(assignment=assignment).update(submitted_at=timezone.now() - timedelta(hours=1))
    assert 'id="undo-button"' not in client.get(url("item", assignment)).content.decode()


def test_undo_after_the_window_answers_409_with_the_reason(client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    assignment, _ = submit_first(world)
    Annotation.objects.filter(assignment=assignment).update(submitted_at=timezone.now() - timedelta(hours=1))
    response = client.post(url("undo", assignment), **HX)
    assert response.status_code == 409
    page = response.content.decode()
    assert "Too late to undo" in page and 'data-locked="true"' in page


def test_plain_post_undo_redirects_to_the_item(client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    assignment, _ = submit_first(world)
    response = client.post(url("undo", assignment))
    assert response.status_code == 302 and response["Location"] == url("item", assignment)


def test_another_expert_gets_404_for_undo(client, world) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = submit_first(world)
    client.force_login(world.other_expert)
    assert client.post(url("undo", assignment), **HX).status_code == 404
    assert Annotation.objects.get(assignment=assignment).status == Annotation.Status.SUBMITTED
