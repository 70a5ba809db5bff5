"""Request types for type checkers: what a `login_required` view receives."""
from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from .models import User


class AuthedRequest(HttpRequest):
    """A request of a signed-in user (after `login_required`), with django-htmx's `request.htmx`."""

    user: User
    htmx: HtmxDetails
