"""The request an action happens in, for rows recorded without a request at hand (signal receivers, services).

`AuditContextMiddleware` (after authentication) remembers each request while it is served; the worker and
commands have none, so their rows name no actor (the system). The user is read only when a row is written, so a
request that records nothing costs no query.
"""
from __future__ import annotations

import ipaddress
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest


@dataclass(frozen=True)
class RequestInfo:
    user: Any
    ip: str | None
    path: str


_current: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)


def request_info(request: HttpRequest) -> RequestInfo:
    """Who (the signed-in user, else None), from which address and on which path a request is made."""
    user = getattr(request, "user", None)
    if user is not None and not getattr(user, "is_authenticated", False):
        user = None
    return RequestInfo(user=user, ip=client_ip(request), path=request.path[:300])


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or — behind N proxies we trust (`DJANGO_TRUSTED_PROXY_COUNT`, the
    setting the sign-in rate limits use) — the address the outermost trusted proxy saw. X-Forwarded-For is
    otherwise written by the client and not believed."""
    count = int(getattr(settings, "ALLAUTH_TRUSTED_PROXY_COUNT", 0) or 0)
    if count > 0:
        hops = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(hops) >= count:
            candidate = hops[-count]
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                return None
    return request.META.get("REMOTE_ADDR") or None


def current_request_info() -> RequestInfo | None:
    """The request being served by this thread (None in the worker, commands and tests without a request)."""
    request = _current.get()
    return None if request is None else request_info(request)


def request_remember(request: HttpRequest) -> Token[HttpRequest | None]:
    """Make `request` the current one (the middleware resets it with the returned token)."""
    return _current.set(request)


def request_forget(token: Token[HttpRequest | None]) -> None:
    _current.reset(token)
