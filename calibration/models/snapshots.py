"""Report snapshots: the unit of evidence. Computed once by the worker, stored with everything needed to
cite and reproduce them, and never edited; a new computation is a new version.

A snapshot's files (JSON, long CSV, PDF, the ratings it was computed from, the citable zip bundle) are
rendered once, when it is computed, and stored as bytes: a download serves exactly what was cited.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

__all__ = ["ReportSnapshot", "SnapshotFile"]


class ReportSnapshotQuerySet(models.QuerySet["ReportSnapshot"]):
    def ready(self) -> ReportSnapshotQuerySet:
        return self.filter(status=ReportSnapshot.Status.READY)

    def pending(self) -> ReportSnapshotQuerySet:
        return self.filter(status__in=[ReportSnapshot.Status.QUEUED, ReportSnapshot.Status.RUNNING])


class ReportSnapshot(models.Model):
    """One immutable computation of a report — of a calibration cycle, of an imported rating study, or the
    expert-calibrated leaderboard of a judge run (`label_cycle` set; exactly one of the three): its inputs' hash,
    seed, resamples, software, payload. Versions count per cycle, per study and per leaderboard's judge run."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Computing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    cycle = models.ForeignKey("annotations.CalibrationCycle", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="report_snapshots")
    study = models.ForeignKey("calibration.Study", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="report_snapshots")
    label_cycle = models.ForeignKey(
        "annotations.CalibrationCycle", null=True, blank=True, on_delete=models.PROTECT,
        related_name="calibrated_snapshots",
        help_text="Calibrated leaderboards only: the cycle whose expert scores correct the judge run's.",
    )
    version = models.PositiveIntegerField(
        help_text="1, 2, 3, … per cycle, study or (calibrated leaderboard) judge run, in the order requested.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    judge_run = models.ForeignKey(
        "evaluations.JudgeRun", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The judge run compared with the experts (none: experts only).",
    )
    seed = models.PositiveBigIntegerField(help_text="Bootstrap seed.")
    n_resamples = models.PositiveIntegerField(help_text="Bootstrap resamples (0: no intervals).")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent done while computing.")
    progress_note = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    input_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of ratings.csv, the exact input rows (in the bundle)."
    )
    input_counts = models.JSONField(default=dict, blank=True, help_text="Units, ratings, raters, judge and gold rows.")
    watermark = models.JSONField(
        default=dict, blank=True, help_text="Newest annotation event and gold decision read: what 'new since' counts from."
    )
    software = models.JSONField(default=dict, blank=True)
    payload = models.JSONField(null=True, blank=True, help_text="The typed report, as JSON.")
    rater_key = models.JSONField(
        default=dict, blank=True, help_text="Pseudonym → expert email. Shown to admins on the page; never exported."
    )

    objects = ReportSnapshotQuerySet.as_manager()

    class Meta:
        ordering = ["cycle", "-version"]
        verbose_name = "report snapshot"
        constraints = [
            models.UniqueConstraint(fields=["cycle", "version"], name="snapshot_one_per_cycle_version"),
            models.UniqueConstraint(fields=["study", "version"], name="snapshot_one_per_study_version"),
            models.UniqueConstraint(fields=["judge_run", "version"], condition=Q(label_cycle__isnull=False),
                                    name="snapshot_one_per_leaderboard_version"),
            models.CheckConstraint(
                condition=Q(cycle__isnull=False, study__isnull=True, label_cycle__isnull=True)
                | Q(cycle__isnull=True, study__isnull=False, label_cycle__isnull=True)
                | Q(cycle__isnull=True, study__isnull=True, label_cycle__isnull=False, judge_run__isnull=False),
                name="snapshot_of_a_cycle_a_study_or_a_leaderboard"),
            models.CheckConstraint(condition=Q(version__gte=1), name="snapshot_version_positive"),
            models.CheckConstraint(condition=Q(status__in=["queued", "running", "ready", "failed"]),
                                   name="snapshot_status_valid"),
            models.CheckConstraint(condition=Q(progress__lte=100), name="snapshot_progress_0_100"),
            models.CheckConstraint(condition=~Q(status="ready") | ~Q(input_hash=""), name="snapshot_ready_has_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_name} · report v{self.version}"

    @property
    def subject_name(self) -> str:
        """The cycle's or the study's name, or the calibrated leaderboard's judge run."""
        if self.label_cycle_id:
            return f"calibrated leaderboard of judge run #{self.judge_run_id}"
        return str(self.cycle if self.cycle_id else self.study)

    @property
    def subject_kind(self) -> str:
        if self.label_cycle_id:
            return "leaderboard"
        return "cycle" if self.cycle_id else "study"

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY

    @property
    def is_pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class SnapshotFile(models.Model):
    """One rendered file of a snapshot, stored as the bytes that are downloaded."""

    class Format(models.TextChoices):
        JSON = "json", "Report (JSON)"
        CSV = "csv", "Tables (long CSV)"
        PDF = "pdf", "Report (PDF)"
        RATINGS = "ratings", "Input rows (ratings.csv)"
        BUNDLE = "bundle", "Citable bundle (zip)"

    snapshot = models.ForeignKey(ReportSnapshot, on_delete=models.CASCADE, related_name="files")
    format = models.CharField(max_length=10, choices=Format.choices)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()

    class Meta:
        ordering = ["snapshot", "format"]
        verbose_name = "snapshot file"
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "format"], name="snapshot_file_one_per_format"),
            models.CheckConstraint(condition=Q(format__in=["json", "csv", "pdf", "ratings", "bundle"]),
                                   name="snapshot_file_format_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.snapshot} · {self.format}"
