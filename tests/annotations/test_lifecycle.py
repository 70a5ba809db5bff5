"""The lifecycle at the service level: every refused transition, on SQLite and PostgreSQL.

Closed cycle, post-gold submission, removed panel member, reassignment (and its refusals), reopening
with a reason — the rules of annotations/lifecycle.py that views, admin and commands all go through.
"""
from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotations.lifecycle import (
    assignment_reassign,
    cycle_close,
    cycle_reopen,
    item_open_assignments_withdraw,
    panel_member_remove,
    reassign_candidates,
)
from annotations.models import AdjudicationDecision, Annotation, Assignment, CalibrationCycle, CycleEvent
from annotations.selectors import assignment_next_open, expert_progress, expert_queue_page
from annotations.services import (
    AnnotationInput,
    annotation_draft_save,
    annotation_reopen,
    annotation_skip,
    annotation_submit,
    annotation_time_add,
    sub_dimension_keys,
)
from calibration.adjudication.selectors import item_states
from calibration.adjudication.services import adjudication_record
from calibration.cycles.selectors import cycle_assignment_completeness, cycle_progress
from tests.annotations.factories import OTHER_RATIONALE_MARKER, World, person, tradition

pytestmark = pytest.mark.django_db

W = Assignment.WithdrawnReason


def full(assignment: Assignment, value: int = 2, rationale: str = "") -> AnnotationInput:
    return AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), value), rationale=rationale)


def code_of(info: pytest.ExceptionInfo[ValidationError]) -> str | None:
    return info.value.code


def fresh(assignment: Assignment) -> Assignment:
    return Assignment.objects.get(pk=assignment.pk)


def catholic_item(world: World) -> tuple[int, dict[int, Assignment]]:
    """The first Catholic item of the expert and its three assignments by expert id."""
    first = Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("item_id").first()
    assert first is not None
    by_expert = {a.expert_id: a for a in Assignment.objects.filter(item_id=first.item_id)}
    assert len(by_expert) == 3
    return first.item_id, by_expert


# --- closed cycle ---------------------------------------------------------------------------------------


def test_a_closed_cycle_refuses_draft_submit_skip_and_time(world) -> None:  # type: ignore[no-untyped-def]
    mine = world.assignments(world.expert)
    annotation_draft_save(assignment=mine[0], actor=world.expert, data=AnnotationInput(rationale="before closing"))
    cycle_close(cycle=world.cycle, actor=world.admin, reason="end of the round")
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"

    for call in (
        lambda a: annotation_draft_save(assignment=a, actor=world.expert, data=AnnotationInput(rationale="late")),
        lambda a: annotation_submit(assignment=a, actor=world.expert, data=full(a)),
        lambda a: annotation_skip(assignment=a, actor=world.expert),
    ):
        for assignment in mine[:2]:
            with pytest.raises(ValidationError) as info:
                call(assignment)
            assert code_of(info) == "cycle_closed"
            assert "closed" in info.value.messages[0]
    assert annotation_time_add(assignment=mine[0], seconds=20) == 0
    annotation = Annotation.objects.get(assignment=mine[0])
    assert annotation.rationale == "before closing" and annotation.status == "draft" and annotation.seconds_spent == 0
    assert not Annotation.objects.filter(assignment=mine[1]).exists()
    assert fresh(mine[0]).status == "draft" and fresh(mine[1]).status == "pending"
    event = CycleEvent.objects.get(cycle=world.cycle)
    assert (event.kind, event.actor, event.reason) == ("closed", world.admin, "end of the round")


def test_a_closed_cycle_refuses_a_leads_reopen_of_an_annotation(world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    annotation_submit(assignment=assignment, actor=world.expert, data=full(assignment))
    cycle_close(cycle=world.cycle, actor=world.admin)
    with pytest.raises(ValidationError) as info:
        annotation_reopen(assignment=assignment, actor=world.lead, note="please look again")
    assert code_of(info) == "cycle_closed"
    assert fresh(assignment).status == "submitted"


def test_only_staff_close_and_reopen_and_reopening_needs_a_reason(world) -> None:  # type: ignore[no-untyped-def]
    for user in (world.expert, world.lead):
        with pytest.raises(PermissionDenied):
            cycle_close(cycle=world.cycle, actor=user)
    cycle_close(cycle=world.cycle, actor=world.admin)
    with pytest.raises(ValidationError) as info:
        cycle_close(cycle=world.cycle, actor=world.admin)
    assert code_of(info) == "already_closed"
    for user in (world.expert, world.lead):
        with pytest.raises(PermissionDenied):
            cycle_reopen(cycle=world.cycle, actor=user, reason="I want to")
    with pytest.raises(ValidationError) as info:
        cycle_reopen(cycle=world.cycle, actor=world.admin, reason="   ")
    assert code_of(info) == "reason_required"
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"

    cycle_reopen(cycle=world.cycle, actor=world.admin, reason="Two experts asked for one more week.")
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "open"
    with pytest.raises(ValidationError) as info:
        cycle_reopen(cycle=world.cycle, actor=world.admin, reason="again")
    assert code_of(info) == "not_closed"
    events = list(CycleEvent.objects.filter(cycle=world.cycle).values_list("kind", "actor", "reason"))
    assert events == [("closed", world.admin.pk, ""), ("reopened", world.admin.pk, "Two experts asked for one more week.")]
    # Scoring works again once reopened.
    assignment = world.assignments(world.expert)[0]
    annotation_submit(assignment=assignment, actor=world.expert, data=full(assignment))
    assert fresh(assignment).status == "submitted"


def test_the_database_requires_a_reason_on_a_reopen_event(world) -> None:  # type: ignore[no-untyped-def]
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        CycleEvent.objects.create(cycle=world.cycle, kind="reopened", reason="")


def test_the_next_item_skips_closed_cycles_and_the_queue_says_closed(world) -> None:  # type: ignore[no-untyped-def]
    assert assignment_next_open(expert=world.expert) is not None
    cycle_close(cycle=world.cycle, actor=world.admin)
    assert assignment_next_open(expert=world.expert) is None
    labels = {row.status_label for row in expert_queue_page(expert=world.expert, page=1)}
    assert labels == {"Not started · cycle closed"}


# --- gold decision ----------------------------------------------------------------------------------------


def decided_item(world: World) -> tuple[int, Assignment]:
    """Two experts disagree, the third has a draft; the cycle is closed and the lead records gold."""
    item_id, by_expert = catholic_item(world)
    late = by_expert[world.expert.pk]
    annotation_draft_save(assignment=late, actor=world.expert, data=AnnotationInput(rationale="my half-done draft"))
    for expert_id, value in ((world.other_expert.pk, 0), (next(k for k in by_expert if k not in
                             (world.expert.pk, world.other_expert.pk)), 3)):
        assignment = by_expert[expert_id]
        annotation_submit(assignment=assignment, actor=assignment.expert, data=full(assignment, value, "why"))
    cycle_close(cycle=world.cycle, actor=world.admin)
    keys = sub_dimension_keys(assignment=late)
    adjudication_record(item_id=item_id, adjudicator=world.lead, scores=dict.fromkeys(keys, 2), reason="rubric_ambiguity")
    return item_id, late


def test_a_gold_decision_withdraws_the_items_open_assignments(world) -> None:  # type: ignore[no-untyped-def]
    item_id, late = decided_item(world)
    late = fresh(late)
    assert (late.status, late.withdrawn_reason) == ("withdrawn", W.AFTER_ADJUDICATION) and late.withdrawn_at
    assert Annotation.objects.get(assignment=late).rationale == "my half-done draft"  # kept as a record
    assert Assignment.objects.filter(item_id=item_id, status="submitted").count() == 2  # untouched
    event = CycleEvent.objects.get(cycle=world.cycle, kind="withdrawn")
    assert event.actor == world.lead and event.details["reason"] == W.AFTER_ADJUDICATION
    assert event.details["assignment_ids"] == [late.pk]


def test_a_late_submit_after_the_gold_decision_is_refused_not_stored(world) -> None:  # type: ignore[no-untyped-def]
    _, late = decided_item(world)
    cycle_reopen(cycle=world.cycle, actor=world.admin, reason="one more week for the others")
    for call in (
        lambda: annotation_submit(assignment=late, actor=world.expert, data=full(late)),
        lambda: annotation_draft_save(assignment=late, actor=world.expert, data=AnnotationInput(rationale="x")),
        lambda: annotation_skip(assignment=late, actor=world.expert),
    ):
        with pytest.raises(ValidationError) as info:
            call()
        assert code_of(info) == "withdrawn"
        assert "adjudicated" in info.value.messages[0]
    annotation = Annotation.objects.get(assignment=late)
    assert annotation.status == "draft" and not annotation.scores.exists()
    assert annotation.rationale == "my half-done draft"
    assert fresh(late).status == "withdrawn"


def test_an_adjudicated_item_refuses_scores_even_without_the_withdrawal(world) -> None:  # type: ignore[no-untyped-def]
    """Defence in depth: a decision stored by other means (a data repair, a future import) still blocks."""
    item_id, by_expert = catholic_item(world)
    AdjudicationDecision.objects.create(item_id=item_id, adjudicator=world.lead, reason="other", note="imported")
    assignment = by_expert[world.expert.pk]
    with pytest.raises(ValidationError) as info:
        annotation_submit(assignment=assignment, actor=world.expert, data=full(assignment))
    assert code_of(info) == "adjudicated"
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_withdrawing_twice_changes_nothing(world) -> None:  # type: ignore[no-untyped-def]
    item_id, by_expert = catholic_item(world)
    item = by_expert[world.expert.pk].item
    assert item_open_assignments_withdraw(item=item, reason=W.AFTER_ADJUDICATION) == 3
    assert item_open_assignments_withdraw(item=item, reason=W.AFTER_ADJUDICATION) == 0
    assert CycleEvent.objects.filter(kind="withdrawn").count() == 1
    with pytest.raises(ValueError):
        item_open_assignments_withdraw(item=item, reason="bored")


# --- panel membership -------------------------------------------------------------------------------------


def test_removing_an_expert_withdraws_their_open_assignments_on_that_panel_only(world) -> None:  # type: ignore[no-untyped-def]
    catholic = list(Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("position"))
    neutral = list(Assignment.objects.filter(expert=world.expert).exclude(panel=world.catholic))
    assert len(catholic) >= 2 and neutral
    annotation_submit(assignment=catholic[0], actor=world.expert, data=full(catholic[0]))
    annotation_draft_save(assignment=catholic[1], actor=world.expert, data=AnnotationInput(rationale="draft"))
    with pytest.raises(PermissionDenied):
        panel_member_remove(panel=world.catholic, expert=world.expert, actor=world.lead)

    withdrawn = panel_member_remove(panel=world.catholic, expert=world.expert, actor=world.admin)

    assert withdrawn == len(catholic) - 1
    assert not world.catholic.members.filter(pk=world.expert.pk).exists()
    assert fresh(catholic[0]).status == "submitted"  # finished work stays evidence
    assert {(a.status, a.withdrawn_reason) for a in map(fresh, catholic[1:])} == {("withdrawn", W.REMOVED_FROM_PANEL)}
    assert {fresh(a).status for a in neutral} == {"pending"}  # still on the neutral panel
    with pytest.raises(ValidationError) as info:
        annotation_submit(assignment=catholic[1], actor=world.expert, data=full(catholic[1]))
    assert code_of(info) == "withdrawn" and "no longer a member" in info.value.messages[0]
    # Progress and the queue leave withdrawn assignments out.
    total = Assignment.objects.filter(expert=world.expert).count()
    assert expert_progress(expert=world.expert).total == total - withdrawn
    assert len(expert_queue_page(expert=world.expert, page=1)) == total - withdrawn
    assert assignment_next_open(expert=world.expert) in {a.public_id for a in neutral}


def test_an_expert_taken_off_the_panel_around_the_service_still_cannot_score(world) -> None:  # type: ignore[no-untyped-def]
    assignment = Assignment.objects.filter(expert=world.expert, panel=world.catholic).first()
    world.catholic.members.remove(world.expert)  # e.g. a shell session; the service was not used
    with pytest.raises(ValidationError) as info:
        annotation_draft_save(assignment=assignment, actor=world.expert, data=AnnotationInput(rationale="x"))
    assert code_of(info) == "not_member"


def test_a_removal_completes_an_item_for_adjudication(world) -> None:  # type: ignore[no-untyped-def]
    item_id, by_expert = catholic_item(world)
    for expert_id, value in ((world.other_expert.pk, 0), (world.expert.pk, 3)):
        annotation_submit(assignment=by_expert[expert_id], actor=by_expert[expert_id].expert,
                          data=full(by_expert[expert_id], value, "why"))
    assert not item_states(item_ids=[item_id])[item_id].complete
    third = next(a for k, a in by_expert.items() if k not in (world.expert.pk, world.other_expert.pk))
    panel_member_remove(panel=world.catholic, expert=third.expert, actor=world.admin)
    state = item_states(item_ids=[item_id])[item_id]
    assert state.complete and state.needs_adjudication
    assert third.expert_id in state.rater_ids  # a withdrawn rater still may not adjudicate the item


# --- reassignment -----------------------------------------------------------------------------------------


@pytest.fixture
def newcomer(world):  # type: ignore[no-untyped-def]
    user = person(tradition=tradition("catholic"), name="Nina Newcomer", email="nina@faithbench.test")
    world.catholic.members.add(user)
    return user


def test_a_lead_reassigns_an_open_assignment_to_a_fresh_one(world, newcomer) -> None:  # type: ignore[no-untyped-def]
    old = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).order_by("position").first()
    annotation_draft_save(assignment=old, actor=world.other_expert, data=AnnotationInput(
        scores={sub_dimension_keys(assignment=old)[0]: 3}, rationale=f"{OTHER_RATIONALE_MARKER} draft"))
    elsewhere = next(a.item for a in world.assignments(world.expert) if a.item_id != old.item_id)  # not old's item
    Assignment.objects.create(expert=newcomer, cycle=world.cycle, item=elsewhere, panel=world.catholic, position=7)
    assert newcomer in reassign_candidates(assignment=old)
    assert world.expert not in reassign_candidates(assignment=old)  # already has the item

    new = assignment_reassign(assignment=old, to_expert=newcomer, actor=world.lead)

    old = fresh(old)
    assert (old.status, old.withdrawn_reason) == ("withdrawn", W.REASSIGNED)
    assert Annotation.objects.get(assignment=old).rationale.startswith(OTHER_RATIONALE_MARKER)  # kept with the old one
    assert new.expert == newcomer and new.item_id == old.item_id and new.panel_id == old.panel_id
    assert new.status == "pending" and new.public_id != old.public_id and new.reassigned_from == old
    assert new.position == 8  # the end of the newcomer's queue in that cycle
    assert not Annotation.objects.filter(assignment=new).exists()  # nothing of the previous rater's work
    event = CycleEvent.objects.get(kind="reassigned")
    assert event.actor == world.lead and event.details["to_assignment_id"] == new.pk
    annotation_submit(assignment=new, actor=newcomer, data=full(new))
    assert fresh(new).status == "submitted"
    with pytest.raises(ValidationError) as info:
        annotation_submit(assignment=old, actor=world.other_expert, data=full(old))
    assert code_of(info) == "withdrawn"


def test_a_withdrawn_assignment_can_be_reassigned_by_staff(world, newcomer) -> None:  # type: ignore[no-untyped-def]
    panel_member_remove(panel=world.catholic, expert=world.expert, actor=world.admin)
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).first()
    new = assignment_reassign(assignment=old, to_expert=newcomer, actor=world.admin)
    assert fresh(old).withdrawn_reason == W.REMOVED_FROM_PANEL  # keeps why it was withdrawn
    assert new.reassigned_from_id == old.pk and new.status == "pending"


def test_reassignment_refusals(world, newcomer) -> None:  # type: ignore[no-untyped-def]
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("position").first()

    for actor in (world.expert, world.other_lead, world.other_expert):
        with pytest.raises(PermissionDenied):
            assignment_reassign(assignment=old, to_expert=newcomer, actor=actor)

    def refused(code: str, assignment: Assignment, to: object) -> None:
        with pytest.raises(ValidationError) as info:
            assignment_reassign(assignment=assignment, to_expert=to, actor=world.lead)  # type: ignore[arg-type]
        assert code_of(info) == code

    refused("not_member", old, world.other_panel_expert)  # another panel's expert
    refused("already_assigned", old, world.other_expert)  # has this item already
    outsider = person(tradition=tradition("catholic"))
    refused("not_member", old, outsider)
    inactive = person(tradition=tradition("catholic"))
    world.catholic.members.add(inactive)
    inactive.is_active = False
    inactive.save()
    refused("not_member", old, inactive)
    done = Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("position")[1]
    annotation_submit(assignment=done, actor=world.expert, data=full(done))
    refused("not_reassignable", done, newcomer)

    assignment_reassign(assignment=old, to_expert=newcomer, actor=world.lead)
    another = person(tradition=tradition("catholic"))
    world.catholic.members.add(another)
    refused("already_reassigned", old, another)

    decided = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).exclude(
        item_id=old.item_id).exclude(item_id=done.item_id).first()
    AdjudicationDecision.objects.create(item_id=decided.item_id, adjudicator=world.admin, reason="other", note="x")
    refused("adjudicated", decided, another)

    open_one = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic, status="pending").exclude(
        item_id=decided.item_id).first()
    cycle_close(cycle=world.cycle, actor=world.admin)
    refused("cycle_closed", open_one, another)
    assert Assignment.objects.filter(expert=another).count() == 0


# --- completeness -----------------------------------------------------------------------------------------


def test_withdrawn_assignments_are_counted_by_reason_apart_from_progress(world, newcomer) -> None:  # type: ignore[no-untyped-def]
    before = cycle_assignment_completeness(cycle=world.cycle)
    assert before["withdrawn"] == 0 and before["open"] == before["assignments"]
    catholic_count = Assignment.objects.filter(expert=world.expert, panel=world.catholic).count()
    panel_member_remove(panel=world.catholic, expert=world.expert, actor=world.admin)
    old = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).first()
    assignment_reassign(assignment=old, to_expert=newcomer, actor=world.lead)

    after = cycle_assignment_completeness(cycle=world.cycle)
    assert after["assignments"] == before["assignments"] + 1  # the new assignment; nothing deleted
    assert after["withdrawn"] == catholic_count + 1
    assert after["withdrawn_by_reason"] == {W.AFTER_ADJUDICATION: 0, W.REMOVED_FROM_PANEL: catholic_count,
                                            W.REASSIGNED: 1}
    panel = next(p for p in cycle_progress(cycle=world.cycle) if p.panel.label == world.catholic.name)
    assert panel.panel.withdrawn == catholic_count + 1
    row = next(r for r in panel.experts if "alice@faithbench.test" in r.label)
    assert (row.total, row.withdrawn) == (0, catholic_count)


def test_the_report_counts_withdrawn_assignments_by_reason(world) -> None:  # type: ignore[no-untyped-def]
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
    from evidence.models import SnapshotFile

    panel_member_remove(panel=world.catholic, expert=world.expert, actor=world.admin)
    snapshot = report_snapshot_compute(snapshot_id=report_snapshot_request(
        cycle=world.cycle, requested_by=world.admin, n_resamples=20).pk)
    assert snapshot.status == "ready", snapshot.error
    completeness = snapshot.payload["completeness"]
    exported = json.loads(bytes(SnapshotFile.objects.get(snapshot=snapshot, format="json").content))
    assert exported["completeness"] == completeness
    removed = Assignment.objects.filter(expert=world.expert, panel=world.catholic).count()
    assert completeness["withdrawn"] == completeness["withdrawn_by_reason"][W.REMOVED_FROM_PANEL] == removed
    assert completeness["assignments"] == Assignment.objects.filter(cycle=world.cycle).count()
    assert completeness["open"] + completeness["withdrawn"] == completeness["assignments"]
