"""External rating studies: ratings made outside the app (a spreadsheet panel, another lab's judge, a public
meta-evaluation set such as JUDGE-BENCH), imported to be measured with the same statistics as a cycle."""
from __future__ import annotations

from django.db import models


class Study(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True, help_text="Where the ratings come from (URL, citation).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class StudyDimension(models.Model):
    class Level(models.TextChoices):
        NOMINAL = "nominal", "Nominal"
        ORDINAL = "ordinal", "Ordinal"
        INTERVAL = "interval", "Interval"
        RATIO = "ratio", "Ratio"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="dimensions")
    key = models.CharField(max_length=120)
    scale_min = models.FloatField(null=True, blank=True)
    scale_max = models.FloatField(null=True, blank=True)
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.ORDINAL)
    prompt = models.TextField(blank=True, help_text="The judge prompt template, when the source gives one.")

    class Meta:
        ordering = ["study", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="study_dimension_unique_key")]

    def __str__(self) -> str:
        return self.key


class StudyItem(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["study", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="study_item_unique_id")]

    def __str__(self) -> str:
        return self.external_id


class StudyRater(models.Model):
    class Kind(models.TextChoices):
        HUMAN = "human", "Human"
        JUDGE = "judge", "Judge"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="raters")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.HUMAN)
    group = models.CharField(max_length=120, blank=True, help_text="e.g. a tradition; reports split by group.")

    class Meta:
        ordering = ["study", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="study_rater_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class StudyScore(models.Model):
    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="scores")
    dimension = models.ForeignKey(StudyDimension, on_delete=models.CASCADE, related_name="scores")
    rater = models.ForeignKey(StudyRater, on_delete=models.CASCADE, related_name="scores")
    value = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "dimension", "rater"], name="study_score_unique")]

    def __str__(self) -> str:
        return f"{self.value:g}"


class StudyJudgeRun(models.Model):
    """One pass of a judge model over a study's items, through the integrated pipeline's client (retries,
    Retry-After, timeouts): each answered item × dimension becomes a score of the judge rater named after the model.
    Resumable by construction: a run only sends what that rater has not scored yet."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_runs")
    model = models.CharField(max_length=200, help_text="The judge model; also the name of its rater in the study.")
    base_url = models.CharField(max_length=500)
    dimensions = models.JSONField(default=list, blank=True, help_text="Dimension keys (empty: every one with a prompt).")
    limit = models.PositiveIntegerField(null=True, blank=True, help_text="At most this many calls (a trial run).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0, help_text="Item × dimension pairs to send when it started.")
    scored = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    errors = models.JSONField(default=dict, blank=True, help_text="Failed calls by error class.")
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    requested_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the process running it.")

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=["queued", "running", "finished", "cancelled",
                                                                  "failed"]), name="study_judge_run_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.study} · judge {self.model} · #{self.pk}"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)
