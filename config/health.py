"""Health of a deployment: is the database reachable, is a task worker alive (its heartbeat is recent)?

The task worker (`manage.py run_worker`) runs a daemon thread that upserts its `WorkerHeartbeat` row every
`HEALTH_WORKER_BEAT_SECONDS`; `/healthz` reads the newest row. The thread beats while a long task (a judge
run, a report snapshot) occupies the worker's main loop, so a busy worker is not reported dead; a worker
whose process is gone or cannot reach the database stops beating and shows up after
`HEALTH_WORKER_MAX_AGE` seconds.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from .models import WorkerHeartbeat

logger = logging.getLogger("faithbench.worker")


def worker_heartbeat_beat(*, worker_id: str, started_at: datetime) -> None:
    """Record that this worker process is alive now (one upsert)."""
    WorkerHeartbeat.objects.update_or_create(
        worker_id=worker_id,
        defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()[:255], "pid": os.getpid()},
        create_defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()[:255], "pid": os.getpid(),
                         "started_at": started_at},
    )


def worker_heartbeats_prune(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Forget workers that have not beaten for a day (restarts leave their rows behind)."""
    deleted, _ = WorkerHeartbeat.objects.filter(beat_at__lt=timezone.now() - older_than).delete()
    return deleted


def worker_heartbeat_start(*, worker_id: str, interval: float | None = None) -> threading.Event:
    """Start the heartbeat thread of this worker process; set the returned event to stop it."""
    interval = interval if interval is not None else settings.HEALTH_WORKER_BEAT_SECONDS
    stop = threading.Event()
    started_at = timezone.now()

    def beat_forever() -> None:
        while not stop.wait(interval):
            try:
                worker_heartbeat_beat(worker_id=worker_id, started_at=started_at)
            except DatabaseError:
                logger.warning("worker heartbeat: database unreachable", exc_info=True)
                connections.close_all()  # this thread's connection; the next beat reconnects
        connections.close_all()

    worker_heartbeat_beat(worker_id=worker_id, started_at=started_at)  # the row exists once the worker has started

    threading.Thread(target=beat_forever, name="worker-heartbeat", daemon=True).start()
    return stop


@dataclass(frozen=True)
class WorkerStatus:
    """Whether a task worker is alive (its newest heartbeat is recent), for pages that wait for one."""

    alive: bool
    seen_seconds_ago: float | None  # None: no worker has ever reported itself on this database

    @property
    def never_seen(self) -> bool:
        return self.seen_seconds_ago is None


def worker_status() -> WorkerStatus:
    """The newest worker heartbeat, read once (one query); an unreachable database counts as no worker."""
    try:
        newest = WorkerHeartbeat.objects.order_by("-beat_at").values_list("beat_at", flat=True).first()
    except DatabaseError:
        logger.warning("worker status: database unreachable", exc_info=True)
        return WorkerStatus(alive=False, seen_seconds_ago=None)
    if newest is None:
        return WorkerStatus(alive=False, seen_seconds_ago=None)
    age = max(0.0, round((timezone.now() - newest).total_seconds(), 1))
    return WorkerStatus(alive=age <= settings.HEALTH_WORKER_MAX_AGE, seen_seconds_ago=age)


@dataclass(frozen=True)
class Health:
    """What /healthz answers: no names, hosts or versions, only whether the parts work."""

    database: bool
    database_ms: float | None
    worker: bool
    worker_heartbeat_age_seconds: float | None
    workers_alive: int

    @property
    def ok(self) -> bool:
        return self.database and self.worker

    def as_dict(self) -> dict[str, object]:
        return {"status": "ok" if self.ok else "unavailable", **asdict(self)}


def health_check() -> Health:
    """Ask the database for `SELECT 1` and the newest worker heartbeat; never raises."""
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        database_ms: float | None = round((time.perf_counter() - started) * 1000, 1)
        newest = WorkerHeartbeat.objects.order_by("-beat_at").values_list("beat_at", flat=True).first()
        max_age = settings.HEALTH_WORKER_MAX_AGE
        cutoff = timezone.now() - timedelta(seconds=max_age)
        alive = WorkerHeartbeat.objects.filter(beat_at__gte=cutoff).count()
    except DatabaseError:
        logger.warning("health check: database unreachable", exc_info=True)
        return Health(database=False, database_ms=None, worker=False, worker_heartbeat_age_seconds=None,
                      workers_alive=0)
    age = None if newest is None else round((timezone.now() - newest).total_seconds(), 1)
    return Health(database=True, database_ms=database_ms, worker=age is not None and age <= max_age,
                  worker_heartbeat_age_seconds=age, workers_alive=alive)


def worker_heartbeat_newest(*, hostname: str | None = None) -> datetime | None:
    """When a task worker (on `hostname`, or anywhere) last beat, or None; DatabaseError propagates."""
    beats = WorkerHeartbeat.objects.all() if hostname is None else WorkerHeartbeat.objects.filter(hostname=hostname)
    return beats.order_by("-beat_at").values_list("beat_at", flat=True).first()
