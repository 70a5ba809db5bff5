"""Bad input never answers 500: every URL of ours, with absurd path values, query values and POST bodies,
for each role, gets a 2xx, 3xx or 4xx. (The API is also fuzzed against its schema: tests/test_api_schema.py.)
"""
from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter

from access.web import MAX_PAGE, query_page, query_whole_number
from tests.annotations.factories import World, world_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db) -> World:  # type: ignore[no-untyped-def]
    return world_build()

THIRD_PARTY = ("admin/", "accounts/2fa/", "accounts/login", "accounts/logout", "accounts/signup", "accounts/password",
               "accounts/email", "accounts/confirm-email", "accounts/inactive", "accounts/reauthenticate",
               "accounts/^", "api/v1/docs/", "api/v1/schema/")
# Every query parameter a view of ours reads (grep request.GET / query_params), plus what paginators read.
PARAMS = ("page", "cycle", "run", "version", "format", "decided", "next")
ABSURD = ("9" * 30, "-1", "abc", "²", "١٢", "1e9", "", "\x00", "x" * 3000, str(2**63), str(MAX_PAGE + 1))
ABSURD_PATH = {"int": ["9" * 30, str(2**63)], "str": ["%00", "x" * 400 + "%F0%9F%98%80"]}


def our_routes() -> list[tuple[str, dict[str, str]]]:
    """(route, {parameter: converter kind}) of every URL pattern outside the third-party apps."""
    found: list[tuple[str, dict[str, str]]] = []

    def walk(patterns: list, prefix: str) -> None:  # type: ignore[type-arg]
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and not route.startswith(THIRD_PARTY):
                kinds = {name: "int" if isinstance(conv, IntConverter) else "str"
                         for name, conv in pattern.pattern.converters.items()}
                found.append((route, kinds))

    walk(get_resolver().url_patterns, "")
    return found


def fill(route: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        route = route.replace(f"<int:{name}>", value).replace(f"<str:{name}>", value)
    return "/" + route


def clients(world: World) -> dict[str, Client]:
    made = {"anonymous": Client()}
    for role, user in (("expert", world.expert), ("adjudicator", world.lead), ("admin", world.admin)):
        made[role] = Client()
        made[role].force_login(user)
    return made


def server_errors(client: Client, method: str, url: str, **extra: object) -> list[str]:
    response = getattr(client, method)(url, **extra)
    return [f"{method.upper()} {url[:120]} → {response.status_code}"] if response.status_code >= 500 else []


def test_absurd_path_values_never_answer_500(world: World) -> None:
    failures: list[str] = []
    for role, client in clients(world).items():
        for route, kinds in our_routes():
            if not kinds:
                continue
            for i in range(max(len(ABSURD_PATH["int"]), len(ABSURD_PATH["str"]))):
                url = fill(route, {name: ABSURD_PATH[kind][i % len(ABSURD_PATH[kind])] for name, kind in kinds.items()})
                failures += [f"{role}: {line}" for line in server_errors(client, "get", url)]
                failures += [f"{role}: {line}" for line in
                             server_errors(client, "post", url, data={"page": "9" * 30, "score": "\x00"})]
    assert failures == [], "\n".join(failures)


def real_urls(world: World) -> list[str]:
    """Pages with real path values, whose views read query parameters."""
    cycle = world.cycle.pk
    return [fill(route, {}) for route, kinds in our_routes() if not kinds] + [
        f"/calibration/cycles/{cycle}/", f"/calibration/cycles/{cycle}/report/",
        f"/calibration/cycles/{cycle}/report.csv", f"/calibration/cycles/{cycle}/report.pdf",
        f"/calibration/cycles/{cycle}/gold/", f"/api/v1/reports/cycles/{cycle}/",
        f"/api/v1/reports/cycles/{cycle}/versions/",
    ]


@pytest.mark.parametrize("value", ABSURD, ids=[repr(v)[:12] for v in ABSURD])
def test_absurd_query_values_never_answer_500(world: World, value: str) -> None:
    query = urlencode({name: value for name in PARAMS})
    failures: list[str] = []
    for role, client in clients(world).items():
        if role == "anonymous":
            continue  # sent to sign-in before any view reads the query
        for url in real_urls(world):
            failures += [f"{role}: {line}" for line in server_errors(client, "get", f"{url}?{query}")]
    assert failures == [], "\n".join(failures)


@pytest.mark.parametrize("url_name", ["/scoring/", "/scoring/lead/", "/scoring/lead/assignments/", "/judge/runs/"])
def test_a_page_number_past_any_list_is_404_and_junk_is_the_first_page(world: World, url_name: str) -> None:
    client = Client()
    client.force_login(world.admin if url_name.startswith("/judge/") else world.lead)
    assert client.get(url_name, {"page": "9" * 30}).status_code == 404
    assert client.get(url_name, {"page": str(MAX_PAGE + 1)}).status_code == 404
    assert client.get(url_name, {"page": "abc"}).status_code == 200
    assert client.get(url_name, {"page": "²"}).status_code == 200


def test_api_query_ids_are_checked_before_the_database(world: World) -> None:
    client = Client()
    client.force_login(world.admin)
    for value in ("abc", "9" * 30, str(2**63), "²", "-3"):
        assert client.get("/api/v1/gold-labels/", {"cycle": value}).status_code == 400, value
        assert client.get("/api/v1/leaderboard/", {"run": value}).status_code == 400, value  # names `run` (issue 33)
        assert client.get(f"/api/v1/reports/cycles/{world.cycle.pk}/", {"version": value}).status_code == 400, value
    assert client.get("/api/v1/gold-labels/", {"cycle": str(2**63 - 1)}).status_code == 404


def test_query_number_parsing() -> None:
    assert query_whole_number("12") == 12 and query_whole_number(str(2**63 - 1)) == 2**63 - 1
    for junk in (None, "", "0", "-1", "²", "١٢", "1e3", " 1", "9" * 30, str(2**63)):
        assert query_whole_number(junk) is None, junk
    assert query_page(None) == 1 and query_page("abc") == 1 and query_page("0") == 1 and query_page("3") == 3
    assert query_page(str(MAX_PAGE)) == MAX_PAGE and query_page(str(MAX_PAGE + 1)) is None and query_page("9" * 30) is None

