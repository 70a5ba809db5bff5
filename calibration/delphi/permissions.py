"""Who may do what in a Delphi study.

* Anonymous users go to the sign-in page.
* A study exists, as far as a user can tell, only if they are staff or one of its panelists: everyone
  else gets 404 for every URL under it (the same answer as for a study that does not exist).
* Panelists see the study page and their own allocation form, with the anonymised group feedback.
* Staff see everything and run the study (create, close rounds, close, approve); a panelist who is not
  staff gets 403 for those actions.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .selectors import is_delphi_admin


def delphi_staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed-in staff only for pages that are not about one study (anonymous → sign-in, others → 403)."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not is_delphi_admin(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def require_delphi_admin(user: object) -> None:
    """Within a study the user can see: actions that run the study are staff-only (403)."""
    if not is_delphi_admin(user):
        raise PermissionDenied
