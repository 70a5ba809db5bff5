"""Where a person lands after signing in: the page where work waits for them.

Admins land on the calibration overview; a panel lead (or adjudicator) with items waiting for a decision on
Adjudication; everyone else on their scoring queue. The rule needs the adjudication queue, which lives above
`accounts`, so the sign-in adapter that asks it lives here (settings' ACCOUNT_ADAPTER).
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from access.policy import Action, allowed
from accounts.adapter import AccountAdapter

from .adjudication.selectors import adjudication_waiting


def landing_url(user: Any) -> str:
    """The first page for `user`: calibration overview (admins), Adjudication (items waiting), else My queue."""
    if allowed(user, Action.MANAGE_CALIBRATION):
        return reverse("calibration:index")
    if allowed(user, Action.ADJUDICATE) and adjudication_waiting(user=user) > 0:
        return reverse("calibration:adjudication_queue")
    return reverse("annotations:queue")


class LandingAccountAdapter(AccountAdapter):
    """The accounts adapter (invitation-only sign-up), landing each person where their work waits."""

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        return landing_url(request.user)
