"""Adjudication records: an adjudicator's gold scores for a cycle item, superseded but never edited."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class AdjudicationDecision(models.Model):
    """An adjudicator's gold scores for one cycle item. Expert scores are never changed by it.

    Decisions are never edited: a new decision supersedes the current one, so the history of gold
    labels is kept alongside the original expert annotations.
    """

    class Reason(models.TextChoices):
        MISREAD_RESPONSE = "misread_response", "An expert misread the response"
        RUBRIC_AMBIGUITY = "rubric_ambiguity", "The rubric is ambiguous here"
        TRADITION_DISAGREEMENT = "tradition_disagreement", "Tradition-specific disagreement"
        OUTSIDE_EXPERTISE = "outside_expertise", "Outside an expert's expertise"
        OTHER = "other", "Other"

    item = models.ForeignKey("annotations.CycleItem", on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=30, choices=Reason.choices)
    note = models.TextField(blank=True)
    is_current = models.BooleanField(default=True)
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item", "-created_at", "-id"]
        verbose_name = "adjudication decision"
        constraints = [
            models.UniqueConstraint(fields=["item"], condition=Q(is_current=True), name="adjudication_one_current_per_item"),
            models.CheckConstraint(
                condition=Q(reason__in=["misread_response", "rubric_ambiguity", "tradition_disagreement",
                                        "outside_expertise", "other"]),
                name="adjudication_reason_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"Adjudication of item {self.item_id} ({'current' if self.is_current else 'superseded'})"


class GoldScore(models.Model):
    """The adjudicated 0–3 score of one sub-dimension."""

    decision = models.ForeignKey(AdjudicationDecision, on_delete=models.CASCADE, related_name="scores")
    key = models.CharField(max_length=40)
    score = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["decision", "key"]
        constraints = [
            models.UniqueConstraint(fields=["decision", "key"], name="goldscore_one_per_key"),
            models.CheckConstraint(condition=Q(score__gte=0, score__lte=3), name="goldscore_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.score} (gold)"
