"""TheoBERT scoring runs and per-case verdicts of the automatic scorer (evaluations/theobert/scoring.py)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evaluations.domain import TheoBertErrorClass


class TheoBertRun(models.Model):
    """One scoring of TheoBERT cases from one source: an imported predictions file or a local model."""

    class Source(models.TextChoices):
        FILE = "file", "Predictions file"
        MODEL = "model", "Local fill-mask model"

    label = models.CharField(max_length=200, help_text="The model's name as the source gives it.")
    source = models.CharField(max_length=10, choices=Source.choices)
    source_name = models.CharField(max_length=500, help_text="File or directory the predictions came from.")
    k_override = models.PositiveSmallIntegerField(null=True, blank=True, help_text="--k: one k for every case.")
    rescored_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rescorings",
        help_text="A re-scoring of this run without the cases experts rejected.",
    )
    excluded_cases = models.JSONField(default=list, blank=True, help_text="Case ids left out (expert-rejected).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # Figures the audit page reads, computed when their data change instead of on every page view.
    summary = models.JSONField(
        null=True, blank=True, editable=False,
        help_text="Pass rates with bootstrap intervals, MRR and errors per group (theobert_run_summary), computed "
                  "when the run is scored: a run's results never change.")
    audit_figures = models.JSONField(
        null=True, blank=True, editable=False,
        help_text="The experts' audit of this run (agreement among them and with the scorer, rejected cases), "
                  "recomputed when an audit is submitted; 'key' fingerprints the audits it was computed from.")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "TheoBERT scoring run"
        constraints = [
            models.CheckConstraint(condition=Q(source__in=["file", "model"]), name="theobert_run_source_valid"),
        ]

    def __str__(self) -> str:
        return f"TheoBERT run #{self.pk} ({self.label})"


class TheoBertResult(models.Model):
    """The scorer's verdict on one case in one run, with what the model predicted."""

    run = models.ForeignKey(TheoBertRun, on_delete=models.CASCADE, related_name="results")
    case = models.ForeignKey("evaluations.TheoBertCase", on_delete=models.CASCADE, related_name="results")
    passed = models.BooleanField()
    rank = models.PositiveIntegerField(null=True, blank=True)
    mrr = models.FloatField(null=True, blank=True)
    margin = models.FloatField(null=True, blank=True)
    confidence = models.CharField(max_length=10, blank=True)
    share_in_set = models.FloatField(null=True, blank=True)
    error_class = models.CharField(max_length=30, choices=TheoBertErrorClass.choices, blank=True)
    critical_failure = models.BooleanField(default=False)
    critical_tokens = models.JSONField(default=list, blank=True)
    k = models.PositiveSmallIntegerField()
    ranked = models.JSONField(default=list, help_text="[[word, probability], ...] best first, as predicted.")
    probabilities = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "case"]
        verbose_name = "TheoBERT result"
        constraints = [
            models.UniqueConstraint(fields=["run", "case"], name="theobert_result_one_per_run_case"),
            models.CheckConstraint(condition=Q(passed=True, error_class="") | Q(passed=False) & ~Q(error_class=""),
                                   name="theobert_result_error_class_iff_failed"),
        ]

    def __str__(self) -> str:
        return f"{self.case_id} in run {self.run_id}: {'pass' if self.passed else 'fail'}"
