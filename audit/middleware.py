"""The audit trail's middleware: the current request for rows written without one at hand; attachments recorded."""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .context import request_forget, request_remember
from .services import audit_export_response


class AuditContextMiddleware:
    """Remembers the request while the view runs; records the attachments (exports) it answers with."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = request_remember(request)
        try:
            response = self.get_response(request)
            audit_export_response(request=request, response=response)
            return response
        finally:
            request_forget(token)
