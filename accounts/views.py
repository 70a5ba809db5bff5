"""Account pages of our own: following an invitation link, and an expert's profile."""
from __future__ import annotations

from allauth.account.adapter import get_adapter
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.http import AuthedRequest

from .adapter import INVITATION_SESSION_KEY
from .forms import ProfileForm
from .models import ExpertProfile
from .services import invitation_pending_get, profile_update


@require_http_methods(["GET"])
def admin_login(request: HttpRequest) -> HttpResponse:
    """The Django admin signs in through allauth (MFA, rate limits); signed-in non-staff get 403, not a loop."""
    if request.user.is_authenticated:
        if not request.user.is_staff:
            raise PermissionDenied
        return redirect(_safe_next(request))
    query = request.META.get("QUERY_STRING", "")
    return redirect(reverse("account_login") + (f"?{query}" if query else ""))


def _safe_next(request: HttpRequest) -> str:
    url = request.GET.get("next", "")
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}):
        return url
    return "/admin/"


@never_cache
@require_http_methods(["GET"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """Check the token, remember the invitation in the session and continue to sign-up (used up there)."""
    if request.user.is_authenticated:
        messages.info(request, "You are already signed in. Sign out first to accept an invitation.")
        return redirect("/")
    invitation = invitation_pending_get(token=token)
    if invitation is None:
        return render(request, "account/invitation_invalid.html", status=404)
    request.session[INVITATION_SESSION_KEY] = invitation.pk
    # The link reached this inbox, so the address is verified: allauth skips the confirmation email.
    get_adapter(request).stash_verified_email(request, invitation.email)
    return redirect("account_signup")


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: AuthedRequest) -> HttpResponse:
    """The signed-in person's own role and qualifications."""
    instance = ExpertProfile.objects.select_related("tradition").filter(user=request.user).first()
    form = ProfileForm(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        profile_update(user=request.user, **form.cleaned_data)
        messages.success(request, "Profile saved.")
        return redirect("accounts:profile")
    return render(request, "account/profile.html", {"form": form, "profile": instance})
