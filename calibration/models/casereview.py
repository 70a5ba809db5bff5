"""Frozen results of the test-validity programme: case-review agreement reports and IRT difficulty fits."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class CaseReviewReport(models.Model):
    """A versioned, never-edited snapshot of a review cycle's agreement per field, flags and difficulty cross-tab."""

    cycle = models.ForeignKey("casereview.CaseReviewCycle", on_delete=models.PROTECT, related_name="reports")
    version = models.PositiveIntegerField()
    payload = models.JSONField()
    input_hash = models.CharField(max_length=64, help_text="SHA-256 of the reviews the report was computed from.")
    seed = models.BigIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cycle", "-version"]
        constraints = [models.UniqueConstraint(fields=["cycle", "version"], name="case_review_report_version_unique")]

    def __str__(self) -> str:
        return f"{self.cycle} report v{self.version}"


class DifficultyFit(models.Model):
    """A graded-response-model fit of one dimension's cases (items) to the evaluated models (persons)."""

    dimension = models.CharField(max_length=20)
    rotation = models.CharField(max_length=40, blank=True, help_text="The held-out rotation fitted (empty: all).")
    items = models.PositiveIntegerField()
    persons = models.PositiveIntegerField()
    payload = models.JSONField(help_text="Items (thresholds, discrimination, SEs, fit, score source), models "
                               "(ability, interval), tier comparison, equating when anchors link it to a base fit.")
    equated_to = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(items__gte=2), name="difficulty_fit_two_items")]

    def __str__(self) -> str:
        return f"IRT fit of {self.dimension} {self.rotation or '(all)'} #{self.pk}"
