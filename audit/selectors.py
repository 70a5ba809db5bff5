"""Reads of the audit trail: the admins' filtered list, and the rows about one person (their data export)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from .models import AuditEvent


@dataclass(frozen=True)
class AuditFilter:
    """What the admin page filters by (each optional)."""

    actor_id: int | None = None
    action: str = ""
    since: date | None = None
    until: date | None = None


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def audit_events(*, filters: AuditFilter) -> QuerySet[AuditEvent]:
    """Rows newest first, filtered by actor, action and date range (`until` inclusive)."""
    rows = AuditEvent.objects.select_related("actor", "subject_user")
    if filters.actor_id is not None:
        rows = rows.filter(actor_id=filters.actor_id)
    if filters.action:
        rows = rows.filter(action=filters.action)
    if filters.since is not None:
        rows = rows.filter(at__gte=_day_start(filters.since))
    if filters.until is not None:
        rows = rows.filter(at__lt=_day_start(filters.until + timedelta(days=1)))
    return rows.order_by("-at", "-id")


def audit_events_about(*, user: Any) -> QuerySet[AuditEvent]:
    """Every row in which `user` acted or was acted upon, oldest first."""
    return AuditEvent.objects.about(user).order_by("at", "id")


def audit_event_row(event: AuditEvent) -> dict[str, Any]:
    """One row as plain data (the page, the CSV export and the personal data export)."""
    return {
        "at": event.at.isoformat(), "action": event.action, "action_label": event.get_action_display(),
        "actor_id": event.actor_id, "subject_user_id": event.subject_user_id, "target_type": event.target_type,
        "target_id": event.target_id, "target": event.target, "detail": event.detail, "ip": event.ip or "",
        "path": event.path,
    }
