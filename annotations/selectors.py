"""Reads for the scoring pages. Everything an expert sees is built here as plain, blinded data.

Blinding is enforced by construction: views and templates receive the dataclasses below, never ORM
objects, so no template can reach a response's model, a judge result or another expert's annotation.
The querysets never join the evaluated model either: only `response.text` and the test case are read.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from django.db.models import Case, Count, Exists, OuterRef, Q, QuerySet, When
from django.http import Http404
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from access.policy import panels_led
from accounts.models import User
from evaluations.methodology import SCALE, ScaleLevel
from evaluations.models import Dimension, RubricSubDimension

from .lifecycle import assignment_scoring_refusal
from .models import AdjudicationDecision, Annotation, AnnotationEvent, Assignment, CalibrationCycle, Panel
from .rendering import markdown_to_safe_html

QUEUE_PAGE_SIZE = 50
DONE = [Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED]

# The only columns of the joined rows that the scoring pages read (no model, no provider, no run label).
_ITEM_FIELDS = (
    "id", "public_id", "expert_id", "cycle_id", "item_id", "panel_id", "position", "status", "withdrawn_reason",
    "cycle__rubric_id", "cycle__show_reference_answers", "cycle__status",
    "item__response", "item__response__test_case", "item__response__test_case__tradition",
    "item__response__text",
    "item__response__test_case__prompt", "item__response__test_case__dimension",
    "item__response__test_case__reference_answer",
    "item__response__test_case__tradition__name",
)


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


@dataclass(frozen=True)
class QueueRow:
    public_id: str
    number: int
    dimension: str
    tradition: str
    status: str
    status_label: str


@dataclass(frozen=True)
class SubDimensionView:
    key: str
    name: str
    description: str
    score: int | None


@dataclass(frozen=True)
class ItemView:
    """What the scoring page shows for one assignment — blinded by construction."""

    public_id: str
    status: str
    status_label: str
    dimension: str
    dimension_description: str
    tradition: str
    prompt_html: SafeString
    response_html: SafeString
    reference_html: SafeString | None
    sub_dimensions: list[SubDimensionView]
    scale: tuple[ScaleLevel, ...]
    rationale: str
    flagged_broken: bool
    broken_note: str
    is_locked: bool
    skip_label: str
    reopen_message: str = ""  # the adjudicator's message when the annotation was reopened (no name shown)
    unavailable_message: str = ""  # why an unfinished item cannot be scored: closed cycle, withdrawn, …
    saved_at: datetime | None = None  # when the expert's entries were last written (None: never)

    @property
    def rationale_required(self) -> bool:
        return any(s.score in (0, 3) for s in self.sub_dimensions)

    @property
    def complete(self) -> bool:
        return all(s.score is not None for s in self.sub_dimensions)


def expert_progress(*, expert: object) -> Progress:
    """Done (submitted or skipped) and total assignments of an expert, withdrawn ones left out: one query."""
    row = Assignment.objects.for_expert(expert).active().aggregate(
        total=Count("id"), done=Count("id", filter=Q(status__in=DONE)))
    return Progress(done=row["done"], total=row["total"])


def expert_queue_page(*, expert: object, page: int) -> list[QueueRow]:
    """One page of the expert's queue, in their shuffled order (one query, whatever the queue length).

    Withdrawn assignments are left out; unfinished items of a closed cycle say so.
    """
    start = (max(page, 1) - 1) * QUEUE_PAGE_SIZE
    rows = (
        Assignment.objects.for_expert(expert).active().in_queue_order()
        .values_list("public_id", "status", "item__response__test_case__dimension",
                     "item__response__test_case__tradition__name", "cycle__status")[start : start + QUEUE_PAGE_SIZE]
    )
    labels = dict(Assignment.Status.choices)
    dimensions = dict(Dimension.choices)

    def label(status: str, cycle_status: str) -> str:
        closed = cycle_status == CalibrationCycle.Status.CLOSED and status not in DONE
        return f"{labels[status]} · cycle closed" if closed else labels[status]

    return [
        QueueRow(public_id, start + index + 1, dimensions.get(dim, dim), tradition or gettext("Tradition-neutral"),
                 status, label(status, cycle_status))
        for index, (public_id, status, dim, tradition, cycle_status) in enumerate(rows)
    ]


def assignment_next_open(*, expert: object) -> str | None:
    """Public id of the first unfinished assignment of an open cycle, in queue order: where the expert left off."""
    return (
        Assignment.objects.for_expert(expert).open().filter(cycle__status=CalibrationCycle.Status.OPEN)
        .in_queue_order().values_list("public_id", flat=True).first()
    )


def assignment_for_expert(*, expert: object, public_id: str) -> Assignment:
    """The expert's own assignment, or 404 — the same answer whether it belongs to someone else or not at all.

    A withdrawn assignment is still found, so that its page and late saves can say why it is not scorable.
    """
    assignment = (
        Assignment.objects.for_expert(expert).filter(public_id=public_id)
        .select_related("cycle", "item__response__test_case__tradition").only(*_ITEM_FIELDS).first()
    )
    if assignment is None:
        raise Http404("No such item in your queue.")
    return assignment


def sub_dimensions_for(*, assignment: Assignment) -> list[RubricSubDimension]:
    """The rubric sub-dimensions of the assignment's dimension, in the cycle's rubric version."""
    return list(
        RubricSubDimension.objects.filter(
            dimension__rubric_id=assignment.cycle.rubric_id,
            dimension__key=assignment.item.response.test_case.dimension,
        ).select_related("dimension").order_by("order")
    )


def annotation_of(*, assignment: Assignment) -> Annotation | None:
    """The assignment's annotation with its scores prefetched (this expert's own, never anyone else's)."""
    return Annotation.objects.filter(assignment=assignment).prefetch_related("scores").first()


class EnteredValues(TypedDict):
    """What an expert entered on the scoring form, shown again next to its errors (values as the fields clean them;
    a score that is not valid is left out, another value that is not valid comes back as sent)."""

    scores: dict[str, int]
    rationale: str
    flagged_broken: bool
    broken_note: str


def item_view(
    *,
    assignment: Assignment,
    annotation: Annotation | None = None,
    overrides: EnteredValues | None = None,
) -> ItemView:
    """Build the blinded item; `overrides` re-displays what the expert typed when validation failed."""
    if annotation is None:
        annotation = annotation_of(assignment=assignment)
    subs = sub_dimensions_for(assignment=assignment)
    saved = {s.key: s.score for s in annotation.scores.all()} if annotation else {}
    scores = overrides["scores"] if overrides else saved
    case = assignment.item.response.test_case
    dimension = subs[0].dimension if subs else None
    reference = None
    if assignment.cycle.show_reference_answers and case.reference_answer:
        reference = markdown_to_safe_html(case.reference_answer)
    reopen_message = ""
    if annotation is not None and annotation.status == Annotation.Status.DRAFT:
        reopen_message = (annotation.events.filter(kind=AnnotationEvent.Kind.REOPENED)
                          .order_by("-at", "-id").values_list("note", flat=True).first() or "")
    skip_label = ""
    if annotation and annotation.status == Annotation.Status.SKIPPED:
        skip_label = dict(Annotation.SkipReason.choices).get(annotation.skip_reason, "")
    refusal = None if assignment.status in DONE else assignment_scoring_refusal(assignment=assignment)
    return ItemView(
        public_id=assignment.public_id,
        status=assignment.status,
        status_label=dict(Assignment.Status.choices)[assignment.status],
        dimension=dimension.name if dimension else dict(Dimension.choices).get(case.dimension, case.dimension),
        dimension_description=dimension.description if dimension else "",
        tradition=case.tradition.name if case.tradition else "",
        prompt_html=markdown_to_safe_html(case.prompt),
        response_html=markdown_to_safe_html(assignment.item.response.text),
        reference_html=reference,
        sub_dimensions=[SubDimensionView(s.key, s.name, s.description, scores.get(s.key)) for s in subs],
        scale=SCALE,
        rationale=overrides["rationale"] if overrides else (annotation.rationale if annotation else ""),
        flagged_broken=overrides["flagged_broken"] if overrides else bool(annotation and annotation.flagged_broken),
        broken_note=overrides["broken_note"] if overrides else (annotation.broken_note if annotation else ""),
        is_locked=bool(annotation and annotation.is_locked) or refusal is not None,
        skip_label=skip_label,
        reopen_message=reopen_message,
        unavailable_message=" ".join(refusal.messages) if refusal is not None else "",
        saved_at=annotation.updated_at if annotation else None,
    )


@dataclass(frozen=True)
class LeadRow:
    public_id: str
    panel: str
    expert: str
    status: str
    status_label: str
    submitted_at: object


def lead_reopenable_page(*, user: User, page: int, per_page: int = 50) -> list[LeadRow]:
    """Finished assignments a panel lead (or an admin: all) may reopen, newest first."""
    qs = Assignment.objects.counted().filter(status__in=DONE)  # re-served items are not adjudicated or reopened
    panels = panels_led(user)
    if panels is not None:
        qs = qs.filter(panel_id__in=panels)
    start = (max(page, 1) - 1) * per_page
    rows = qs.order_by("-updated_at", "-id").values_list(
        "public_id", "panel__name", "expert__email", "status", "updated_at"
    )[start : start + per_page]
    labels = dict(Assignment.Status.choices)
    return [LeadRow(pid, panel, email, status, labels[status], at) for pid, panel, email, status, at in rows]


@dataclass(frozen=True)
class ReassignRow:
    public_id: str
    cycle: str
    panel: str
    expert: str
    status: str
    status_label: str


def reassignable_assignments(*, user: User) -> QuerySet[Assignment]:
    """Open or withdrawn assignments of open cycles that a lead (their panels) or staff (all) may reassign.

    Left out: items with a gold decision, and assignments already handed to someone else.
    """
    qs = Assignment.objects.counted().filter(  # a re-served item belongs to its expert
        Q(status__in=[Assignment.Status.PENDING, Assignment.Status.DRAFT])
        | Q(status=Assignment.Status.WITHDRAWN) & ~Q(withdrawn_reason=Assignment.WithdrawnReason.AFTER_ADJUDICATION),
        cycle__status=CalibrationCycle.Status.OPEN,
    ).exclude(Exists(AdjudicationDecision.objects.filter(item_id=OuterRef("item_id")))).exclude(
        Exists(Assignment.objects.filter(reassigned_from=OuterRef("pk"))))
    panels = panels_led(user)
    if panels is not None:
        qs = qs.filter(panel_id__in=panels)
    return qs


def lead_reassignable_page(*, user: User, page: int, per_page: int = 50) -> list[ReassignRow]:
    """One page of what `user` may reassign: withdrawn ones first, then by cycle, panel and expert."""
    start = (max(page, 1) - 1) * per_page
    rows = reassignable_assignments(user=user).order_by(
        Case(When(status=Assignment.Status.WITHDRAWN, then=0), default=1), "cycle_id", "panel__name", "expert__email", "position", "id",
    ).values_list("public_id", "cycle__name", "panel__name", "expert__email", "status", "withdrawn_reason")[
        start : start + per_page]
    labels = dict(Assignment.Status.choices)
    reasons = dict(Assignment.WithdrawnReason.choices)
    return [ReassignRow(pid, cycle, panel, email, status, f"{labels[status]}: {reasons[reason].lower()}"
                        if reason else labels[status])
            for pid, cycle, panel, email, status, reason in rows]


def assignment_with_panel(*, public_id: str, item_id: int | None = None) -> Assignment | None:
    """The assignment with this public id and its panel (one query), optionally only if it belongs to `item_id`."""
    found = Assignment.objects.select_related("panel").filter(public_id=public_id)
    if item_id is not None:
        found = found.filter(item_id=item_id)
    return found.first()


def cycle_by_ref(*, ref: str) -> CalibrationCycle | None:
    """The calibration cycle whose id (digits) or name is `ref`, or None; an id is tried before a name."""
    found = CalibrationCycle.objects.filter(pk=int(ref)).first() if ref.isascii() and ref.isdigit() else None
    return found or CalibrationCycle.objects.filter(name=ref).first()


def cycle_with_rubric(*, pk: int) -> CalibrationCycle:
    """The calibration cycle with its rubric (one query); 404 when there is none."""
    found = CalibrationCycle.objects.select_related("rubric").filter(pk=pk).first()
    if found is None:
        raise Http404("No such calibration cycle.")
    return found


def cycle_get(*, pk: int) -> CalibrationCycle | None:
    """The calibration cycle with this id, or None."""
    return CalibrationCycle.objects.filter(pk=pk).first()


def cycles_by_id() -> QuerySet[CalibrationCycle]:
    """Every calibration cycle, oldest first."""
    return CalibrationCycle.objects.order_by("pk")


def cycle_choices() -> QuerySet[CalibrationCycle]:
    """Every calibration cycle, in the model's order, for a form's choice field."""
    return CalibrationCycle.objects.all()


def panel_choices() -> QuerySet[Panel]:
    """Every panel, in the model's order, for a form's choice field."""
    return Panel.objects.all()
