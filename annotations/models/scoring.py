"""Assignments of cycle items to experts, their blind 0–3 scores, and the audit history of every change."""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


def public_id_new() -> str:
    """22 URL-safe random characters (128 bits): what experts see instead of the sequential primary key."""
    return secrets.token_urlsafe(16)


class AssignmentQuerySet(models.QuerySet["Assignment"]):
    def for_expert(self, user: object) -> AssignmentQuerySet:
        return self.filter(expert=user)

    def open(self) -> AssignmentQuerySet:
        return self.filter(status__in=[Assignment.Status.PENDING, Assignment.Status.DRAFT])

    def done(self) -> AssignmentQuerySet:
        return self.filter(status__in=[Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED])

    def active(self) -> AssignmentQuerySet:
        """Everything but withdrawn assignments: what queues, progress and completeness count."""
        return self.exclude(status=Assignment.Status.WITHDRAWN)

    def withdrawn(self) -> AssignmentQuerySet:
        return self.filter(status=Assignment.Status.WITHDRAWN)

    def in_queue_order(self) -> AssignmentQuerySet:
        return self.order_by("cycle_id", "position", "id")

    def counted(self) -> AssignmentQuerySet:
        """First assignments only: what every report, estimate, adjudication rule and count of work reads.
        A re-served (test–retest) assignment is left out, so no item is ever counted twice."""
        return self.filter(retest_of__isnull=True)

    def retests(self) -> AssignmentQuerySet:
        """Re-served assignments (test–retest): read only by the intra-rater agreement figures."""
        return self.filter(retest_of__isnull=False)


class AnnotationQuerySet(models.QuerySet["Annotation"]):
    def counted(self) -> AnnotationQuerySet:
        """Annotations of first assignments only (see `AssignmentQuerySet.counted`)."""
        return self.filter(assignment__retest_of__isnull=True)


class SubScoreQuerySet(models.QuerySet["SubScore"]):
    def counted(self) -> SubScoreQuerySet:
        """Sub-scores of first assignments only (see `AssignmentQuerySet.counted`)."""
        return self.filter(annotation__assignment__retest_of__isnull=True)


class AnnotationEventQuerySet(models.QuerySet["AnnotationEvent"]):
    def counted(self) -> AnnotationEventQuerySet:
        """Events of first assignments' annotations only (see `AssignmentQuerySet.counted`)."""
        return self.filter(annotation__assignment__retest_of__isnull=True)


class Assignment(models.Model):
    """One cycle item for one expert, at a shuffled position in that expert's queue.

    An open assignment can be *withdrawn* (annotations/lifecycle.py): the item got its gold decision, the
    expert left the panel, or a lead reassigned it. A withdrawn assignment and its draft are kept as
    records; it can no longer be scored.

    A *re-served* assignment (`retest_of` set, annotations/retests.py) gives the expert an item they already
    submitted, blind, for test–retest agreement. It is scored like any other; it never counts in a report or an
    estimate (`Assignment.objects.counted()`), and at most one exists per item × expert.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Not started"
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped (outside expertise)"
        WITHDRAWN = "withdrawn", "Withdrawn"

    class WithdrawnReason(models.TextChoices):
        AFTER_ADJUDICATION = "after_adjudication", "Withdrawn after adjudication"
        REMOVED_FROM_PANEL = "removed_from_panel", "Expert removed from the panel"
        REASSIGNED = "reassigned", "Reassigned to another expert"

    public_id = models.CharField(max_length=22, unique=True, default=public_id_new, editable=False)
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    cycle = models.ForeignKey("annotations.CalibrationCycle", on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey("annotations.CycleItem", on_delete=models.CASCADE, related_name="assignments")
    panel = models.ForeignKey("annotations.Panel", on_delete=models.PROTECT, related_name="assignments")
    position = models.PositiveIntegerField(help_text="Place in the expert's queue (shuffled per expert, seeded).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    withdrawn_reason = models.CharField(max_length=20, choices=WithdrawnReason.choices, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    reassigned_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reassigned_to",
        help_text="The assignment this one replaces (a lead's reassignment). Never shown to experts.",
    )
    retest_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="retests",
        help_text="Set on a re-served (test–retest) assignment: the expert's first assignment of the same item. "
                  "Never shown to experts; never counted in reports or estimates.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["expert", "cycle", "position"]
        constraints = [
            # One first assignment per item × expert, and at most one re-served one beside it.
            models.UniqueConstraint(fields=["item", "expert"], condition=Q(retest_of__isnull=True),
                                    name="assignment_one_per_item_expert"),
            models.UniqueConstraint(fields=["item", "expert"], condition=Q(retest_of__isnull=False),
                                    name="assignment_one_retest_per_item_expert"),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "draft", "submitted", "skipped", "withdrawn"]),
                name="assignment_status_valid",
            ),
            # Withdrawn exactly when a reason and a time are recorded.
            models.CheckConstraint(
                condition=(
                    Q(status="withdrawn", withdrawn_at__isnull=False,
                      withdrawn_reason__in=["after_adjudication", "removed_from_panel", "reassigned"])
                    | (~Q(status="withdrawn") & Q(withdrawn_at__isnull=True, withdrawn_reason=""))
                ),
                name="assignment_withdrawn_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["expert", "cycle", "position"], name="assignment_queue_idx"),
            models.Index(fields=["expert", "status"], name="assignment_expert_status_idx"),
        ]

    def __str__(self) -> str:
        return f"Assignment {self.public_id}"

    @property
    def is_done(self) -> bool:
        return self.status in (self.Status.SUBMITTED, self.Status.SKIPPED)

    @property
    def is_open(self) -> bool:
        return self.status in (self.Status.PENDING, self.Status.DRAFT)


class Annotation(models.Model):
    """An expert's scores for one assignment: a draft until submitted, then locked."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    class SkipReason(models.TextChoices):
        OUTSIDE_EXPERTISE = "outside_expertise", "Outside my expertise"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="annotations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    rationale = models.TextField(blank=True, help_text="Required when any score is 0 or 3.")
    flagged_broken = models.BooleanField(default=False, help_text="The expert reports the item as broken.")
    broken_note = models.CharField(max_length=500, blank=True)
    skip_reason = models.CharField(max_length=30, choices=SkipReason.choices, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0, help_text="Active seconds on the page, from heartbeats.")
    last_beat_at = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="Clock of the last accepted heartbeat: seconds_spent never grows faster than wall-clock time.",
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["assignment"]
        constraints = [
            models.UniqueConstraint(fields=["assignment"], name="annotation_one_per_assignment"),
            models.CheckConstraint(condition=Q(status__in=["draft", "submitted", "skipped"]), name="annotation_status_valid"),
            models.CheckConstraint(
                condition=~Q(status="skipped") | ~Q(skip_reason=""), name="annotation_skip_has_reason"
            ),
        ]

    def __str__(self) -> str:
        return f"Annotation of {self.assignment}"

    @property
    def is_locked(self) -> bool:
        return self.status != self.Status.DRAFT


class SubScore(models.Model):
    """One 0–3 score for one rubric sub-dimension (methodology §4.2)."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="scores")
    key = models.CharField(max_length=40, help_text="Sub-dimension key as the methodology spells it.")
    score = models.PositiveSmallIntegerField()

    objects = SubScoreQuerySet.as_manager()

    class Meta:
        ordering = ["annotation", "key"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "key"], name="subscore_one_per_key"),
            models.CheckConstraint(condition=Q(score__gte=0, score__lte=3), name="subscore_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.score}"


class AnnotationEvent(models.Model):
    """Audit history: who changed what on an annotation, when, old → new."""

    class Kind(models.TextChoices):
        DRAFT_SAVED = "draft_saved", "Draft saved"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"
        REOPENED = "reopened", "Reopened"
        UNDONE = "undone", "Submission taken back by the expert"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    changes = models.JSONField(default=dict, blank=True, help_text='{"field": [old, new]}')
    note = models.TextField(blank=True)

    objects = AnnotationEventQuerySet.as_manager()

    class Meta:
        ordering = ["at", "id"]
        verbose_name = "annotation event"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} at {self.at:%Y-%m-%d %H:%M}"
