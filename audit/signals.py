"""Sign-ins, failed sign-ins and sign-outs (Django's auth signals, which allauth's sign-in sends too)."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.http import HttpRequest

from .models import AuditEvent
from .services import audit_record, identifier_digest


def _signed_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    audit_record(action=AuditEvent.Action.SIGN_IN, actor=user, subject_user=user, request=request,
                 target_type="user", target_id=user.pk)


def _signed_out(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if user is not None and getattr(user, "pk", None):
        audit_record(action=AuditEvent.Action.SIGN_OUT, actor=user, subject_user=user, request=request,
                     target_type="user", target_id=user.pk)


def _sign_in_failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                    **kwargs: Any) -> None:
    # The identifier is not stored (it may be a mistyped stranger's address): its digest, and the account it
    # names if there is one, so repeated failures against an account are visible to that account's admin.
    identifier = str(credentials.get("email") or credentials.get("username") or credentials.get("login") or "")
    model = get_user_model()
    subject = model._default_manager.filter(email__iexact=identifier).first() if identifier else None
    audit_record(action=AuditEvent.Action.SIGN_IN_FAILED, actor=None, subject_user=subject, request=request,
                 target_type="user", target_id=subject.pk if subject else "",
                 detail={"identifier_sha256": identifier_digest(identifier) if identifier else ""})


def auth_receivers_connect() -> None:
    """Connect the receivers (from AuditConfig.ready); idempotent by dispatch_uid."""
    user_logged_in.connect(_signed_in, dispatch_uid="audit_sign_in")
    user_logged_out.connect(_signed_out, dispatch_uid="audit_sign_out")
    user_login_failed.connect(_sign_in_failed, dispatch_uid="audit_sign_in_failed")
