"""Permission matrix helper: URLs × roles → expected outcome, asserted in one go with every mismatch listed.

Outcomes: "allow" (served: 2xx, a redirect elsewhere than sign-in, or a 409/422 answer to a valid
request), "login" (redirect to the sign-in page), "403", "404" (the resource's existence is not
confirmed), "405".
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.test import Client

LOGIN_PREFIX = "/accounts/login/"


@dataclass(frozen=True)
class Case:
    name: str  # URL name (namespace:name) — the coverage check compares these with the URLconf
    url: str
    expect: Mapping[str, str]
    method: str = "get"
    data: Mapping[str, str] = field(default_factory=dict)
    htmx: bool = False


def outcome(response) -> str:  # type: ignore[no-untyped-def]
    """Classify a response as one of the matrix outcomes."""
    status = response.status_code
    if status in (301, 302, 303, 307, 308):
        return "login" if response["Location"].startswith(LOGIN_PREFIX) else "allow"
    if status in (401, 403):
        return "403"
    if status in (404, 405):
        return str(status)
    if status >= 500:
        return f"error {status}"
    return "allow"


def matrix_failures(cases: Iterable[Case], clients: Mapping[str, Client]) -> list[str]:
    """Run every case for every role that has an expectation; return 'role METHOD url: expected X, got Y' lines."""
    failures: list[str] = []
    for case in cases:
        for role, expected in case.expect.items():
            client = clients[role]
            headers = {"HTTP_HX_REQUEST": "true"} if case.htmx else {}
            response = getattr(client, case.method)(case.url, data=dict(case.data), **headers)
            got = outcome(response)
            if got != expected:
                failures.append(f"{role:<18} {case.method.upper():<4} {case.url}: expected {expected}, got {got} "
                                f"({response.status_code})")
    return failures


def roles(expect_anonymous: str, expert: str, other_panel_expert: str, adjudicator: str, admin: str) -> dict[str, str]:
    """Expectations in the fixed role order, to keep the matrix readable as a table."""
    return {"anonymous": expect_anonymous, "expert": expert, "other_panel_expert": other_panel_expert,
            "adjudicator": adjudicator, "admin": admin}
