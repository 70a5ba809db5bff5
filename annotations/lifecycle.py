"""One lifecycle for cycles and assignments, enforced here for every entry point (views, API, admin, commands).

* A closed cycle refuses drafts, submissions and skips (`cycle_closed`). Closing and reopening are staff
  actions written to the cycle's audit trail (`CycleEvent`); reopening needs a reason.
* When an item gets its gold decision, its open assignments are withdrawn ("withdrawn after adjudication");
  a late submission is refused (`withdrawn`, or `adjudicated` if the item was decided by other means),
  never silently stored.
* Removing an expert from a panel withdraws their open assignments on that panel's items.
* A panel's lead (or staff) reassigns an open or withdrawn assignment to another member of the same panel:
  a fresh assignment with a new public id at the end of the new expert's queue. Nothing of the previous
  rater's work is attached to it, so blinding holds; `reassigned_from` is for the audit only.

Refusals are `ValidationError`s whose code is in `REFUSAL_CODES` (views answer 409 with the message), or
`PermissionDenied`. Withdrawn assignments and their drafts are kept, and counted by reason.

Lock order, everywhere: panel or cycle row, then item row, then assignment rows in primary-key order. The
scoring services lock one assignment row and then read the facts below, so a close, a gold decision or a
removal either waits for a save in flight or is seen by it.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, OuterRef, QuerySet
from django.urls import reverse
from django.utils import timezone

from access.policy import Action, allowed
from accounts.models import ExpertProfile, Notification, User
from accounts.notifications import notify
from evaluations.domain import language_name, scores_language
from evaluations.models import TestCase

from .models import AdjudicationDecision, Assignment, CalibrationCycle, CycleEvent, CycleItem, Panel
from .models.scoring import AssignmentQuerySet

REFUSAL_CODES = frozenset({"cycle_closed", "withdrawn", "adjudicated", "not_member"})

WITHDRAWN_MESSAGES: dict[str, str] = {
    Assignment.WithdrawnReason.AFTER_ADJUDICATION: (
        "This item was withdrawn from your queue: it has been adjudicated, so a late score is not stored."
    ),
    Assignment.WithdrawnReason.REMOVED_FROM_PANEL: (
        "This item was withdrawn from your queue: you are no longer a member of its panel."
    ),
    Assignment.WithdrawnReason.REASSIGNED: "This item was withdrawn from your queue by your panel lead.",
}
CYCLE_CLOSED_MESSAGE = "This calibration cycle is closed: scores can no longer be saved, submitted or skipped."


@dataclass(frozen=True)
class ScoringFacts:
    """What decides whether an assignment may be scored right now, read in one query."""

    status: str
    withdrawn_reason: str
    cycle_closed: bool
    adjudicated: bool
    member: bool


def assignment_scoring_facts(*, assignment_id: int) -> ScoringFacts:
    """The assignment's status, its cycle's status, whether its item has a gold decision and its expert is still on the panel."""
    membership = Panel.members.through.objects.filter(panel_id=OuterRef("panel_id"), user_id=OuterRef("expert_id"))
    row = (
        Assignment.objects.filter(pk=assignment_id)
        .annotate(adjudicated=Exists(AdjudicationDecision.objects.filter(item_id=OuterRef("item_id"))),
                  member=Exists(membership))
        .values_list("status", "withdrawn_reason", "cycle__status", "adjudicated", "member", "retest_of_id")
        .get()
    )
    status, reason, cycle_status, adjudicated, member, retest_of = row
    # A re-served item measures the expert against themselves and never counts, so its gold decision does not stop
    # it (and the page must look like any other: the expert is not told it is a re-served item).
    adjudicated = adjudicated and retest_of is None
    return ScoringFacts(status, reason, cycle_status == CalibrationCycle.Status.CLOSED, adjudicated, member)


def scoring_refusal(facts: ScoringFacts) -> ValidationError | None:
    """Why an assignment in this state cannot be scored (drafted, submitted, skipped), or None."""
    if facts.status == Assignment.Status.WITHDRAWN:
        message = WITHDRAWN_MESSAGES.get(facts.withdrawn_reason, "This item was withdrawn from your queue.")
        return ValidationError(message, code="withdrawn")
    if facts.cycle_closed:
        return ValidationError(CYCLE_CLOSED_MESSAGE, code="cycle_closed")
    if facts.adjudicated:
        return ValidationError("This item has been adjudicated: a late score is not stored.", code="adjudicated")
    if not facts.member:
        return ValidationError("You are no longer a member of this item's panel.", code="not_member")
    return None


def assignment_scoring_refusal(*, assignment: Assignment) -> ValidationError | None:
    """Why this assignment cannot be scored now (withdrawn, closed cycle, adjudicated item, expert left the panel), or None."""
    return scoring_refusal(assignment_scoring_facts(assignment_id=assignment.pk))


def _event(*, cycle_id: int, actor: User | None, kind: str, reason: str = "", details: dict | None = None) -> None:
    CycleEvent.objects.create(cycle_id=cycle_id, actor=actor, kind=kind, reason=reason, details=details or {})


def _withdraw(open_assignments: AssignmentQuerySet, *, reason: str, actor: User | None, details: dict) -> int:
    """Lock the open assignments (in key order), withdraw them, and record one event per cycle."""
    if reason not in Assignment.WithdrawnReason.values:
        raise ValueError(f"unknown withdrawal reason {reason!r}")
    rows = list(open_assignments.open().select_for_update(of=("self",)).order_by("pk").values_list("pk", "cycle_id"))
    if not rows:
        return 0
    now = timezone.now()
    Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        status=Assignment.Status.WITHDRAWN, withdrawn_reason=reason, withdrawn_at=now, updated_at=now)
    by_cycle: dict[int, list[int]] = {}
    for pk, cycle_id in rows:
        by_cycle.setdefault(cycle_id, []).append(pk)
    for cycle_id, ids in by_cycle.items():
        _event(cycle_id=cycle_id, actor=actor, kind=CycleEvent.Kind.WITHDRAWN,
               details={"reason": reason, "assignment_ids": ids, **details})
    return len(rows)


@transaction.atomic
def cycle_close(*, cycle: CalibrationCycle, actor: User, reason: str = "") -> CalibrationCycle:
    """Close a cycle for scoring (staff only); saves already in flight finish first, later ones are refused."""
    if not allowed(actor, Action.MANAGE_CALIBRATION):
        raise PermissionDenied("only staff can close a calibration cycle")
    locked = CalibrationCycle.objects.select_for_update().get(pk=cycle.pk)
    if locked.status == CalibrationCycle.Status.CLOSED:
        raise ValidationError(f"{locked} is already closed.", code="already_closed")
    locked.status = CalibrationCycle.Status.CLOSED
    locked.save(update_fields=["status"])
    # Wait for scoring transactions that hold an assignment lock: they began before the close and may finish.
    list(Assignment.objects.open().filter(cycle=locked).select_for_update().order_by("pk").values_list("pk", flat=True))
    _event(cycle_id=locked.pk, actor=actor, kind=CycleEvent.Kind.CLOSED, reason=reason.strip())
    cycle.status = locked.status
    return locked


@transaction.atomic
def cycle_reopen(*, cycle: CalibrationCycle, actor: User, reason: str) -> CalibrationCycle:
    """Reopen a closed cycle (staff only, with a reason for the audit trail); withdrawn assignments stay withdrawn."""
    if not allowed(actor, Action.MANAGE_CALIBRATION):
        raise PermissionDenied("only staff can reopen a calibration cycle")
    reason = reason.strip()
    if not reason:
        raise ValidationError("Give a reason for reopening the cycle; it is written to the audit trail.",
                              code="reason_required")
    locked = CalibrationCycle.objects.select_for_update().get(pk=cycle.pk)
    if locked.status != CalibrationCycle.Status.CLOSED:
        raise ValidationError(f"{locked} is not closed.", code="not_closed")
    locked.status = CalibrationCycle.Status.OPEN
    locked.save(update_fields=["status"])
    _event(cycle_id=locked.pk, actor=actor, kind=CycleEvent.Kind.REOPENED, reason=reason)
    cycle.status = locked.status
    return locked


@transaction.atomic
def item_open_assignments_withdraw(*, item: CycleItem, reason: str, actor: User | None = None) -> int:
    """Withdraw every open first assignment of an item (e.g. after its gold decision); returns how many.
    Re-served (test–retest) assignments stay: they never count, and a withdrawal would tell the expert something."""
    return _withdraw(Assignment.objects.counted().filter(item_id=item.pk), reason=reason, actor=actor,
                     details={"item_id": item.pk})


@transaction.atomic
def panel_member_remove(*, panel: Panel, expert: User, actor: User) -> int:
    """Take an expert off a panel (staff only) and withdraw their open assignments on its items; returns how many."""
    if not allowed(actor, Action.MANAGE_CALIBRATION):
        raise PermissionDenied("only staff can change a panel's members")
    locked = Panel.objects.select_for_update().get(pk=panel.pk)
    locked.members.remove(expert)
    return _withdraw(Assignment.objects.filter(panel=locked, expert=expert),
                     reason=Assignment.WithdrawnReason.REMOVED_FROM_PANEL, actor=actor,
                     details={"panel_id": locked.pk, "expert_id": expert.pk})


def reassign_candidates(*, assignment: Assignment) -> QuerySet[User]:
    """Members of the assignment's panel who could take it: active and never assigned this item."""
    already = Assignment.objects.filter(item_id=assignment.item_id, expert_id=OuterRef("pk"))
    return (User.objects.filter(panels__id=assignment.panel_id, is_active=True)
            .exclude(Exists(already)).order_by("email"))


@transaction.atomic
def assignment_reassign(*, assignment: Assignment, to_expert: User, actor: User) -> Assignment:
    """Give an open or withdrawn assignment to another member of its panel (its lead or staff); the old one is withdrawn."""
    current = Assignment.objects.select_related("panel").get(pk=assignment.pk)
    if not allowed(actor, Action.MANAGE_PANEL_WORK, current.panel):
        raise PermissionDenied("only the panel's lead or staff can reassign its assignments")
    Panel.objects.select_for_update().get(pk=current.panel_id)
    item = CycleItem.objects.select_for_update().get(pk=current.item_id)
    old = Assignment.objects.select_for_update(of=("self",)).select_related("cycle").get(pk=assignment.pk)
    if old.retest_of_id is not None:
        raise ValidationError("A re-served (test–retest) assignment belongs to its expert and cannot be reassigned.",
                              code="not_reassignable")
    if old.status not in (Assignment.Status.PENDING, Assignment.Status.DRAFT, Assignment.Status.WITHDRAWN):
        raise ValidationError("Only an open or withdrawn assignment can be reassigned; this one is finished.",
                              code="not_reassignable")
    if old.cycle.status == CalibrationCycle.Status.CLOSED:
        raise ValidationError(CYCLE_CLOSED_MESSAGE, code="cycle_closed")
    if AdjudicationDecision.objects.filter(item=item).exists():
        raise ValidationError("This item has been adjudicated: it needs no further scores.", code="adjudicated")
    if Assignment.objects.filter(reassigned_from=old).exists():
        raise ValidationError("This assignment has already been reassigned.", code="already_reassigned")
    if not (to_expert.is_active and Panel.members.through.objects.filter(panel_id=old.panel_id,
                                                                         user_id=to_expert.pk).exists()):
        raise ValidationError(f"{to_expert} is not an active member of this panel.", code="not_member")
    if Assignment.objects.filter(item=item, expert=to_expert).exists():
        raise ValidationError(f"{to_expert} already has (or had) this item.", code="already_assigned")
    language = TestCase.objects.filter(responses__cycle_items=item).values_list("language", flat=True).first() or "en"
    profile = ExpertProfile.objects.filter(user=to_expert).first()
    if not scores_language(profile.scores_in if profile else ["en"], language):
        raise ValidationError(f"{to_expert} does not score cases in {language_name(language)} ({language}): "
                              "add the language to their scoring languages first.", code="language")
    top = Assignment.objects.filter(expert=to_expert, cycle_id=old.cycle_id).aggregate(top=Max("position"))["top"]
    try:
        with transaction.atomic():
            new = Assignment.objects.create(expert=to_expert, cycle_id=old.cycle_id, item=item, panel_id=old.panel_id,
                                            position=(top or 0) + 1, reassigned_from=old)
    except IntegrityError:
        raise ValidationError(f"{to_expert} already has this item.", code="already_assigned") from None
    if old.is_open:
        _withdraw(Assignment.objects.filter(pk=old.pk), reason=Assignment.WithdrawnReason.REASSIGNED, actor=actor,
                  details={"reassigned_to": new.pk})
    _event(cycle_id=old.cycle_id, actor=actor, kind=CycleEvent.Kind.REASSIGNED,
           details={"from_assignment_id": old.pk, "to_assignment_id": new.pk, "from_status": old.status,
                    "from_expert_id": old.expert_id, "to_expert_id": to_expert.pk})
    notify(users=[to_expert], kind=Notification.Kind.ASSIGNMENTS, text=f"A new item to score in “{old.cycle.name}”.",
           link=reverse("annotations:queue"), key=f"assignments:{old.cycle_id}")
    return new
