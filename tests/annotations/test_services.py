"""Annotation services: drafts, server-side validation, submit locks, skip, reopen, audit, time spent."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotation, AnnotationEvent, Assignment, SubScore
from annotations.services import (
    HEARTBEAT_CARRY_SECONDS,
    HEARTBEAT_MAX_SECONDS,
    AnnotationInput,
    annotation_draft_save,
    annotation_reopen,
    annotation_skip,
    annotation_submit,
    annotation_time_add,
    sub_dimension_keys,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def mine(world):  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    return assignment, sub_dimension_keys(assignment=assignment)


def full(keys: list[str], value: int = 2, **extra) -> AnnotationInput:  # type: ignore[no-untyped-def]
    return AnnotationInput(scores=dict.fromkeys(keys, value), **extra)


def test_sub_dimensions_come_from_the_cases_dimension_in_the_cycle_rubric(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    expected = {
        "doctrinal": ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"],
        "textual": ["lexicalAccuracy", "translationFidelity", "linguisticReasoning", "sourceHandling"],
    }[assignment.item.response.test_case.dimension]
    assert keys == expected


def test_draft_saves_partial_scores_and_records_the_change(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation = annotation_draft_save(assignment=assignment, actor=world.expert,
                                       data=AnnotationInput(scores={keys[0]: 1}, rationale="first thoughts"))
    assert annotation.status == Annotation.Status.DRAFT
    assert dict(annotation.scores.values_list("key", "score")) == {keys[0]: 1}
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.DRAFT
    annotation_draft_save(assignment=assignment, actor=world.expert,
                          data=AnnotationInput(scores={keys[0]: 2, keys[1]: 3}, rationale="first thoughts"))
    events = list(AnnotationEvent.objects.filter(annotation=annotation))
    assert [e.kind for e in events] == ["draft_saved", "draft_saved"]
    assert events[0].changes == {f"score:{keys[0]}": [None, 1], "rationale": ["", "first thoughts"]}
    assert events[1].changes == {f"score:{keys[0]}": [1, 2], f"score:{keys[1]}": [None, 3]}
    assert events[1].actor == world.expert
    # Saving the same values again records nothing.
    annotation_draft_save(assignment=assignment, actor=world.expert,
                          data=AnnotationInput(scores={keys[0]: 2, keys[1]: 3}, rationale="first thoughts"))
    assert AnnotationEvent.objects.filter(annotation=annotation).count() == 2


@pytest.mark.parametrize("bad", [4, -1, 7])
def test_scores_outside_0_to_3_are_rejected_by_the_service(world, mine, bad) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    for service in (annotation_draft_save, annotation_submit):
        with pytest.raises(ValidationError) as exc:
            service(assignment=assignment, actor=world.expert, data=AnnotationInput(scores={keys[0]: bad}))
        assert exc.value.code == "invalid_score"
    assert not SubScore.objects.exists()


def test_unknown_sub_dimension_keys_are_rejected(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = mine
    with pytest.raises(ValidationError) as exc:
        annotation_draft_save(assignment=assignment, actor=world.expert, data=AnnotationInput(scores={"bogus": 1}))
    assert exc.value.code == "unknown_key"


def test_submit_needs_every_sub_dimension(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    with pytest.raises(ValidationError) as exc:
        annotation_submit(assignment=assignment, actor=world.expert, data=AnnotationInput(scores={keys[0]: 2}))
    assert "scores" in exc.value.message_dict
    assert not Annotation.objects.filter(status="submitted").exists()


@pytest.mark.parametrize("extreme", [0, 3])
def test_a_rationale_is_required_when_any_score_is_0_or_3(world, mine, extreme) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    data = full(keys)
    data.scores[keys[2]] = extreme
    with pytest.raises(ValidationError) as exc:
        annotation_submit(assignment=assignment, actor=world.expert, data=data)
    assert exc.value.message_dict["rationale"] == ["A rationale is required when any score is 0 or 3."]
    data.rationale = "   "
    with pytest.raises(ValidationError):
        annotation_submit(assignment=assignment, actor=world.expert, data=data)
    data.rationale = "Cites the Council of Trent accurately."
    annotation = annotation_submit(assignment=assignment, actor=world.expert, data=data)
    assert annotation.status == Annotation.Status.SUBMITTED


def test_rationale_is_optional_for_middle_scores(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation = annotation_submit(assignment=assignment, actor=world.expert, data=full(keys, 1))
    assert annotation.status == Annotation.Status.SUBMITTED and annotation.submitted_at


def test_submission_locks_the_annotation(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation_submit(assignment=assignment, actor=world.expert, data=full(keys))
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED
    for service in (annotation_draft_save, annotation_submit):
        with pytest.raises(ValidationError) as exc:
            service(assignment=assignment, actor=world.expert, data=full(keys, 1))
        assert exc.value.code == "already_submitted"
    with pytest.raises(ValidationError):
        annotation_skip(assignment=assignment, actor=world.expert)
    assert set(SubScore.objects.values_list("score", flat=True)) == {2}


def test_a_stale_autosave_cannot_turn_a_submission_back_into_a_draft(world, mine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The autosave read the annotation as a draft just before the submission committed (SQLite has no row
    locks): its write is refused and rolled back, scores included, instead of clobbering the submission."""
    import annotations.services as services

    assignment, keys = mine
    annotation_draft_save(assignment=assignment, actor=world.expert, data=AnnotationInput(scores={keys[0]: 1}))
    stale = Annotation.objects.get(assignment=assignment)  # what the late autosave had read: a draft
    annotation_submit(assignment=assignment, actor=world.expert, data=full(keys, 2, rationale="done"))
    monkeypatch.setattr(services, "_current", lambda assignment: stale)
    with pytest.raises(ValidationError) as exc:
        annotation_draft_save(assignment=assignment, actor=world.expert,
                              data=AnnotationInput(scores=dict.fromkeys(keys, 0), rationale="late"))
    assert exc.value.code == "already_submitted"
    fresh = Annotation.objects.get(assignment=assignment)
    assert fresh.status == Annotation.Status.SUBMITTED and fresh.rationale == "done"
    assert set(SubScore.objects.filter(annotation=fresh).values_list("score", flat=True)) == {2}


def test_skip_outside_expertise_finishes_without_scores(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation_draft_save(assignment=assignment, actor=world.expert, data=AnnotationInput(scores={keys[0]: 3}))
    annotation = annotation_skip(assignment=assignment, actor=world.expert, flagged_broken=True, broken_note="garbled")
    assert annotation.status == Annotation.Status.SKIPPED and annotation.skip_reason == "outside_expertise"
    assert annotation.flagged_broken and annotation.broken_note == "garbled"
    assert not annotation.scores.exists()
    event = annotation.events.last()
    assert event.kind == "skipped" and event.changes[f"score:{keys[0]}"] == [3, None]
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SKIPPED


def test_broken_item_flag_is_saved(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation = annotation_submit(assignment=assignment, actor=world.expert,
                                   data=full(keys, flagged_broken=True, broken_note="The answer is cut off"))
    assert annotation.flagged_broken and annotation.broken_note == "The answer is cut off"


def test_only_the_panel_lead_or_an_admin_can_reopen(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation_submit(assignment=assignment, actor=world.expert, data=full(keys))
    for outsider in (world.expert, world.other_expert, world.other_lead, world.other_panel_expert):
        with pytest.raises(PermissionDenied):
            annotation_reopen(assignment=assignment, actor=outsider)
    lead = world.lead if assignment.panel.lead_id == world.lead.pk else world.admin
    annotation = annotation_reopen(assignment=assignment, actor=lead, note="typo in rationale")
    assert annotation.status == Annotation.Status.DRAFT and annotation.submitted_at is None
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.DRAFT
    event = annotation.events.last()
    assert (event.kind, event.actor, event.note) == ("reopened", lead, "typo in rationale")
    assert event.changes == {"status": ["submitted", "draft"]}
    # the expert changes a score and resubmits; the history keeps old → new
    data = full(keys)
    data.scores[keys[0]] = 1
    annotation_submit(assignment=assignment, actor=world.expert, data=data)
    assert annotation.events.last().changes[f"score:{keys[0]}"] == [2, 1]
    assert [e.kind for e in annotation.events.all()] == ["submitted", "reopened", "submitted"]
    # admins may always reopen
    annotation_reopen(assignment=assignment, actor=world.admin)


def test_reopening_a_draft_is_refused(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = mine
    with pytest.raises(ValidationError) as exc:
        annotation_reopen(assignment=assignment, actor=world.admin)
    assert exc.value.code == "not_locked"


def test_time_spent_accumulates_capped_per_heartbeat(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    start = timezone.now()
    assert annotation_time_add(assignment=assignment, seconds=15, now=start) == 15
    later = start + timedelta(minutes=5)
    assert annotation_time_add(assignment=assignment, seconds=10_000, now=later) == HEARTBEAT_MAX_SECONDS
    assert annotation_time_add(assignment=assignment, seconds=-50, now=later + timedelta(minutes=1)) == 0
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.seconds_spent == 15 + HEARTBEAT_MAX_SECONDS
    annotation_submit(assignment=assignment, actor=world.expert, data=full(keys))
    assert annotation_time_add(assignment=assignment, seconds=20, now=later + timedelta(minutes=2)) == 0  # not after submission
    annotation.refresh_from_db()
    assert annotation.seconds_spent == 15 + HEARTBEAT_MAX_SECONDS


def test_heartbeats_never_add_more_than_the_wall_clock_time_since_the_last_one(world, mine) -> None:  # type: ignore[no-untyped-def]
    """The reported attack: ten 30-second beats within 0.6 s. Only the first counts (a page's first beat may
    claim one heartbeat); the rest add the wall-clock time that really passed, i.e. nothing."""
    assignment, _ = mine
    start = timezone.now()
    added = [annotation_time_add(assignment=assignment, seconds=30, now=start + timedelta(seconds=0.06 * i))
             for i in range(10)]
    assert added == [30] + [0] * 9
    # A page that beats every 15 s, a little early or late, is credited what it claims, within a second (an
    # early beat is cut to the whole seconds that passed; the fraction carries over to the next beat).
    clock = start
    for gap in (15.0, 14.6, 15.3, 14.9, 15.2):
        clock += timedelta(seconds=gap)
        annotation_time_add(assignment=assignment, seconds=15, now=clock)
    annotation = Annotation.objects.get(assignment=assignment)
    assert 30 + 74 <= annotation.seconds_spent <= 30 + 75
    # After an idle hour a burst cannot claim the hour: one beat's worth, plus at most the carried slack.
    idle = clock + timedelta(hours=1)
    burst = [annotation_time_add(assignment=assignment, seconds=30, now=idle + timedelta(seconds=0.06 * i))
             for i in range(10)]
    assert burst[0] == 30 and sum(burst) <= 30 + HEARTBEAT_CARRY_SECONDS
    annotation.refresh_from_db()
    wall_clock = (idle + timedelta(seconds=0.6) - start).total_seconds()
    assert annotation.seconds_spent <= 30 + 75 + 30 + HEARTBEAT_CARRY_SECONDS < wall_clock


def test_the_heartbeat_view_cannot_inflate_active_time(world, mine, client) -> None:  # type: ignore[no-untyped-def]
    assignment, _ = mine
    client.force_login(world.expert)
    url = reverse("annotations:heartbeat", args=[assignment.public_id])
    for _ in range(10):
        assert client.post(url, {"seconds": 30}).status_code == 204
    # ten requests arrive within a second or two: 30 s for the first, at most a second or two after it
    assert Annotation.objects.get(assignment=assignment).seconds_spent <= 30 + 3


def test_the_database_enforces_one_annotation_per_assignment_and_scores_0_to_3(world, mine) -> None:  # type: ignore[no-untyped-def]
    assignment, keys = mine
    annotation = Annotation.objects.create(assignment=assignment)
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(assignment=assignment)
    with pytest.raises(IntegrityError), transaction.atomic():
        SubScore.objects.create(annotation=annotation, key=keys[0], score=4)
    SubScore.objects.create(annotation=annotation, key=keys[0], score=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        SubScore.objects.create(annotation=annotation, key=keys[0], score=1)


def test_public_ids_are_opaque_22_character_tokens(world) -> None:  # type: ignore[no-untyped-def]
    ids = list(Assignment.objects.values_list("public_id", flat=True))
    assert all(len(i) == 22 for i in ids) and len(set(ids)) == len(ids)
    assert not any(i.isdigit() for i in ids)
