"""The one MFA rule: staff, admins and adjudicators must have an active TOTP authenticator.

Asked by the web middleware (before any page), by API token creation and by API token authentication,
so a token cannot do what its owner's browser session may not.
"""
from __future__ import annotations

from allauth.mfa.models import Authenticator
from django.conf import settings

from .models import User


def mfa_enforced() -> bool:
    """Whether the rule is on (only the test settings turn it off, for tests that are not about it)."""
    return bool(getattr(settings, "ACCOUNTS_MFA_REQUIRED", True))


def mfa_satisfied(user: User) -> bool:
    """True unless `user` must use TOTP (see `User.requires_mfa`) and has no active TOTP authenticator."""
    if not mfa_enforced() or not user.requires_mfa:
        return True
    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()
