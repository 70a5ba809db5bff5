"""Snapshots: the unit of evidence. Computed once (by the worker, or at once for the small kinds), stored with
everything needed to cite and reproduce them, and never edited; a new computation is a new version.

A snapshot has a `kind` (what sort of artefact) and a `subject` (what it is of, within its kind: the cycle's,
study's, judge run's or review cycle's id, "DIMENSION/rotation" for an IRT fit, "check/run-N" for a bias check).
Subjects that live in apps above this one (studies, review cycles) are named by id, never by foreign key; rows of
the apps below (cycle, label cycle, judge run, pairwise run) stay foreign keys, as typed inputs.

A snapshot's files (JSON, long CSV, PDF, the rows it was computed from, the citable zip bundle) are rendered once,
when it is computed, and stored as bytes: a download serves exactly what was cited.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TypedDict, cast

from django.conf import settings
from django.db import models
from django.db.models import Q

__all__ = ["Snapshot", "SnapshotFile", "SnapshotQuerySet", "SnapshotSummary"]


STALE_AFTER = timedelta(minutes=5)  # a running snapshot with no progress for this long lost its worker

class SnapshotSummary(TypedDict, total=False):
    """The few figures a list page reads without the payload: a bias check's kind, flag and responses; an IRT fit's
    dimension, rotation, items, persons and the fit it is equated to."""

    check: str
    flagged: bool
    n: int
    dimension: str
    rotation: str
    items: int
    persons: int
    equated_to: int | None


class SnapshotQuerySet(models.QuerySet["Snapshot"]):
    def ready(self) -> SnapshotQuerySet:
        return self.filter(status=Snapshot.Status.READY)

    def pending(self) -> SnapshotQuerySet:
        return self.filter(status__in=[Snapshot.Status.QUEUED, Snapshot.Status.RUNNING])

    def of(self, kind: str, subject: str | int | None = None) -> SnapshotQuerySet:
        """The versions of one kind (of one subject when given)."""
        found = self.filter(kind=kind)
        return found if subject is None else found.filter(subject=str(subject))


class Snapshot(models.Model):
    """One immutable computation of an artefact of some kind about some subject: its inputs' hash, seed, resamples,
    software, payload and files. Versions count per kind and subject, in the order requested."""

    class Kind(models.TextChoices):
        CYCLE_REPORT = "cycle_report", "Cycle report"
        STUDY_REPORT = "study_report", "Study report"
        CALIBRATED = "calibrated", "Calibrated leaderboard"
        CASE_REVIEW = "case_review", "Case-review report"
        IRT_FIT = "irt_fit", "IRT difficulty fit"
        BIAS_CHECK = "bias_check", "Bias check"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Computing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"
        # Computed, but its files contradict each other or themselves (the artefact checker's list in `checks`):
        # kept for admins to read, never served as citable.
        FAILED_CHECKS = "failed_checks", "Failed checks"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    subject = models.CharField(
        max_length=120, help_text="What it is of, within its kind: an id, 'DIMENSION/rotation', 'check/run-N'.")
    cycle = models.ForeignKey("annotations.CalibrationCycle", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="snapshots")
    label_cycle = models.ForeignKey(
        "annotations.CalibrationCycle", null=True, blank=True, on_delete=models.PROTECT,
        related_name="calibrated_snapshots",
        help_text="Calibrated leaderboards only: the cycle whose expert scores correct the judge run's.",
    )
    version = models.PositiveIntegerField(help_text="1, 2, 3, … per kind and subject, in the order requested.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    judge_run = models.ForeignKey(
        "evaluations.JudgeRun", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The judge run read (compared with the experts, calibrated, or checked).",
    )
    pairwise_run = models.ForeignKey(
        "evaluations.PairwiseRun", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Position checks only: the pairwise run read.",
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
        max_length=64, blank=True,
        help_text="SHA-256 of the exact input rows (reports: ratings.csv, in the bundle; small kinds: their inputs).",
    )
    input_counts = models.JSONField(default=dict, blank=True, help_text="Units, ratings, raters, judge and gold rows.")
    watermark = models.JSONField(
        default=dict, blank=True, help_text="Newest annotation event and gold decision read: what 'new since' counts from."
    )
    software = models.JSONField(default=dict, blank=True)
    payload = models.JSONField(null=True, blank=True, help_text="The typed artefact, as JSON.")
    rater_key = models.JSONField(
        default=dict, blank=True, help_text="Pseudonym → expert email. Shown to admins on the page; never exported."
    )
    summary = models.JSONField(default=dict, blank=True,
                               help_text="What list pages read without the payload (see SnapshotSummary).")
    checks = models.JSONField(
        default=list, blank=True,
        help_text="The artefact checker's problems with this version's files (empty: every check passed).")

    objects = SnapshotQuerySet.as_manager()

    class Meta:
        db_table = "calibration_reportsnapshot"  # moved from calibration (state only): the table keeps its name
        ordering = ["kind", "subject", "-version"]
        verbose_name = "snapshot"
        constraints = [
            models.UniqueConstraint(fields=["kind", "subject", "version"], name="snapshot_one_per_subject_version"),
            models.CheckConstraint(
                condition=Q(kind__in=["cycle_report", "study_report", "calibrated", "case_review", "irt_fit",
                                      "bias_check"]), name="snapshot_kind_valid"),
            models.CheckConstraint(condition=~Q(subject=""), name="snapshot_has_subject"),
            models.CheckConstraint(condition=~Q(kind="cycle_report") | Q(cycle__isnull=False),
                                   name="snapshot_cycle_report_has_cycle"),
            models.CheckConstraint(condition=~Q(kind="calibrated") | Q(label_cycle__isnull=False,
                                                                        judge_run__isnull=False),
                                   name="snapshot_calibrated_has_run_and_cycle"),
            models.CheckConstraint(condition=Q(version__gte=1), name="snapshot_version_positive"),
            models.CheckConstraint(condition=Q(status__in=["queued", "running", "ready", "failed", "failed_checks"]),
                                   name="snapshot_status_valid"),
            models.CheckConstraint(condition=Q(progress__lte=100), name="snapshot_progress_0_100"),
            models.CheckConstraint(condition=~Q(status="ready") | ~Q(input_hash=""), name="snapshot_ready_has_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_name} · {self.get_kind_display().lower()} v{self.version}"

    @property
    def subject_name(self) -> str:
        """What a person calls the subject: the cycle's name, the study's id, the judge run of a leaderboard, …"""
        if self.kind == self.Kind.CALIBRATED:
            return f"calibrated leaderboard of judge run #{self.judge_run_id}"
        if self.kind == self.Kind.CYCLE_REPORT and self.cycle_id:
            return str(self.cycle)
        if self.kind == self.Kind.STUDY_REPORT:
            return f"study #{self.subject}"
        return f"{self.get_kind_display()} {self.subject}"

    @property
    def subject_kind(self) -> str:
        return {self.Kind.CALIBRATED: "leaderboard", self.Kind.CYCLE_REPORT: "cycle",
                self.Kind.STUDY_REPORT: "study"}.get(self.Kind(self.kind), str(self.kind))

    @property
    def study_id(self) -> int | None:
        """A study report's study (named by id: studies live in the app above)."""
        return int(self.subject) if self.kind == self.Kind.STUDY_REPORT else None

    @property
    def document(self) -> dict[str, Any]:
        """The payload as the JSON object it is stored as (empty before it is computed): the I/O boundary."""
        return self.payload or {}

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY

    @property
    def failed_checks(self) -> bool:
        return self.status == self.Status.FAILED_CHECKS

    @property
    def is_pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    # The typed summary of the small kinds (bias checks, IRT fits), read by their list pages.
    @property
    def typed_summary(self) -> SnapshotSummary:
        return cast(SnapshotSummary, self.summary or {})

    @property
    def check_kind(self) -> str:
        return self.typed_summary.get("check", "")

    @property
    def flagged(self) -> bool:
        return bool(self.typed_summary.get("flagged", False))

    @property
    def n(self) -> int | None:
        return self.typed_summary.get("n")

    @property
    def dimension(self) -> str:
        return self.typed_summary.get("dimension", "")

    @property
    def rotation(self) -> str:
        return self.typed_summary.get("rotation", "")

    @property
    def items(self) -> int:
        return self.typed_summary.get("items", 0)

    @property
    def persons(self) -> int:
        return self.typed_summary.get("persons", 0)

    @property
    def equated_to_id(self) -> int | None:
        return self.typed_summary.get("equated_to")

    @property
    def computed_at(self) -> datetime | None:
        return self.finished_at or self.requested_at


class SnapshotFile(models.Model):
    """One rendered file of a snapshot, stored as the bytes that are downloaded."""

    class Format(models.TextChoices):
        JSON = "json", "Report (JSON)"
        CSV = "csv", "Tables (long CSV)"
        PDF = "pdf", "Report (PDF)"
        RATINGS = "ratings", "Input rows (ratings.csv)"
        BUNDLE = "bundle", "Citable bundle (zip)"

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="files")
    format = models.CharField(max_length=10, choices=Format.choices)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()

    class Meta:
        db_table = "calibration_snapshotfile"
        ordering = ["snapshot", "format"]
        verbose_name = "snapshot file"
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "format"], name="snapshot_file_one_per_format"),
            models.CheckConstraint(condition=Q(format__in=["json", "csv", "pdf", "ratings", "bundle"]),
                                   name="snapshot_file_format_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.snapshot} · {self.format}"
