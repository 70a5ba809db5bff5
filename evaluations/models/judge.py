"""Judge runs and results (the judge-pipeline issue).

A JudgeRun scores a selection of model responses with one rubric version. Each response is one *item*;
its results (primary, and fallback or secondary when used) are committed together, so an item is
either finished (it has results) or pending (it has none) — which is what resuming relies on.
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from evaluations.domain import ErrorClass

__all__ = ["JudgeResult", "JudgeRun", "JudgeScore"]


class JudgeRunQuerySet(models.QuerySet["JudgeRun"]):
    def active(self) -> JudgeRunQuerySet:
        return self.filter(status__in=JudgeRun.ACTIVE_STATUSES)


class JudgeRun(models.Model):
    """One pass of the LLM judge over a selection of responses, with its progress and totals."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        CANCELLING = "cancelling", "Cancelling"
        CANCELLED = "cancelled", "Cancelled"
        FINISHED = "finished", "Finished"
        FAILED = "failed", "Failed"

    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING, Status.CANCELLING)

    label = models.CharField(max_length=100, blank=True)
    repeat_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="repeats",
        help_text="The first run of a series of repeated runs of the same judge on the same responses (§8.4).")
    rubric = models.ForeignKey("evaluations.RubricVersion", on_delete=models.PROTECT, related_name="judge_runs")
    primary_model = models.CharField(max_length=120, help_text="Primary judge, e.g. google/gemini-3-flash-preview.")
    fallback_model = models.CharField(
        max_length=120, blank=True, help_text="Used when the primary judge returns an HTTP error after its retries."
    )
    secondary_model = models.CharField(
        max_length=120, blank=True,
        help_text="Cross-validation judge for responses of the primary judge's own family (self-preference).",
    )
    base_url = models.CharField(max_length=300, help_text="OpenAI-compatible endpoint the run calls.")
    selection = models.JSONField(
        default=dict, blank=True,
        help_text="Which responses: models, case filters, run label, limit, and the highest response id at creation.",
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    flagged_auth_error = models.BooleanField(
        default=False, help_text="The endpoint answered 401: the run stopped; fix the API key and resume."
    )
    error_message = models.TextField(blank=True)
    case_languages = models.JSONField(
        default=list, blank=True,
        help_text="BCP 47 tags of the cases' languages in the selection; a non-English case's user message names "
                  "its language (evaluations/judge/prompts.py), English ones are sent byte for byte as §5.3.4.",
    )
    total_items = models.PositiveIntegerField(default=0)
    processed_items = models.PositiveIntegerField(default=0, help_text="Items with a final result.")
    scored_items = models.PositiveIntegerField(default=0)
    failed_items = models.PositiveIntegerField(default=0)
    filtered_items = models.PositiveIntegerField(default=0)
    flagged_items = models.PositiveIntegerField(default=0, help_text="Scored items whose reasoning contradicts a score.")
    calls = models.PositiveIntegerField(default=0, help_text="HTTP attempts, retries included.")
    retried_items = models.PositiveIntegerField(
        default=0, help_text="Failed items whose results were discarded and sent again (\"retry failed items\").")
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, default=Decimal("0"), help_text="As the endpoint reports it.")
    task_id = models.CharField(max_length=64, blank=True, help_text="django-tasks result id of the latest start.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    budget = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True,
        help_text="Stop sending calls once the run has cost this much (in FAITHBENCH_CURRENCY); resumable.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last write by the worker executing the run.")

    objects = JudgeRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "judge run"
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "cancelling", "cancelled", "finished", "failed"]),
                name="judgerun_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(processed_items__lte=models.F("total_items")), name="judgerun_processed_le_total"
            ),
            models.CheckConstraint(
                condition=Q(processed_items=models.F("scored_items") + models.F("failed_items") + models.F("filtered_items")),
                name="judgerun_counts_add_up",
            ),
        ]

    def __str__(self) -> str:
        name = self.label or f"judge run {self.pk}"
        return f"{name} ({self.get_status_display().lower()})"

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("judge:run_detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def progress_percent(self) -> int:
        return int(100 * self.processed_items / self.total_items) if self.total_items else 100


class JudgeResult(models.Model):
    """What one judge model said about one response in one run (or why it said nothing usable)."""

    class Role(models.TextChoices):
        PRIMARY = "primary", "Primary judge"
        FALLBACK = "fallback", "Fallback judge (primary failed)"
        SECONDARY = "secondary", "Secondary judge (self-preference cross-validation)"

    class Status(models.TextChoices):
        SCORED = "scored", "Scored"
        FAILED = "failed", "Failed"
        FILTERED = "filtered", "Filtered (403)"
        PARSE_ERROR = "parse_error", "Judge error (unparseable output)"

    ErrorClass = ErrorClass

    # No separate index on run: the unique (run, response, role) index leads with it.
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="results", db_index=False)
    response = models.ForeignKey("evaluations.ModelResponse", on_delete=models.CASCADE, related_name="judge_results")
    judge_model = models.CharField(max_length=120, help_text="The judge model that produced this result.")
    role = models.CharField(max_length=10, choices=Role.choices)
    status = models.CharField(max_length=12, choices=Status.choices)
    error_class = models.CharField(max_length=20, choices=ErrorClass.choices, blank=True)
    error_message = models.TextField(blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    raw_response = models.TextField(blank=True, help_text="The judge's output as received (kept for judge errors).")
    composite = models.DecimalField(
        max_digits=7, decimal_places=6, null=True, blank=True, help_text="Σ raw/3 × weight (methodology §5.4.1), 0–1."
    )
    consistency_flag = models.BooleanField(default=False, help_text="Some reasoning contradicts its score.")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)
    latency_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Wall time of the call, every attempt and every wait between them included.")
    retry_wait_ms = models.PositiveIntegerField(
        default=0, help_text="Of which waiting before retries (backoff or Retry-After).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "response", "role"]
        verbose_name = "judge result"
        constraints = [
            models.UniqueConstraint(fields=["run", "response", "role"], name="judgeresult_one_per_run_response_role"),
            models.CheckConstraint(condition=Q(role__in=["primary", "fallback", "secondary"]), name="judgeresult_role_valid"),
            models.CheckConstraint(
                condition=Q(status__in=["scored", "failed", "filtered", "parse_error"]), name="judgeresult_status_valid"
            ),
            models.CheckConstraint(
                condition=(Q(status="scored", composite__isnull=False, composite__gte=0, composite__lte=1)
                           | (~Q(status="scored") & Q(composite__isnull=True))),
                name="judgeresult_composite_iff_scored",
            ),
            models.CheckConstraint(
                condition=Q(status="scored", error_class="") | (~Q(status="scored") & ~Q(error_class="")),
                name="judgeresult_error_class_iff_unscored",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.response_id} by {self.judge_model} ({self.role}): {self.status}"


class JudgeScore(models.Model):
    """One sub-dimension's 0–3 score and reasoning within a judge result."""

    # No separate index on result: the unique (result, sub_dimension) index leads with it.
    result = models.ForeignKey(JudgeResult, on_delete=models.CASCADE, related_name="scores", db_index=False)
    sub_dimension = models.CharField(max_length=40, help_text="camelCase key, e.g. lexicalAccuracy.")
    raw_score = models.PositiveSmallIntegerField()
    reasoning = models.TextField(blank=True)
    consistency_flag = models.BooleanField(default=False, help_text="The reasoning contradicts this score.")

    class Meta:
        ordering = ["result", "id"]
        verbose_name = "judge score"
        constraints = [
            models.UniqueConstraint(fields=["result", "sub_dimension"], name="judgescore_one_per_sub_dimension"),
            models.CheckConstraint(condition=Q(raw_score__gte=0, raw_score__lte=3), name="judgescore_raw_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.sub_dimension}={self.raw_score}"
