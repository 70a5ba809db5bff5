"""/healthz: 200 with a live database and a recent worker heartbeat, 503 when either is missing."""
from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from config.health import worker_heartbeat_beat, worker_heartbeat_start
from config.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def health(client):  # type: ignore[no-untyped-def]
    response = client.get("/healthz")
    return response, json.loads(response.content)


def test_healthy_when_a_worker_beat_recently(client) -> None:  # type: ignore[no-untyped-def]
    worker_heartbeat_beat(worker_id="w1", started_at=timezone.now())
    response, body = health(client)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    assert body["status"] == "ok" and body["database"] is True and body["worker"] is True
    assert 0 <= body["worker_heartbeat_age_seconds"] < 5
    assert body["workers_alive"] == 1


def test_unhealthy_without_any_worker(client) -> None:  # type: ignore[no-untyped-def]
    response, body = health(client)
    assert response.status_code == 503
    assert body == {"status": "unavailable", "database": True, "database_ms": body["database_ms"],
                    "worker": False, "worker_heartbeat_age_seconds": None, "workers_alive": 0}


def test_unhealthy_when_the_worker_stopped_beating(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.HEALTH_WORKER_MAX_AGE = 60
    worker_heartbeat_beat(worker_id="w1", started_at=timezone.now())
    WorkerHeartbeat.objects.update(beat_at=timezone.now() - timedelta(seconds=61))
    response, body = health(client)
    assert response.status_code == 503
    assert body["worker"] is False and body["database"] is True
    assert 61 <= body["worker_heartbeat_age_seconds"] < 70
    assert body["workers_alive"] == 0


def test_unhealthy_when_the_database_fails(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    worker_heartbeat_beat(worker_id="w1", started_at=timezone.now())

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise DatabaseError("connection refused")

    monkeypatch.setattr("django.db.backends.utils.CursorWrapper.execute", refuse)
    response, body = health(client)
    assert response.status_code == 503
    assert body["database"] is False and body["status"] == "unavailable"


def test_health_needs_no_sign_in_no_known_host_and_says_nothing_sensitive(client) -> None:  # type: ignore[no-untyped-def]
    worker_heartbeat_beat(worker_id="secret-worker-id", started_at=timezone.now())
    response = client.get("/healthz", HTTP_HOST="10.0.0.7")  # a load balancer probing by IP address
    assert response.status_code == 200
    text = response.content.decode()
    assert "secret-worker-id" not in text and "hostname" not in text and "pid" not in text
    assert "sessionid" not in response.cookies and "csrftoken" not in response.cookies


# Transactional (the thread has its own connection); the flush afterwards puts the migration's reference data
# back for the tests that follow (tests/conftest.py).
@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_thread_writes_a_row_and_stops() -> None:  # type: ignore[no-untyped-def]
    from tests.e2e.scoring_helpers import read  # retries a read while the thread holds SQLite's table lock

    stop = worker_heartbeat_start(worker_id="thread-worker", interval=0.05)

    def beat() -> object:
        return read(lambda: WorkerHeartbeat.objects.filter(worker_id="thread-worker")
                    .values_list("beat_at", flat=True).first())

    try:
        deadline = timezone.now() + timedelta(seconds=5)
        while beat() is None and timezone.now() < deadline:
            stop.wait(0.05)
        first = beat()
        assert first is not None, "no heartbeat row within 5 s"
        while beat() == first and timezone.now() < deadline:
            stop.wait(0.05)
        assert beat() > first  # type: ignore[operator]  # it keeps beating
    finally:
        stop.set()


def test_request_log_line_has_id_user_path_status_duration(client, caplog) -> None:  # type: ignore[no-untyped-def]
    from tests.annotations.factories import person

    user = person()
    client.force_login(user)
    with caplog.at_level(logging.INFO, logger="faithbench.request"):
        response = client.get("/scoring/", HTTP_X_REQUEST_ID="lb-request-12345")
    assert response.status_code == 200
    assert response["X-Request-ID"] == "lb-request-12345"
    [record] = [r for r in caplog.records if r.name == "faithbench.request"]
    assert (record.request_id, record.path, record.status, record.user_id) == (  # type: ignore[attr-defined]
        "lb-request-12345", "/scoring/", 200, user.pk)
    assert record.duration_ms > 0  # type: ignore[attr-defined]


def test_a_malformed_request_id_is_replaced(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/accounts/login/", HTTP_X_REQUEST_ID='x"; drop')
    assert len(response["X-Request-ID"]) == 32 and '"' not in response["X-Request-ID"]


def test_json_formatter_writes_one_object_per_line_with_the_extra_fields() -> None:
    from config.logging import JsonFormatter

    record = logging.LogRecord("faithbench.request", logging.INFO, __file__, 1, "GET %s", ("/x",), None)
    record.request_id, record.user_id, record.status = "abc", 7, 200
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "GET /x" and entry["level"] == "INFO" and entry["logger"] == "faithbench.request"
    assert (entry["request_id"], entry["user_id"], entry["status"]) == ("abc", 7, 200)


@pytest.mark.django_db(transaction=True)
def test_run_worker_records_a_heartbeat_that_makes_health_ok(client, settings) -> None:  # type: ignore[no-untyped-def]
    """`manage.py run_worker` is db_worker plus the heartbeat: after a batch run /healthz sees a worker."""
    from django.core.management import call_command

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert health(client)[0].status_code == 503
    call_command("run_worker", "--batch", "--no-startup-delay", "--no-reload", "--worker-id", "batch-1", verbosity=0)
    beat = WorkerHeartbeat.objects.get(worker_id="batch-1")
    assert beat.pid > 0 and beat.started_at <= beat.beat_at
    response, body = health(client)
    assert response.status_code == 200 and body["workers_alive"] == 1
