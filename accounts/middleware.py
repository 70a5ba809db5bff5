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


class UserLanguageMiddleware:
    """A signed-in user's interface language (`User.language`) wins over the cookie and the browser's; choosing one
    with the switcher (a POST to Django's `set_language`, templates/base.html) also saves it on the user, so it
    follows them to another browser. After AuthenticationMiddleware, which it reads."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.utils import translation

        from .services import interface_language_codes, user_language_set

        user = getattr(request, "user", None)
        signed_in = user is not None and user.is_authenticated
        switching = request.method == "POST" and request.path == reverse("set_language")
        if signed_in and not switching and user.language in interface_language_codes():  # type: ignore[union-attr]
            translation.activate(user.language)  # type: ignore[union-attr]
            request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if signed_in and switching and response.status_code in (204, 302):
            chosen = request.POST.get("language", "")
            if chosen in interface_language_codes():
                user_language_set(user=user, language=chosen)  # type: ignore[arg-type]
        return response
