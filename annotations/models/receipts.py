"""Receipts of stored scoring writes, by the idempotency key the page sent with each one.

A scoring page sends every write (autosave, submit, skip, undo) with a key it made for that attempt and sends the
same key again when it retries. The write and its receipt commit in one transaction, so a retry whose first
attempt was stored (but whose answer was lost: a dropped connection, a 503 after the commit) finds the receipt
and is answered from it instead of being run a second time (annotations/receipts.py).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class SaveReceipt(models.Model):
    """One stored scoring write: who sent it under which key, what it asked for, and what it answered."""

    class Action(models.TextChoices):
        DRAFT = "draft", "Draft saved"
        SUBMIT = "submit", "Submitted"
        SKIP = "skip", "Skipped"
        UNDO = "undo", "Submission taken back"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64, help_text="The Idempotency-Key the page sent (one per write attempt).")
    assignment = models.ForeignKey("annotations.Assignment", on_delete=models.CASCADE, related_name="save_receipts")
    action = models.CharField(max_length=10, choices=Action.choices)
    fingerprint = models.CharField(
        max_length=64, help_text="SHA-256 of what was asked (action, assignment, entries): a key reused for "
                                 "another request is refused.")
    status_code = models.PositiveSmallIntegerField(default=200)
    result = models.JSONField(default=dict, blank=True, help_text="What the answer said about the write.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "save receipt"
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="save_receipt_one_per_user_key")]
        indexes = [models.Index(fields=["user", "created_at"], name="save_receipt_user_created")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} under {self.key}"
