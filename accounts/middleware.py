"""Send staff, admins and adjudicators without an activated TOTP authenticator to the MFA set-up page (the rule is
asked of access.policy)."""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from access.policy import mfa_satisfied

# Paths that must stay reachable while MFA is not yet set up: the MFA pages themselves, the rest of
# allauth (logout, password, email), static files, and the invitation link.
EXEMPT_PREFIXES = ("/accounts/", "/static/")


class MfaRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._needs_setup(request):
            target = reverse("mfa_activate_totp")
            if getattr(request, "htmx", False):
                response = HttpResponse(status=204)
                response["HX-Redirect"] = target
                return response
            return HttpResponseRedirect(target)
        return self.get_response(request)

    @staticmethod
    def _needs_setup(request: HttpRequest) -> bool:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or not getattr(user, "requires_mfa", False):
            return False
        if request.path.startswith(EXEMPT_PREFIXES):
            return False
        return not mfa_satisfied(user)
