"""Account pages of our own: following an invitation link, and an expert's profile."""
from __future__ import annotations

from allauth.account.adapter import get_adapter
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from access.policy import Action, require
from access.web import query_whole_number
from accounts.http import AuthedRequest

from .adapter import INVITATION_SESSION_KEY
from .forms import ApiTokenCreateForm, ProfileForm
from .mfa import mfa_satisfied
from .models import ApiToken, Notification, User
from .notifications import notifications_mark_read
from .selectors import api_tokens_of, expert_profile_get, notifications_of
from .services import (
    api_token_create,
    api_token_revoke,
    invitation_pending_get,
    profile_update,
    user_email_mode_set,
)


@require_http_methods(["GET"])
def admin_login(request: HttpRequest) -> HttpResponse:
    """The Django admin signs in through allauth (MFA, rate limits); signed-in non-staff get 403, not a loop."""
    if request.user.is_authenticated:
        require(request.user, Action.ADMIN_SITE)
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
    instance = expert_profile_get(user=request.user)
    form = ProfileForm(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        profile_update(user=request.user, **form.cleaned_data)
        messages.success(request, "Profile saved.")
        return redirect("accounts:profile")
    # A refused form is a 422 with its errors (like every form of ours), never a 200 that looks saved.
    return render(request, "account/profile.html", {"form": form, "profile": instance},
                  status=422 if request.method == "POST" else 200)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: AuthedRequest) -> HttpResponse:
    """The signed-in person's API tokens; a POST creates one and shows its secret on this answer only."""
    form = ApiTokenCreateForm(request.POST or None)
    secret = ""
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                token, secret = api_token_create(user=request.user, **form.cleaned_data)
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                messages.success(request, f"Token \u201c{token.name}\u201d created. Copy its secret now: it is not shown again.")
                form = ApiTokenCreateForm()
        if not secret:
            status = 400
    tokens = api_tokens_of(user=request.user)
    return render(request, "account/api_tokens.html", {
        "form": form, "tokens": tokens, "secret": secret, "mfa_ok": mfa_satisfied(request.user),
    }, status=status)


@login_required
@require_http_methods(["POST"])
def api_token_revoke_view(request: AuthedRequest, pk: int) -> HttpResponse:
    """Revoke one of the signed-in person's tokens (another person's token is a 404)."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    api_token_revoke(token=token)
    messages.success(request, f"Token \u201c{token.name}\u201d revoked.")
    return redirect("accounts:api_tokens")


INBOX_PAGE_SIZE = 50


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def inbox(request: AuthedRequest) -> HttpResponse:
    """The signed-in person's notifications, newest first; POST marks one (id) or all of them read, and sets how
    they are emailed."""
    if request.method == "POST":
        if "email_mode" in request.POST:
            mode = request.POST["email_mode"]
            try:
                user_email_mode_set(user=request.user, mode=mode)
            except ValidationError:
                messages.error(request, "Choose one of the email options.")
                return redirect("accounts:inbox")
            messages.success(request, f"Email: {User.EmailMode(mode).label.lower()}.")
            return redirect("accounts:inbox")
        raw = request.POST.get("id", "")
        if raw:
            note_id = query_whole_number(raw)
            if note_id is None:
                return HttpResponse("id must be a whole number", status=400)
            note = get_object_or_404(Notification, pk=note_id, user=request.user)  # another's: 404
            notifications_mark_read(user=request.user, ids=[note.pk])
            if request.POST.get("follow") and note.link.startswith("/"):
                return redirect(note.link)
        else:
            notifications_mark_read(user=request.user)
        return redirect("accounts:inbox")
    page = Paginator(notifications_of(user=request.user), INBOX_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "account/inbox.html", {"page_obj": page, "email_modes": User.EmailMode.choices,
                                                  "email_mode": request.user.email_mode})
