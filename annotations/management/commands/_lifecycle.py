"""Shared by close_cycle and reopen_cycle: find the cycle and the actor, run the service, report refusals."""
from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import CommandError

from accounts.selectors import user_by_email
from annotations.models import CalibrationCycle
from annotations.selectors import cycle_by_ref


def cycle_lifecycle_run(service: Callable[..., CalibrationCycle], *, cycle: str, by: str,
                        reason: str) -> CalibrationCycle:
    """Run a cycle lifecycle service for the named cycle and actor; every refusal becomes a one-line CommandError."""
    found = cycle_by_ref(ref=cycle)
    if found is None:
        raise CommandError(f"no calibration cycle with id or name {cycle!r}")
    actor = user_by_email(email=by)
    if actor is None:
        raise CommandError(f"no user with email {by!r}")
    try:
        return service(cycle=found, actor=actor, reason=reason)
    except (ValidationError, PermissionDenied) as exc:
        raise CommandError(" ".join(getattr(exc, "messages", None) or [str(exc)])) from exc
