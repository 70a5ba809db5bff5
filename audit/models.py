"""The audit trail: one append-only row per security- or evidence-relevant action (issue 33; OWASP ASVS V7).

A row is written by `audit.services.audit_record` inside the transaction of the action it records, so both
commit or neither does. Rows are never edited or deleted by the application: `save()` refuses an existing row,
`delete()` refuses always, and the queryset's `update()`/`delete()` refuse; the only removal is the retention
prune (`audit.services.audit_prune`, `manage.py prune_audit`), which records itself.

People are named by foreign key only (no e-mail or name copied into a row), so pseudonymising a person
(`accounts.privacy`) erases their identity from the trail too, while the trail's rows stay intact.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class AuditImmutable(RuntimeError):
    """An attempt to edit or delete an audit row from the application."""


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AuditImmutable("audit rows are append-only: they cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AuditImmutable("audit rows are append-only: only audit_prune removes rows past the retention time")

    def about(self, user: Any) -> AuditEventQuerySet:
        """Rows where `user` acted or was acted upon."""
        return self.filter(models.Q(actor=user) | models.Q(subject_user=user))


class AuditEvent(models.Model):
    """Who did what, to what, when, from where; with the state before and after where something changed."""

    class Action(models.TextChoices):
        SIGN_IN = "sign_in", "Signed in"
        SIGN_IN_FAILED = "sign_in_failed", "Sign-in failed"
        SIGN_OUT = "sign_out", "Signed out"
        USER_CHANGED = "user_changed", "Role or access changed"
        PERMISSIONS_CHANGED = "permissions_changed", "Groups or permissions changed"
        PANEL_CHANGED = "panel_changed", "Panel changed"
        TOKEN_CREATED = "token_created", "API token created"
        TOKEN_REVOKED = "token_revoked", "API token revoked"
        JUDGE_RUN_STARTED = "judge_run_started", "Judge run started"
        JUDGE_RUN_CANCELLED = "judge_run_cancelled", "Judge run cancelled"
        SNAPSHOT_REQUESTED = "snapshot_requested", "Evidence version requested"
        SNAPSHOT_COMPUTED = "snapshot_computed", "Evidence version computed"
        SNAPSHOT_FAILED = "snapshot_failed", "Evidence version failed"
        DOWNLOAD = "download", "Evidence file downloaded"
        EXPORT = "export", "File exported"
        DATA_EXPORT = "data_export", "Personal data exported (Art. 15/20)"
        PSEUDONYMISED = "pseudonymised", "Person pseudonymised (Art. 17)"
        AUDIT_PRUNED = "audit_pruned", "Audit rows past retention pruned"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who did it; empty for the system (worker, command) or an anonymous request.",
    )
    action = models.CharField(max_length=40, choices=Action.choices, db_index=True)
    subject_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The person the action was about (a role change, a pseudonymisation), if any.",
    )
    target_type = models.CharField(max_length=60, blank=True, help_text="What was acted on, e.g. 'judge run'.")
    target_id = models.CharField(max_length=100, blank=True)
    target = models.CharField(max_length=300, blank=True, help_text="A short description (never a person's name).")
    detail = models.JSONField(default=dict, blank=True, help_text='Before/after and parameters: {"role": ["expert", "admin"]}.')
    ip = models.GenericIPAddressField(null=True, blank=True)
    path = models.CharField(max_length=300, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit event"
        indexes = [models.Index(fields=["actor", "at"]), models.Index(fields=["subject_user", "at"])]

    def __str__(self) -> str:
        return f"{self.get_action_display()} at {self.at:%Y-%m-%d %H:%M:%S}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditImmutable("audit rows are append-only: an existing row cannot be saved again")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditImmutable("audit rows are append-only: they cannot be deleted")
