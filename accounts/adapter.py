"""allauth adapter: sign-up is open only to holders of a pending invitation; role-aware landing page."""
from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from django.http import HttpRequest

from access.policy import Action, allowed

from .models import Invitation

INVITATION_SESSION_KEY = "accounts_invitation_id"


def session_invitation(request: HttpRequest | None) -> Invitation | None:
    """The pending invitation whose link this browser session followed, if any."""
    if request is None or not hasattr(request, "session"):
        return None
    invitation_id = request.session.get(INVITATION_SESSION_KEY)
    if not invitation_id:
        return None
    return Invitation.objects.pending().filter(pk=invitation_id).first()


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        """No public sign-up: only a session that followed a valid invitation link may sign up."""
        return session_invitation(request) is not None

    def save_user(self, request, user, form, commit=True):
        from .services import invitation_accept

        invitation = session_invitation(request)
        user = super().save_user(request, user, form, commit=True)
        if invitation is not None:
            invitation_accept(invitation=invitation, user=user)
            request.session.pop(INVITATION_SESSION_KEY, None)
        return user

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        """Staff land on the calibration overview, everyone else on their scoring queue."""
        user = request.user
        if allowed(user, Action.MANAGE_CALIBRATION):
            return "/calibration/"
        return "/scoring/"
