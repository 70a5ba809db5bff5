"""Permission matrix helper: URLs × roles → expected outcome, asserted in one go with every mismatch listed.

Outcomes: "allow" (served: 2xx, a redirect elsewhere than sign-in, or a 409/422 answer to a valid
request), "login" (redirect to the sign-in page), "admin-login" (the admin site's refusal: a redirect to
its login URL, which sends the anonymous to sign in and answers 403 to anyone else), "403", "404" (the resource's existence is not
confirmed), "405".
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.test import Client

LOGIN_PREFIX = "/accounts/login/"
ADMIN_LOGIN_PREFIX = "/admin/login/"  # Django's admin site sends whoever it refuses there (which signs in or 403s)


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
        location = response["Location"]
        if location.startswith(LOGIN_PREFIX):
            return "login"
        return "admin-login" if location.startswith(ADMIN_LOGIN_PREFIX) else "allow"
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


def roles(expect_anonymous: str, expert: str, other_panel_expert: str, adjudicator: str, admin: str, *,
          panel_lead: str | None = None, staff: str | None = None) -> dict[str, str]:
    """Expectations in the fixed role order, to keep the matrix readable as a table.

    Two more identities, which the earlier permission checks disagreed about (access.policy settles them):
    `panel_lead`, an Expert-role user who leads a panel of their own (not the one the world's items are in),
    behaves like an expert of another panel unless stated; `staff`, an Expert-role user with Django's staff
    flag, behaves like the admin unless stated.
    """
    return {"anonymous": expect_anonymous, "expert": expert, "other_panel_expert": other_panel_expert,
            "adjudicator": adjudicator, "admin": admin,
            "panel_lead": other_panel_expert if panel_lead is None else panel_lead,
            "staff": admin if staff is None else staff}


def extra_identities(*, tradition=None) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The `panel_lead` and `staff` users of `roles` (signed in by the matrices' client fixtures)."""
    from accounts.services import user_create
    from annotations.models import Panel

    panel_lead = user_create(email="matrix-panel-lead@faithbench.test", password="pw-test-1234",
                             role="expert", display_name="Matrix Panel Lead", tradition=tradition)
    Panel.objects.create(name="Matrix panel", tradition=None, lead=panel_lead)
    staff = user_create(email="matrix-staff@faithbench.test", password="pw-test-1234", role="expert",
                        display_name="Matrix Staff", tradition=tradition, is_staff=True)
    return {"panel_lead": panel_lead, "staff": staff}
