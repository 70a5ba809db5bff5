"""Middleware of the whole site: the health endpoint, one structured log line per request, and bad input refused.

Bad input: 404 for ids past 64 bits, 400 for NUL characters, before any view runs. Django's `<int:…>` converter
accepts any number of digits, but the database holds 64-bit integers (a larger value overflows the driver: a
500); PostgreSQL refuses NUL characters in text (another 500). Query values are parsed by each view
(`evaluations.domain.query_whole_number`, `query_page`); these two rules hold for every URL.
"""
from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.functional import empty

from .health import health_check

HEALTH_PATH = "/healthz"
REQUEST_ID_HEADER = "X-Request-ID"
# A request id from the load balancer is kept when it looks like one; anything else is replaced.
REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")

request_logger = logging.getLogger("faithbench.request")
INT64 = 2**63 - 1


class HealthCheckMiddleware:
    """Answer `/healthz` before anything else runs: no host check (load balancers probe by IP), no session,
    no authentication, no HTTPS redirect, no log line. 200 when the database and a task worker are alive,
    503 otherwise; the JSON says which part failed and nothing more."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.rstrip("/") != HEALTH_PATH:
            return self.get_response(request)
        health = health_check()
        response = JsonResponse(health.as_dict(), status=200 if health.ok else 503)
        response["Cache-Control"] = "no-store"
        return response


def _user_id(request: HttpRequest) -> int | None:
    """The signed-in user's id if the request already loaded the user (a log line never queries)."""
    user = getattr(request, "user", None)
    if user is None:
        return None
    wrapped = getattr(user, "_wrapped", user)
    if wrapped is empty or not getattr(wrapped, "is_authenticated", False):
        return None
    return getattr(wrapped, "pk", None)


class RequestLogMiddleware:
    """Give every request an id (kept from the proxy's X-Request-ID when well formed, echoed in the response)
    and log one line per request: id, method, path, status, duration, user id. The JSON formatter of the
    production settings (config/logging.py) writes it as one JSON object per line."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if REQUEST_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        started = time.perf_counter()
        response = self.get_response(request)
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        response[REQUEST_ID_HEADER] = request_id
        request_logger.info(
            "%s %s %s %.1fms", request.method, request.path, response.status_code, duration_ms,
            extra={"request_id": request_id, "method": request.method, "path": request.path,
                   "status": response.status_code, "duration_ms": duration_ms, "user_id": _user_id(request)},
        )
        return response


class BadInputMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...],
                     kwargs: dict[str, object]) -> None:  # the URL's converted values: any type
        if "\x00" in request.path or any("\x00" in key or "\x00" in value
                                         for key, values in request.GET.lists() for value in values):
            raise BadRequest("NUL characters are not accepted in addresses.")
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not -INT64 - 1 <= value <= INT64:
                raise Http404("no such object")


API_PREFIX = "/api/"


def _too_big(size: int | None) -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    said = f"{size:,} bytes" if size is not None else "too large"
    return JsonResponse({"detail": f"the request body is {said}; the API accepts at most {limit:,} bytes",
                         "errors": [f"body: larger than {limit:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE): send it in "
                                    "several smaller requests"]}, status=413)


class ApiBodyLimitMiddleware:
    """Every API error is JSON, an oversize body's too: a body declared larger than DATA_UPLOAD_MAX_MEMORY_SIZE is
    answered 413 before it is read, and Django's RequestDataTooBig (a body that grew past it while read) becomes
    the same JSON 413 instead of the HTML 400 page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX):
            declared = request.META.get("CONTENT_LENGTH") or ""
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if limit is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
                return _too_big(int(declared))
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith(API_PREFIX) and isinstance(exception, RequestDataTooBig):
            return _too_big(None)
        return None
