"""Request types for type checkers (what a `login_required` view receives), and the file-download response."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django_htmx.middleware import HtmxDetails

from .models import User


class AuthedRequest(HttpRequest):
    """A request of a signed-in user (after `login_required`), with django-htmx's `request.htmx`."""

    user: User
    htmx: HtmxDetails


def download_response(content: bytes, *, filename: str, content_type: str) -> HttpResponse:
    """An exporter's bytes as a download named `filename` (views pick the exporter; this only sends it)."""
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
