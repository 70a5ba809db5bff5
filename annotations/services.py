"""Writes on annotations: autosaved drafts, time spent, submission (locks), skip, reopen — all audited.

Every write locks the assignment row first (`select_for_update`), so two requests for one assignment
run one after the other on PostgreSQL; the unique constraint on Annotation.assignment is the backstop.
The experts' writes (draft, submit, skip, undo) then look up their idempotency key (annotations/receipts.py):
a retry of a write already stored is answered as the first time and not run again. Then the lifecycle is
asked (annotations/lifecycle.py): a withdrawn assignment, a closed cycle, an adjudicated item or an expert
no longer on the panel refuses every write here.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from access.policy import Action, allowed
from accounts.models import User
from evaluations.models import RubricSubDimension

from .lifecycle import CYCLE_CLOSED_MESSAGE, assignment_scoring_refusal
from .models import (
    AdjudicationDecision,
    Annotation,
    AnnotationEvent,
    Assignment,
    CalibrationCycle,
    SaveReceipt,
    SubScore,
)
from .receipts import idempotency_key_clean, receipt_replay, receipt_saved_at, receipt_store, save_fingerprint
from .signals import assignment_finished

HEARTBEAT_MAX_SECONDS = 30  # the page reports every 15 s; a larger claim in one heartbeat is capped
# Wall-clock time since the last accepted heartbeat that may still be claimed later (network jitter, the
# fraction of a second a whole-second claim leaves over); anything older is idle time nobody reported.
HEARTBEAT_CARRY_SECONDS = 5
HEARTBEAT_CARRY = timedelta(seconds=HEARTBEAT_CARRY_SECONDS)
RATIONALE_MAX_LENGTH = 10_000


@dataclass
class AnnotationInput:
    """What the expert entered: scores by sub-dimension key (missing = not scored yet), rationale, flag."""

    scores: dict[str, int] = field(default_factory=dict)
    rationale: str = ""
    flagged_broken: bool = False
    broken_note: str = ""


def sub_dimension_keys(*, assignment: Assignment) -> list[str]:
    """Keys of the sub-dimensions this assignment is scored on (its dimension in the cycle's rubric)."""
    return list(
        RubricSubDimension.objects.filter(
            dimension__rubric_id=assignment.cycle.rubric_id,
            dimension__key=assignment.item.response.test_case.dimension,
        ).order_by("order").values_list("key", flat=True)
    )


def annotation_completeness_errors(*, keys: list[str], data: AnnotationInput) -> dict[str, list[str]]:
    """Why a submission is not acceptable yet: unscored sub-dimensions, a missing rationale for 0 or 3."""
    errors: dict[str, list[str]] = {}
    missing = [k for k in keys if data.scores.get(k) is None]
    if missing:
        errors["scores"] = [f"Score every sub-dimension before submitting ({len(missing)} missing)."]
    if any(data.scores.get(k) in (0, 3) for k in keys) and not data.rationale.strip():
        errors["rationale"] = ["A rationale is required when any score is 0 or 3."]
    return errors


def _validate_values(*, keys: list[str], data: AnnotationInput) -> None:
    unknown = sorted(set(data.scores) - set(keys))
    if unknown:
        raise ValidationError(f"not a sub-dimension of this item: {', '.join(unknown)}", code="unknown_key")
    for key, score in data.scores.items():
        if score is not None and (not isinstance(score, int) or isinstance(score, bool) or not 0 <= score <= 3):
            raise ValidationError(f"{key}: scores are whole numbers from 0 to 3", code="invalid_score")
    if len(data.rationale) > RATIONALE_MAX_LENGTH:
        raise ValidationError("the rationale is too long", code="rationale_too_long")


def _lock(assignment: Assignment) -> Assignment:
    return (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("cycle", "item__response__test_case")
        .only("id", "public_id", "expert_id", "panel_id", "status", "cycle__rubric_id",
              "item__response", "item__response__test_case", "item__response__test_case__dimension")
        .get(pk=assignment.pk)
    )


def _current(assignment: Assignment) -> Annotation | None:
    return Annotation.objects.filter(assignment=assignment).first()


def _create(assignment: Assignment) -> Annotation:
    try:
        with transaction.atomic():
            return Annotation.objects.create(assignment=assignment)
    except IntegrityError:
        # Another request created it between our read and write (only possible without row locks).
        raise ValidationError("this item was just saved elsewhere; reload the page", code="conflict") from None


def _apply(annotation: Annotation, keys: list[str], data: AnnotationInput) -> dict[str, list]:
    """Write the entered values; return {field: [old, new]} for everything that changed."""
    changes: dict[str, list] = {}
    existing = {s.key: s for s in annotation.scores.all()}
    created: list[SubScore] = []
    for key in keys:
        old = existing[key].score if key in existing else None
        new = data.scores.get(key)
        if old == new:
            continue
        changes[f"score:{key}"] = [old, new]
        if new is None:
            existing[key].delete()
        elif key in existing:
            SubScore.objects.filter(pk=existing[key].pk).update(score=new)
        else:
            created.append(SubScore(annotation=annotation, key=key, score=new))
    SubScore.objects.bulk_create(created)  # one INSERT for a first save of several scores
    for attr in ("rationale", "flagged_broken", "broken_note"):
        new = getattr(data, attr)
        if attr == "broken_note":
            new = new[:500]
        old = getattr(annotation, attr)
        if old != new:
            changes[attr] = [old, new]
            setattr(annotation, attr, new)
    return changes


def _log(annotation: Annotation, actor: User, kind: str, changes: dict, note: str = "") -> None:
    AnnotationEvent.objects.create(annotation=annotation, actor=actor, kind=kind, changes=changes, note=note)


def _seconds_accrue(annotation: Annotation, seconds: int, now: datetime | None = None) -> int:
    """Add reported active seconds to the annotation; the caller holds the assignment lock.

    A claim is capped per report (HEARTBEAT_MAX_SECONDS) and by the wall-clock time since the last accepted
    one, so ten 30-second beats sent within a second add about one beat, not 300 s. The clock advances by
    what was accrued, so a report that arrives a little early loses nothing (its remainder carries over, up
    to HEARTBEAT_CARRY_SECONDS). Heartbeats, autosaves, submits and skips all report through here.
    """
    seconds = max(0, min(int(seconds), HEARTBEAT_MAX_SECONDS))
    if seconds == 0:
        return 0
    now = now or timezone.now()
    last = annotation.last_beat_at
    if last is not None:
        seconds = max(0, min(seconds, math.floor((now - last).total_seconds())))
        if seconds == 0:
            return 0
    # the first report of a page may claim one heartbeat's worth: the page was open before it
    clock = now if last is None else max(last + timedelta(seconds=seconds), now - HEARTBEAT_CARRY)
    Annotation.objects.filter(pk=annotation.pk).update(seconds_spent=F("seconds_spent") + seconds,
                                                       last_beat_at=clock)
    annotation.last_beat_at = clock
    return seconds


def _refuse_unless_scorable(assignment: Assignment) -> None:
    refusal = assignment_scoring_refusal(assignment=assignment)
    if refusal is not None:
        raise refusal


def _refuse_if_locked(annotation: Annotation | None) -> None:
    if annotation is not None and annotation.is_locked:
        raise ValidationError(
            "This item is already submitted. A panel lead can reopen it.", code="already_submitted"
        )


def _replayed(assignment: Assignment, *, actor: User, key: str, action: str, entries: dict) -> Annotation | None:
    """When this same write was already stored under `key`: the annotation, answering as that write did (its
    `updated_at` is the stored write's save time, not a later one; nothing is run or written again). Else None."""
    fingerprint = save_fingerprint(action=action, assignment=assignment, entries=entries)
    receipt = receipt_replay(actor=actor, key=key, fingerprint=fingerprint)
    if receipt is None:
        return None
    annotation = _current(assignment)
    assert annotation is not None  # every stored scoring write left an annotation, and annotations are not deleted
    annotation.updated_at = receipt_saved_at(receipt)
    return annotation


def _receipt(assignment: Assignment, annotation: Annotation, *, actor: User, key: str, action: str,
             entries: dict) -> None:
    """Store the receipt of the write just made, in its transaction: what the answer reports about it."""
    receipt_store(actor=actor, key=key, action=action, assignment=assignment,
                  fingerprint=save_fingerprint(action=action, assignment=assignment, entries=entries),
                  result={"status": annotation.status, "saved_at": annotation.updated_at.isoformat()},
                  prune=action in (SaveReceipt.Action.SUBMIT, SaveReceipt.Action.SKIP))


@transaction.atomic
def annotation_draft_save(*, assignment: Assignment, actor: User, data: AnnotationInput, seconds: int = 0,
                          idempotency_key: str = "") -> Annotation:
    """Autosave: store whatever is entered so far (partial scores allowed); refused once submitted.

    `seconds`: active time the page reports with the save, added under the same lock (one service call
    per autosave instead of a separate `annotation_time_add`). `idempotency_key`: see annotations/receipts.py
    (a replayed save adds no seconds: the retry's few seconds are not worth a second write)."""
    key = idempotency_key_clean(idempotency_key)
    assignment = _lock(assignment)
    entries = asdict(data)
    if (replayed := _replayed(assignment, actor=actor, key=key, action=SaveReceipt.Action.DRAFT,
                              entries=entries)) is not None:
        return replayed
    _refuse_unless_scorable(assignment)
    keys = sub_dimension_keys(assignment=assignment)
    _validate_values(keys=keys, data=data)
    annotation = _current(assignment)
    _refuse_if_locked(annotation)
    if annotation is None:
        annotation = _create(assignment)
    _seconds_accrue(annotation, seconds)
    changes = _apply(annotation, keys, data)
    if changes:
        # Written only while the annotation is still a draft: a stale autosave that reaches the database
        # after the submission (no row locks on SQLite) must not turn it back into a draft. Refusing here
        # rolls back the score changes `_apply` made in this transaction.
        annotation.updated_at = timezone.now()
        still_draft = Annotation.objects.filter(pk=annotation.pk, status=Annotation.Status.DRAFT).update(
            rationale=annotation.rationale, flagged_broken=annotation.flagged_broken,
            broken_note=annotation.broken_note, updated_at=annotation.updated_at,
        )
        if not still_draft:
            raise ValidationError("This item is already submitted. A panel lead can reopen it.",
                                  code="already_submitted")
        _log(annotation, actor, AnnotationEvent.Kind.DRAFT_SAVED, changes)
    if assignment.status == Assignment.Status.PENDING:
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DRAFT, updated_at=timezone.now())
    _receipt(assignment, annotation, actor=actor, key=key, action=SaveReceipt.Action.DRAFT, entries=entries)
    return annotation


@transaction.atomic
def annotation_submit(*, assignment: Assignment, actor: User, data: AnnotationInput, seconds: int = 0,
                      idempotency_key: str = "") -> Annotation:
    """Submit and lock: every sub-dimension scored 0–3, a rationale when any score is 0 or 3 (`seconds` and
    `idempotency_key` as for `annotation_draft_save`: a retried submission answers as submitted, not locked)."""
    key = idempotency_key_clean(idempotency_key)
    assignment = _lock(assignment)
    entries = asdict(data)
    if (replayed := _replayed(assignment, actor=actor, key=key, action=SaveReceipt.Action.SUBMIT,
                              entries=entries)) is not None:
        return replayed
    _refuse_unless_scorable(assignment)
    keys = sub_dimension_keys(assignment=assignment)
    _validate_values(keys=keys, data=data)
    annotation = _current(assignment)
    _refuse_if_locked(annotation)
    errors = annotation_completeness_errors(keys=keys, data=data)
    if errors:
        raise ValidationError(errors, code="incomplete")
    if annotation is None:
        annotation = _create(assignment)
    changes = _apply(annotation, keys, data)
    changes["status"] = [annotation.status, Annotation.Status.SUBMITTED]
    annotation.status = Annotation.Status.SUBMITTED
    annotation.skip_reason = ""
    annotation.submitted_at = timezone.now()
    annotation.save()
    _seconds_accrue(annotation, seconds)  # after save(), which writes the seconds it read before
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, updated_at=timezone.now())
    _log(annotation, actor, AnnotationEvent.Kind.SUBMITTED, changes)
    _announce_finished(assignment)
    _receipt(assignment, annotation, actor=actor, key=key, action=SaveReceipt.Action.SUBMIT, entries=entries)
    return annotation


@transaction.atomic
def annotation_skip(
    *, assignment: Assignment, actor: User, reason: str = Annotation.SkipReason.OUTSIDE_EXPERTISE,
    flagged_broken: bool = False, broken_note: str = "", seconds: int = 0, idempotency_key: str = "",
) -> Annotation:
    """"Outside my expertise": finish the assignment without scores (draft scores are discarded, audited).

    `seconds` and `idempotency_key` as for `annotation_draft_save`."""
    if reason not in Annotation.SkipReason.values:
        raise ValidationError("unknown skip reason", code="invalid_reason")
    key = idempotency_key_clean(idempotency_key)
    assignment = _lock(assignment)
    entries = {"reason": reason, "flagged_broken": flagged_broken, "broken_note": broken_note}
    if (replayed := _replayed(assignment, actor=actor, key=key, action=SaveReceipt.Action.SKIP,
                              entries=entries)) is not None:
        return replayed
    _refuse_unless_scorable(assignment)
    annotation = _current(assignment)
    _refuse_if_locked(annotation)
    if annotation is None:
        annotation = _create(assignment)
    changes: dict[str, list] = {f"score:{s.key}": [s.score, None] for s in annotation.scores.all()}
    annotation.scores.all().delete()
    for attr, new in (("flagged_broken", flagged_broken), ("broken_note", broken_note[:500])):
        if getattr(annotation, attr) != new:
            changes[attr] = [getattr(annotation, attr), new]
            setattr(annotation, attr, new)
    changes["status"] = [annotation.status, Annotation.Status.SKIPPED]
    annotation.status = Annotation.Status.SKIPPED
    annotation.skip_reason = reason
    annotation.submitted_at = timezone.now()
    annotation.save()
    _seconds_accrue(annotation, seconds)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SKIPPED, updated_at=timezone.now())
    _log(annotation, actor, AnnotationEvent.Kind.SKIPPED, changes)
    _announce_finished(assignment)
    _receipt(assignment, annotation, actor=actor, key=key, action=SaveReceipt.Action.SKIP, entries=entries)
    return annotation


def _announce_finished(assignment: Assignment) -> None:
    item_id = assignment.item_id
    transaction.on_commit(lambda: assignment_finished.send(sender=Assignment, item_id=item_id))


@transaction.atomic
def annotation_reopen(*, assignment: Assignment, actor: User, note: str = "") -> Annotation:
    """Unlock a submitted or skipped annotation so its expert can change it (panel lead or admin only)."""
    assignment = Assignment.objects.select_for_update(of=("self",)).select_related("panel").get(pk=assignment.pk)
    if not allowed(actor, Action.MANAGE_PANEL_WORK, assignment.panel):
        raise PermissionDenied("only the panel lead or an admin can reopen an annotation")
    annotation = _current(assignment)
    if annotation is None or not annotation.is_locked:
        raise ValidationError("only a submitted or skipped annotation can be reopened", code="not_locked")
    if CalibrationCycle.objects.filter(pk=assignment.cycle_id, status=CalibrationCycle.Status.CLOSED).exists():
        raise ValidationError(CYCLE_CLOSED_MESSAGE, code="cycle_closed")
    if AdjudicationDecision.objects.filter(item_id=assignment.item_id).exists():
        raise ValidationError(
            "this item has been adjudicated: its expert scores are kept unchanged as evidence", code="adjudicated"
        )
    changes = {"status": [annotation.status, Annotation.Status.DRAFT]}
    if annotation.skip_reason:
        changes["skip_reason"] = [annotation.skip_reason, ""]
    annotation.status = Annotation.Status.DRAFT
    annotation.skip_reason = ""
    annotation.submitted_at = None
    annotation.save()
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DRAFT, updated_at=timezone.now())
    _log(annotation, actor, AnnotationEvent.Kind.REOPENED, changes, note=note)
    return annotation


UNDO_EXPIRED_MESSAGE = "Too late to undo: the item is locked now. A panel lead can reopen it."


def undo_window_seconds() -> int:
    """How long after a submission (or skip) its expert may take it back: `SCORING_UNDO_SECONDS`, default 120."""
    return int(getattr(settings, "SCORING_UNDO_SECONDS", 120))


def _undo_refusal(*, assignment: Assignment, annotation: Annotation | None, actor: User,
                  now: datetime) -> ValidationError | None:
    """Why this finished annotation can no longer be taken back by `actor`, or None.

    The window is `undo_window_seconds()` after the submission and closes earlier once the expert has
    saved anything on another item (the audit trail says so): undo is for the item just finished.
    """
    if annotation is None or not annotation.is_locked or annotation.submitted_at is None:
        return ValidationError("Only a submitted or skipped item can be taken back.", code="not_locked")
    last = annotation.events.order_by("-at", "-id").values_list("kind", "actor_id").first()
    if last is None or last[0] not in (AnnotationEvent.Kind.SUBMITTED, AnnotationEvent.Kind.SKIPPED) \
            or last[1] != actor.pk:
        return ValidationError(UNDO_EXPIRED_MESSAGE, code="undo_expired")
    if now - annotation.submitted_at > timedelta(seconds=undo_window_seconds()):
        return ValidationError(UNDO_EXPIRED_MESSAGE, code="undo_expired")
    moved_on = AnnotationEvent.objects.filter(
        actor=actor, at__gt=annotation.submitted_at, annotation__assignment__expert_id=assignment.expert_id,
    ).exclude(annotation=annotation).exists()
    if moved_on:
        return ValidationError(UNDO_EXPIRED_MESSAGE, code="undo_expired")
    return None


def annotation_can_undo(*, assignment: Assignment, actor: User) -> bool:
    """Whether the Undo button should be offered for this assignment to `actor` now (a read; the service decides)."""
    if actor.pk != assignment.expert_id:
        return False
    annotation = _current(assignment)
    return (_undo_refusal(assignment=assignment, annotation=annotation, actor=actor, now=timezone.now()) is None
            and assignment_scoring_refusal(assignment=assignment) is None)


@transaction.atomic
def annotation_undo(*, assignment: Assignment, actor: User, idempotency_key: str = "") -> Annotation:
    """Take back one's own submission or skip within the undo window: the annotation becomes a draft again, audited.

    Refused (`undo_expired`, a 409 for the page) once the window has passed or the expert has moved on to
    another item; refused like every write when the item can no longer be scored (closed cycle, withdrawn,
    adjudicated, not on the panel). Only the assignment's own expert may undo (others: PermissionDenied).
    `idempotency_key` as for `annotation_draft_save`: a retried undo answers as taken back, not "not locked".
    """
    if actor.pk != assignment.expert_id:
        raise PermissionDenied("only the expert who submitted an item can take it back")
    key = idempotency_key_clean(idempotency_key)
    assignment = _lock(assignment)
    if (replayed := _replayed(assignment, actor=actor, key=key, action=SaveReceipt.Action.UNDO,
                              entries={})) is not None:
        return replayed
    _refuse_unless_scorable(assignment)
    annotation = _current(assignment)
    now = timezone.now()
    refusal = _undo_refusal(assignment=assignment, annotation=annotation, actor=actor, now=now)
    if refusal is not None:
        raise refusal
    assert annotation is not None
    changes: dict[str, list] = {"status": [annotation.status, Annotation.Status.DRAFT]}
    if annotation.skip_reason:
        changes["skip_reason"] = [annotation.skip_reason, ""]
    # Conditional on the status read above, so a concurrent reopen or undo cannot be applied twice.
    undone = Annotation.objects.filter(pk=annotation.pk, status=annotation.status).update(
        status=Annotation.Status.DRAFT, skip_reason="", submitted_at=None, updated_at=now)
    if not undone:
        raise ValidationError("This item changed meanwhile; reload the page.", code="conflict")
    annotation.refresh_from_db()
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DRAFT, updated_at=now)
    _log(annotation, actor, AnnotationEvent.Kind.UNDONE, changes)
    _receipt(assignment, annotation, actor=actor, key=key, action=SaveReceipt.Action.UNDO, entries={})
    return annotation


@transaction.atomic
def annotation_time_add(*, assignment: Assignment, seconds: int, now: datetime | None = None) -> int:
    """Add active seconds reported by the page; ignored once finished or no longer scorable.

    A claim is capped per heartbeat (HEARTBEAT_MAX_SECONDS) and by the wall-clock time since the last
    accepted one, so ten 30-second beats sent within a second add about one beat, not 300 s. The clock
    advances by what was accrued, so a beat that arrives a little early loses nothing (its remainder
    carries over, up to HEARTBEAT_CARRY_SECONDS). `now` is for tests.
    """
    seconds = max(0, min(int(seconds), HEARTBEAT_MAX_SECONDS))
    if seconds == 0:
        return 0
    now = now or timezone.now()
    assignment = _lock(assignment)
    if assignment_scoring_refusal(assignment=assignment) is not None:
        return 0
    annotation = _current(assignment)
    if annotation is None:
        annotation = _create(assignment)
        if assignment.status == Assignment.Status.PENDING:
            Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DRAFT)
    if annotation.is_locked:
        return 0
    return _seconds_accrue(annotation, seconds, now=now)
