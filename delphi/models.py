"""Delphi studies, rounds and allocations (methodology §4.3: weights set by expert consensus).

Weight keys: a dimension's key (``textual``) for the dimension level, ``<dimension>.<subDimension>``
(``textual.lexicalAccuracy``) for the sub-dimension level. Points are decimals with one place, never
floats; the statistics of a closed round are stored as JSON on the round.

The models moved here from `calibration` by a state-only migration: their tables keep their `calibration_*`
names (`Meta.db_table`), so no row moved.
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

__all__ = ["DelphiAllocation", "DelphiResponse", "DelphiRound", "DelphiStudy"]

METHODOLOGY_MIN_PANELISTS = 5  # §4.3: "5+ theologians per evaluated tradition"
DEFAULT_PLANNED_ROUNDS = 3  # §4.3: "3 rounds of independent weighting"
DEFAULT_THRESHOLD = Decimal("10")  # §4.3: "Convergence criterion: IQR < 10%"


class DelphiStudyQuerySet(models.QuerySet["DelphiStudy"]):
    def for_panelist(self, user: object) -> DelphiStudyQuerySet:
        return self.filter(panelists=user)


class DelphiStudy(models.Model):
    """Experts of one tradition (or of several) weight a rubric version's dimensions over several rounds."""

    class Status(models.TextChoices):
        RUNNING = "running", "Rounds running"
        ROUNDS_DONE = "rounds_done", "Rounds finished: ready to close"
        PROPOSED = "proposed", "Closed: proposal awaiting approval"
        APPROVED = "approved", "Approved: rubric version created"

    name = models.CharField(max_length=120, unique=True)
    tradition = models.ForeignKey(
        "evaluations.Tradition", null=True, blank=True, on_delete=models.PROTECT, related_name="delphi_studies",
        help_text="Empty for a study across traditions.",
    )
    rubric = models.ForeignKey(
        "evaluations.RubricVersion", on_delete=models.PROTECT, related_name="delphi_studies",
        help_text="The rubric version whose weights the panel revises.",
    )
    panel = models.ForeignKey(
        "annotations.Panel", null=True, blank=True, on_delete=models.SET_NULL, related_name="delphi_studies",
        help_text="The panel the panelists were taken from (for the record).",
    )
    panelists = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="delphi_studies",
        help_text="The experts who weight. The methodology asks for at least 5 per tradition.",
    )
    planned_rounds = models.PositiveSmallIntegerField(
        default=DEFAULT_PLANNED_ROUNDS, validators=[MinValueValidator(1), MaxValueValidator(10)],
        help_text="Rounds to run at most (methodology §4.3: 3).",
    )
    convergence_threshold = models.DecimalField(
        max_digits=5, decimal_places=2, default=DEFAULT_THRESHOLD,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(Decimal("100"))],
        help_text="A weight has converged when its IQR is below this many percentage points (§4.3: 10).",
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    converged = models.BooleanField(default=False, help_text="Every weight's IQR fell below the threshold.")
    proposal = models.JSONField(
        default=dict, blank=True,
        help_text="Weights proposed from the last round's medians, renormalised: raw sums, scale, adjustments.",
    )
    proposed_rubric = models.ForeignKey(
        "evaluations.RubricVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The draft rubric version created when the proposal was approved.",
    )
    rescoring = models.JSONField(
        default=dict, blank=True, help_text="Judge composites re-scored under the new weights; Kendall's τ; sensitivity.",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    objects = DelphiStudyQuerySet.as_manager()

    class Meta:
        db_table = "calibration_delphistudy"
        ordering = ["-created_at", "-id"]
        verbose_name = "Delphi study"
        verbose_name_plural = "Delphi studies"
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["running", "rounds_done", "proposed", "approved"]), name="delphi_study_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(planned_rounds__gte=1, planned_rounds__lte=10), name="delphi_study_planned_rounds_1_10"
            ),
            models.CheckConstraint(
                condition=Q(convergence_threshold__gt=0, convergence_threshold__lte=100),
                name="delphi_study_threshold_0_100",
            ),
            models.CheckConstraint(
                condition=~Q(status="approved") | Q(proposed_rubric__isnull=False),
                name="delphi_study_approved_has_rubric",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_running(self) -> bool:
        return self.status == self.Status.RUNNING


class DelphiRoundQuerySet(models.QuerySet["DelphiRound"]):
    def open(self) -> DelphiRoundQuerySet:
        return self.filter(status=DelphiRound.Status.OPEN)

    def closed(self) -> DelphiRoundQuerySet:
        return self.filter(status=DelphiRound.Status.CLOSED)


class DelphiRound(models.Model):
    """One round of independent weighting; closing it stores the group statistics."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    study = models.ForeignKey(DelphiStudy, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    invited = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Panelists when the round closed.")
    responded = models.PositiveSmallIntegerField(null=True, blank=True)
    converged = models.BooleanField(default=False)
    summary = models.JSONField(
        default=dict, blank=True,
        help_text="Per weight: n, median, Q1, Q3, IQR, mean, share within ±5, converged, change against the "
                  "previous round; attrition.",
    )

    objects = DelphiRoundQuerySet.as_manager()

    class Meta:
        db_table = "calibration_delphiround"
        ordering = ["study", "number"]
        verbose_name = "Delphi round"
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="delphi_round_unique_number"),
            models.UniqueConstraint(fields=["study"], condition=Q(status="open"), name="delphi_round_one_open"),
            models.CheckConstraint(condition=Q(number__gte=1), name="delphi_round_number_positive"),
            models.CheckConstraint(condition=Q(status__in=["open", "closed"]), name="delphi_round_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.study} · round {self.number}"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class DelphiResponse(models.Model):
    """One expert's allocation in one round (revisable until the round closes)."""

    round = models.ForeignKey(DelphiRound, on_delete=models.CASCADE, related_name="responses")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="delphi_responses")
    submitted_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "calibration_delphiresponse"
        ordering = ["round", "submitted_at", "id"]
        verbose_name = "Delphi response"
        constraints = [
            models.UniqueConstraint(fields=["round", "expert"], name="delphi_response_one_per_expert"),
        ]

    def __str__(self) -> str:
        return f"{self.round} · response {self.pk}"


class DelphiAllocation(models.Model):
    """Points given to one weight (out of 100 at its level), with an optional rationale."""

    response = models.ForeignKey(DelphiResponse, on_delete=models.CASCADE, related_name="allocations")
    key = models.CharField(max_length=100, help_text="textual, or textual.lexicalAccuracy for a sub-dimension.")
    points = models.DecimalField(
        max_digits=4, decimal_places=1, validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text="0–100, at most one decimal; the weights of one level sum to 100.",
    )
    rationale = models.TextField(blank=True)

    class Meta:
        db_table = "calibration_delphiallocation"
        ordering = ["response", "id"]
        verbose_name = "Delphi allocation"
        constraints = [
            models.UniqueConstraint(fields=["response", "key"], name="delphi_allocation_one_per_key"),
            models.CheckConstraint(condition=Q(points__gte=0, points__lte=100), name="delphi_allocation_points_0_100"),
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.points}"
