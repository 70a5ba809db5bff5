"""`manage.py worker_health`, compose's healthcheck of the worker service: healthy only while a worker on this host
beat within HEALTH_WORKER_MAX_AGE."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from config.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def health(*args: str) -> int:
    try:
        call_command("worker_health", *args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def beat(worker_id: str, *, host: str, seconds_ago: float) -> None:
    at = timezone.now() - timedelta(seconds=seconds_ago)
    WorkerHeartbeat.objects.create(worker_id=worker_id, hostname=host, started_at=at, beat_at=at)


def test_healthy_only_while_a_worker_on_this_host_beats(settings, capsys) -> None:  # type: ignore[no-untyped-def]
    settings.HEALTH_WORKER_MAX_AGE = 60
    assert health() == 1 and "no task worker has beaten" in capsys.readouterr().err
    beat("elsewhere", host="another-container", seconds_ago=1)
    assert health() == 1  # another container's worker does not make this one healthy
    assert health("--any-host") == 0
    beat("here-old", host=socket.gethostname(), seconds_ago=120)
    assert health() == 1 and "120 s old" in capsys.readouterr().err
    beat("here", host=socket.gethostname(), seconds_ago=2)
    assert health() == 0
