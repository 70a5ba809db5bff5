"""Test-case review: cycles in which a panel's experts judge the benchmark's cases themselves (methodology §5.1.2,
§6.5: the corpus was "LLM-screened, not human-validated"), the flags their answers raise, and TheoBERT audits.

The models moved here from `annotations` by a state-only migration: their tables keep their `annotations_*` names
(`Meta.db_table`), so no row moved."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotations.models import public_id_new


class CaseReviewCycle(models.Model):
    """A lead's review of some or all of one panel's tradition cases, each by `reviewers_per_case` experts."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=160)
    panel = models.ForeignKey("annotations.Panel", on_delete=models.PROTECT, related_name="review_cycles")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reviewers_per_case = models.PositiveSmallIntegerField(default=3)
    sample = models.JSONField(default=dict, blank=True, help_text="How the cases were chosen (all, or a stratified "
                              "sample: size, seed, strata).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotations_casereviewcycle"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(reviewers_per_case__gte=3), name="review_cycle_three_reviewers"),
            models.CheckConstraint(condition=Q(status__in=["open", "closed"]), name="review_cycle_status_valid"),
        ]

    def __str__(self) -> str:
        return self.name


class CaseReview(models.Model):
    """One expert's blind review of one case in a cycle: an assignment until submitted, then locked."""

    class Valid(models.TextChoices):
        YES = "yes", "Yes"
        NO = "no", "No"
        UNSURE = "unsure", "Unsure"

    class Reference(models.TextChoices):
        YES = "yes", "Yes"
        PARTLY = "partly", "Partly"
        NO = "no", "No"

    public_id = models.CharField(max_length=22, unique=True, default=public_id_new, editable=False)
    cycle = models.ForeignKey(CaseReviewCycle, on_delete=models.CASCADE, related_name="reviews")
    test_case = models.ForeignKey("evaluations.TestCase", on_delete=models.PROTECT, related_name="reviews")
    case_version = models.PositiveIntegerField(help_text="The case's version when it was assigned and reviewed.")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="case_reviews")
    valid = models.CharField("valid test of its dimension", max_length=10, choices=Valid.choices, blank=True)
    reference_correct = models.CharField("reference answer correct for this tradition", max_length=10,
                                         choices=Reference.choices, blank=True)
    difficulty = models.CharField(max_length=10, blank=True)  # evaluations.domain.Difficulty
    clarity = models.PositiveSmallIntegerField(null=True, blank=True, help_text="0 (unclear) – 3 (perfectly clear).")
    comment = models.TextField(blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotations_casereview"
        ordering = ["cycle", "test_case", "id"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "test_case", "expert"], name="case_review_one_per_expert"),
            models.CheckConstraint(condition=Q(clarity__isnull=True) | Q(clarity__lte=3), name="case_review_clarity_0_3"),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True) | (~Q(valid="") & ~Q(reference_correct="") & ~Q(difficulty="")
                                                          & Q(clarity__isnull=False)),
                name="case_review_submitted_complete",
            ),
        ]

    def __str__(self) -> str:
        return f"Case review {self.public_id}"

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None


class CaseFlag(models.Model):
    """A case the reviews call into question; a lead resolves it by revising or retiring the case (or keeping it)."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        REVISED = "revised", "Revised"
        RETIRED = "retired", "Retired"
        KEPT = "kept", "Kept as is"

    cycle = models.ForeignKey(CaseReviewCycle, on_delete=models.CASCADE, related_name="flags")
    test_case = models.ForeignKey("evaluations.TestCase", on_delete=models.PROTECT, related_name="flags")
    case_version = models.PositiveIntegerField()
    reasons = models.JSONField(default=list, help_text="Why: majority invalid, reference wrong, low agreement…")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    new_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotations_caseflag"
        ordering = ["cycle", "test_case"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "test_case"], name="case_flag_one_per_cycle_case"),
            models.CheckConstraint(condition=Q(status__in=["open", "revised", "retired", "kept"]),
                                   name="case_flag_status_valid"),
        ]

    def __str__(self) -> str:
        return f"Flag on {self.test_case_id} ({self.status})"


class TheoBertAudit(models.Model):
    """An expert's audit of one TheoBERT case as scored in one run: is the case sound, is the verdict right?"""

    class Answer(models.TextChoices):
        YES = "yes", "Yes"
        NO = "no", "No"
        UNSURE = "unsure", "Unsure"

    public_id = models.CharField(max_length=22, unique=True, default=public_id_new, editable=False)
    result = models.ForeignKey("evaluations.TheoBertResult", on_delete=models.CASCADE, related_name="audits")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="theobert_audits")
    case_sound = models.CharField(max_length=10, choices=Answer.choices, blank=True,
                                  help_text="Target right, foil truly wrong, no ambiguity.")
    verdict_right = models.CharField(max_length=10, choices=Answer.choices, blank=True)
    comment = models.TextField(blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotations_theobertaudit"
        ordering = ["result", "id"]
        constraints = [
            models.UniqueConstraint(fields=["result", "expert"], name="theobert_audit_one_per_expert"),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True) | (~Q(case_sound="") & ~Q(verdict_right="")),
                name="theobert_audit_submitted_complete",
            ),
        ]

    def __str__(self) -> str:
        return f"TheoBERT audit {self.public_id}"
