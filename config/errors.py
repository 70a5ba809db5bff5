"""Errors: the 500 handler (a lost database becomes 503 + Retry-After) and what error reports may show.

The 500 handler: Django calls `handler500` from inside the `except` block of whichever layer raised, so the
exception is `sys.exc_info()` here — this covers the middleware (session and user loading) as well as the
views. Nothing here touches the database or renders a template that could.

Error reports: Django's own filter hides settings whose names contain API, AUTH, TOKEN, KEY, SECRET, PASS or
SIGNATURE. `SensitiveSettingsFilter` also hides the judge's configuration (the FAITHBENCH setting: its base URL
says which provider and account are used), DATABASE_URL and anything named like a URL with credentials, in
settings, in the request's environment (`request.META` carries the process environment under runserver) and
in the local variables of every frame (the judge client holds its key in a local).
"""
from __future__ import annotations

import re
import sys
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.debug import SafeExceptionReporterFilter

RETRY_AFTER_SECONDS = 5
UNAVAILABLE_HTML = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>Temporarily unavailable</title>"
    "<h1>Temporarily unavailable</h1><p>The database is not answering for a moment. Nothing you saved before "
    "this message was lost; try again in a few seconds.</p></html>"
)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: JSON for the API, a short page (or fragment, for htmx) otherwise."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"detail": "The database is temporarily unavailable; retry shortly.", "code": "unavailable"},
            status=503)
    else:
        response = HttpResponse(UNAVAILABLE_HTML, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: 503 when the exception being handled is a lost or refused database connection."""
    exc = sys.exc_info()[1]
    if isinstance(exc, OperationalError | InterfaceError):
        return database_unavailable(request)
    return defaults.server_error(request)


HIDDEN_NAMES = re.compile(
    r"API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|CREDENTIAL|DATABASE_URL|DSN|BASE_URL|FAITHBENCH|LLM",
    flags=re.IGNORECASE,
)


class SensitiveSettingsFilter(SafeExceptionReporterFilter):
    """Django's filter with a wider list of sensitive names, applied to frame variables too."""

    hidden_settings = HIDDEN_NAMES

    def get_traceback_frame_variables(self, request: Any, tb_frame: Any) -> Any:
        """Every frame's variables, with those whose names look sensitive replaced by stars."""
        variables = super().get_traceback_frame_variables(request, tb_frame)
        return [
            (name, self.cleansed_substitute if isinstance(name, str) and self.hidden_settings.search(name) else value)
            for name, value in variables
        ]
