"""Pairwise judge runs (methodology §6.2.1 position bias): the judge compares two responses to the same case, each
pair asked in both orders. A judgment is one call: a pair in one order and which position the judge preferred."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

__all__ = ["PairwiseJudgment", "PairwiseRun"]


class PairwiseRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    model = models.CharField(max_length=200, help_text="The judge model.")
    base_url = models.CharField(max_length=500)
    selection = models.JSONField(default=dict, blank=True, help_text="Case filter and limit the pairs came from.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0, help_text="Calls: pairs × 2 orders.")
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(
            condition=Q(status__in=["queued", "running", "finished", "cancelled", "failed"]),
            name="pairwise_run_status_valid")]

    def __str__(self) -> str:
        return f"pairwise run {self.pk} ({self.model})"


class PairwiseJudgment(models.Model):
    """The judge's verdict on one ordered pair: `first` was shown as answer A, `second` as answer B."""

    class Preferred(models.TextChoices):
        A = "A", "Answer A (shown first)"
        B = "B", "Answer B (shown second)"
        TIE = "tie", "Tie"

    run = models.ForeignKey(PairwiseRun, on_delete=models.CASCADE, related_name="judgments")
    first = models.ForeignKey("evaluations.ModelResponse", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("evaluations.ModelResponse", on_delete=models.CASCADE, related_name="+")
    preferred = models.CharField(max_length=3, choices=Preferred.choices, blank=True,
                                 help_text="Empty when the call failed or the answer could not be read.")
    error = models.CharField(max_length=200, blank=True)
    reasoning = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "first", "second"], name="pairwise_one_per_order"),
            models.CheckConstraint(condition=~Q(first=models.F("second")), name="pairwise_two_responses"),
            models.CheckConstraint(condition=Q(preferred__in=["A", "B", "tie", ""]), name="pairwise_preferred_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.first_id} then {self.second_id}: {self.preferred or self.error or '—'}"
