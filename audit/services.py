"""Writes on the audit trail: one row per action, in the action's own transaction; the retention prune."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from .context import RequestInfo, current_request_info, request_info
from .models import AuditEvent

Action = AuditEvent.Action
_FROM_REQUEST: Any = object()  # the actor is the signed-in user of the request being served (else the system)


def audit_retention_days() -> int:
    """How long rows are kept (`AUDIT_RETENTION_DAYS`, at least 1)."""
    return max(1, int(getattr(settings, "AUDIT_RETENTION_DAYS", 365)))


def identifier_digest(identifier: str) -> str:
    """A short SHA-256 of a sign-in identifier: failures against one address can be counted without storing it."""
    return hashlib.sha256(identifier.strip().lower().encode()).hexdigest()[:16]


@transaction.atomic
def audit_record(
    *,
    action: str,
    actor: Any = _FROM_REQUEST,
    subject_user: Any = None,
    subject_user_id: int | None = None,
    target_type: str = "",
    target_id: object = "",
    target: str = "",
    detail: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
) -> AuditEvent:
    """Append one row. Called inside the transaction of the action it records, so both commit or neither does.

    `actor` defaults to the signed-in user of `request` (or of the request being served); None is the system.
    `subject_user` (or its id) is the person the action is about.
    """
    if action not in Action.values:
        raise ValueError(f"action: unknown audit action {action!r}")
    info: RequestInfo | None = request_info(request) if request is not None else current_request_info()
    if actor is _FROM_REQUEST:
        actor = info.user if info is not None else None
    if actor is not None and not getattr(actor, "pk", None):
        actor = None  # an anonymous or unsaved user is nobody
    return AuditEvent.objects.create(
        action=action, actor=actor, subject_user_id=subject_user.pk if subject_user is not None else subject_user_id,
        target_type=target_type[:60],
        target_id=str(target_id)[:100], target=target[:300], detail=detail or {},
        ip=info.ip if info is not None else None, path=info.path if info is not None else "",
    )


def audit_download(*, snapshot: Any, fmt: str, filename: str, response: HttpResponse) -> AuditEvent:
    """Record the download of one stored evidence file (which snapshot, which version, which format) and mark the
    response as recorded, so the export record of the middleware does not count it twice."""
    event = audit_record(
        action=Action.DOWNLOAD, target_type="snapshot", target_id=snapshot.pk, target=filename,
        detail={"kind": str(snapshot.kind), "subject": str(snapshot.subject), "version": snapshot.version,
                "format": fmt, "input_hash": snapshot.input_hash},
    )
    response.audit_recorded = True  # type: ignore[attr-defined]
    return event


def audit_export_response(*, request: HttpRequest, response: HttpResponse) -> AuditEvent | None:
    """Record a successful answer that is a file to keep (`Content-Disposition: attachment`): every CSV, JSON or
    bundle export of every page, whichever view made it. Downloads recorded by their view are skipped."""
    disposition = response.get("Content-Disposition", "") if hasattr(response, "get") else ""
    if (not disposition.lower().startswith("attachment") or getattr(response, "audit_recorded", False)
            or not 200 <= response.status_code < 300):
        return None
    filename = disposition.split("filename=", 1)[-1].strip('"') if "filename=" in disposition else ""
    event = audit_record(
        action=Action.EXPORT, request=request, target_type="export", target=filename,
        detail={"query": request.META.get("QUERY_STRING", "")[:500], "method": request.method or "GET"},
    )
    response.audit_recorded = True  # type: ignore[attr-defined]
    return event


@transaction.atomic
def audit_prune(*, now: datetime | None = None, days: int | None = None, actor: Any = None) -> int:
    """Delete the rows older than the retention time (`AUDIT_RETENTION_DAYS`) and record the prune itself; returns
    how many rows went. The one place rows are removed (the model and its queryset refuse deletion)."""
    days = audit_retention_days() if days is None else days
    if days < 1:
        raise ValueError("days: the retention time is at least 1 day")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    if connection.vendor == "postgresql":  # the trigger of migration 0002 lets this transaction delete, no other
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL faithbench.audit_prune = 'on'")
    old = AuditEvent.objects.filter(at__lt=cutoff)
    deleted, _ = models.QuerySet.delete(old)  # the guarded queryset's own delete() refuses, by design
    if connection.vendor == "postgresql":  # and not for the rest of an enclosing transaction
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL faithbench.audit_prune = 'off'")
    audit_record(action=Action.AUDIT_PRUNED, actor=actor, target_type="audit trail",
                 detail={"deleted": deleted, "before": cutoff.isoformat(), "retention_days": days})
    return deleted


def audit_snapshot_computed(*, snapshot_id: int, kind: str, subject: str, version: int,
                            input_hash: str) -> AuditEvent:
    """Record that a queued evidence version was computed and stored (by the worker: the system acts)."""
    return audit_record(action=Action.SNAPSHOT_COMPUTED, actor=None, target_type="snapshot", target_id=snapshot_id,
                        target=f"{kind} {subject}", detail={"kind": kind, "subject": subject, "version": version,
                                                            "input_hash": input_hash})
