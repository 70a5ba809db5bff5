"""The lifecycle under concurrency (PostgreSQL row locks): a close waits for a save in flight, a submission
racing the close is stored before it or refused after it, and one assignment is reassigned only once."""
from __future__ import annotations

import threading
import time

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from annotations.lifecycle import assignment_reassign, cycle_close, panel_member_remove
from annotations.models import Annotation, Assignment, CalibrationCycle, CycleEvent
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from tests.annotations.factories import person, tradition, world_build
from tests.concurrency import run_together

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_closing_waits_for_a_save_in_flight_and_refuses_the_next() -> None:
    world = world_build()
    assignment = world.assignments(world.expert)[0]
    locked, release, closed = threading.Event(), threading.Event(), threading.Event()

    def save_in_flight() -> None:  # what a scoring service does: hold the assignment row until it commits
        try:
            with transaction.atomic():
                Assignment.objects.select_for_update().get(pk=assignment.pk)
                locked.set()
                release.wait(timeout=10)
        finally:
            connection.close()

    def close() -> None:
        try:
            cycle_close(cycle=world.cycle, actor=world.admin)
            closed.set()
        finally:
            connection.close()

    holder = threading.Thread(target=save_in_flight)
    holder.start()
    assert locked.wait(timeout=10)
    closer = threading.Thread(target=close)
    closer.start()
    time.sleep(0.5)
    assert not closed.is_set(), "the close must wait for the save in flight"
    release.set()
    holder.join(timeout=10)
    closer.join(timeout=10)
    assert closed.is_set()
    with pytest.raises(ValidationError) as info:
        annotation_submit(assignment=assignment, actor=world.expert, data=AnnotationInput(
            scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), 2)))
    assert info.value.code == "cycle_closed"


def test_a_submission_racing_the_close_is_stored_before_it_or_refused() -> None:
    world = world_build()
    assignment = world.assignments(world.expert)[0]
    data = AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), 2))

    def submit() -> str:
        annotation_submit(assignment=assignment, actor=world.expert, data=data)
        return "stored"

    def close() -> str:
        cycle_close(cycle=world.cycle, actor=world.admin)
        return "closed"

    stored, closed = run_together(submit, close)
    assert closed == "closed" and stored in ("stored", "refused:cycle_closed"), (stored, closed)
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"
    event = CycleEvent.objects.get(cycle=world.cycle, kind="closed")
    annotation = Annotation.objects.filter(assignment=assignment).first()
    if stored == "stored":
        assert annotation is not None and annotation.submitted_at is not None
        assert annotation.submitted_at <= event.at  # it landed before the close took effect
    else:
        assert annotation is None


def test_one_assignment_is_reassigned_once_however_many_leads_click() -> None:
    world = world_build()
    first, second = (person(tradition=tradition("catholic")) for _ in range(2))
    world.catholic.members.add(first, second)
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).first()

    outcomes = run_together(
        lambda: assignment_reassign(assignment=old, to_expert=first, actor=world.lead).public_id,
        lambda: assignment_reassign(assignment=old, to_expert=second, actor=world.admin).public_id,
    )

    assert sorted(o.startswith("refused:already_reassigned") for o in outcomes) == [False, True], outcomes
    assert Assignment.objects.filter(reassigned_from=old).count() == 1
    assert Assignment.objects.get(pk=old.pk).withdrawn_reason == "reassigned"
    assert CycleEvent.objects.filter(kind="reassigned").count() == 1


def test_a_reassignment_racing_the_new_experts_removal_leaves_no_open_work_off_the_panel() -> None:
    world = world_build()
    leaving = person(tradition=tradition("catholic"))
    world.catholic.members.add(leaving)
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).first()

    def reassign() -> str:
        return assignment_reassign(assignment=old, to_expert=leaving, actor=world.lead).public_id

    def remove() -> str:
        return f"removed:{panel_member_remove(panel=world.catholic, expert=leaving, actor=world.admin)}"

    reassigned, removed = run_together(reassign, remove)
    assert not reassigned.startswith("error") and removed.startswith("removed:"), (reassigned, removed)
    assert not world.catholic.members.filter(pk=leaving.pk).exists()
    assert not Assignment.objects.open().filter(expert=leaving, panel=world.catholic).exists()
    if not reassigned.startswith("refused"):  # it ran first: the removal withdrew the new assignment
        assert Assignment.objects.get(public_id=reassigned).withdrawn_reason == "removed_from_panel"
    else:
        assert reassigned == "refused:not_member"
