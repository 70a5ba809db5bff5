"""Who may use the calibration pages: staff (admins) only."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse


def is_calibration_admin(user: object) -> bool:
    return bool(getattr(user, "is_active", False) and getattr(user, "is_staff", False))


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed-in staff only: anonymous users go to the sign-in page, everyone else gets 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not is_calibration_admin(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped
