"""A lost database connection answers 503 + Retry-After (the client retries), never a 500 — in a view or in
the middleware before it — and other errors still answer 500."""
from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError, connection

from tests.annotations.factories import world  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(client):  # type: ignore[no-untyped-def]
    client.raise_request_exception = False  # answer as the server would, instead of re-raising in the test
    return client


def autosave(client, world):  # type: ignore[no-untyped-def]  # noqa: F811
    client.force_login(world.expert)
    assignment = world.assignments(world.expert)[0]
    return client.post(f"/scoring/a/{assignment.public_id}/draft/", {"rationale": "x"}, HTTP_HX_REQUEST="true")


def test_connection_lost_in_a_view_is_503_with_retry_after(client, world, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    def dropped(**kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr("annotations.views.annotation_draft_save", dropped)
    response = autosave(client, world)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"Temporarily unavailable" in response.content


def test_connection_lost_while_the_middleware_loads_the_session_is_503(client, world, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    client.force_login(world.expert)

    def dropped(self):  # type: ignore[no-untyped-def]
        raise InterfaceError("connection already closed")

    monkeypatch.setattr("django.contrib.sessions.backends.db.SessionStore.load", dropped)
    response = client.get("/scoring/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"


@pytest.mark.postgres
def test_a_terminated_backend_is_503_not_500(client, world) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The real thing on PostgreSQL: the server ends this session's backend (as a restart would)."""
    client.force_login(world.expert)
    assignment = world.assignments(world.expert)[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    import psycopg

    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k in {"host", "port", "user", "dbname",
                                                                          "password"}}, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    response = client.get(f"/scoring/a/{assignment.public_id}/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    connection.close()  # the test's own connection is gone; pytest-django reconnects for teardown


def test_the_api_gets_json(client, world, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from django.contrib.sessions.backends.db import SessionStore

    client.force_login(world.admin)

    def dropped(self):  # type: ignore[no-untyped-def]
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(SessionStore, "load", dropped)
    response = client.get("/api/v1/")
    assert response.status_code == 503
    assert response.json()["code"] == "unavailable"


def test_other_errors_stay_500(client, world, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    def broken(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    monkeypatch.setattr("annotations.views.annotation_draft_save", broken)
    response = autosave(client, world)
    assert response.status_code == 500
    assert "Retry-After" not in response
