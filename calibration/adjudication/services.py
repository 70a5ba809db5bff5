"""Writes for adjudication: record gold scores (never touching the experts' own scores).

A gold decision withdraws the item's remaining open assignments through the lifecycle service, so a late
submission is refused rather than stored.
"""
from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from accounts.models import User
from annotations.lifecycle import item_open_assignments_withdraw
from annotations.models import AdjudicationDecision, Assignment, CycleItem, GoldScore
from evaluations.models import RubricSubDimension

from .selectors import item_states, may_adjudicate


@transaction.atomic
def adjudication_record(
    *, item_id: int, adjudicator: User, scores: dict[str, int], reason: str, note: str = ""
) -> AdjudicationDecision:
    """Record the gold score of every sub-dimension of an item; a later decision supersedes this one."""
    item = CycleItem.objects.select_for_update().select_related("cycle", "response__test_case").get(pk=item_id)
    # Lock the item's assignments before reading its state: a submission in flight is either seen here or,
    # once this commits, refused (its assignment is withdrawn).
    list(Assignment.objects.filter(item_id=item.pk).select_for_update().order_by("pk").values_list("pk", flat=True))
    state = item_states(item_ids=[item.pk]).get(item.pk)
    if state is None or not may_adjudicate(user=adjudicator, state=state):
        raise PermissionDenied("only an adjudicator of the item's panel who did not rate it, or an admin, may decide it")
    if not state.needs_adjudication:
        raise ValidationError("this item does not need adjudication (its experts agree, or some have not finished)",
                              code="not_needed")
    keys = list(RubricSubDimension.objects.filter(
        dimension__rubric_id=item.cycle.rubric_id, dimension__key=item.response.test_case.dimension
    ).order_by("order").values_list("key", flat=True))
    errors: dict[str, list[str]] = {}
    for key in keys:
        value = scores.get(key)
        if value is None:
            errors.setdefault(key, []).append("a gold score 0–3 is required")
        elif not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 3:
            errors.setdefault(key, []).append("must be a whole number from 0 to 3")
    for key in sorted(set(scores) - set(keys)):
        errors.setdefault(key, []).append("is not a sub-dimension of this item's dimension")
    if reason not in AdjudicationDecision.Reason.values:
        errors.setdefault("reason", []).append("choose one of the listed reasons")
    if reason == AdjudicationDecision.Reason.OTHER and not note.strip():
        errors.setdefault("note", []).append("a note is required when the reason is 'other'")
    if errors:
        raise ValidationError(errors)
    previous = AdjudicationDecision.objects.select_for_update().filter(item=item, is_current=True).first()
    if previous is not None:
        previous.is_current = False
        previous.save(update_fields=["is_current"])
    decision = AdjudicationDecision.objects.create(
        item=item, adjudicator=adjudicator, reason=reason, note=note.strip(), supersedes=previous
    )
    GoldScore.objects.bulk_create(GoldScore(decision=decision, key=key, score=scores[key]) for key in keys)
    item_open_assignments_withdraw(item=item, reason=Assignment.WithdrawnReason.AFTER_ADJUDICATION, actor=adjudicator)
    return decision

