"""Background work of calibration reports (django-tasks, database backend: `manage.py run_worker` executes them; `make run` starts one).

Tasks call services; services never call tasks. Views, the CLI and the API call the functions here,
which enqueue once the current transaction commits.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django_tasks import task

from accounts.models import User
from annotations.models import CalibrationCycle
from evidence.models import Snapshot
from evidence.selectors import Citation, snapshot_summary

from .snapshots import report_snapshot_compute, report_snapshot_request


@task()
def report_snapshot_compute_task(snapshot_id: int) -> Citation:
    """Compute a queued report snapshot (idempotent: a snapshot already taken or done is left alone)."""
    return snapshot_summary(report_snapshot_compute(snapshot_id=snapshot_id))


@transaction.atomic
def report_snapshot_start(*, cycle: CalibrationCycle, requested_by: User | None, **options: Any) -> Snapshot:
    """Queue the next version of a cycle's report and hand it to the worker once the request commits."""
    snapshot = report_snapshot_request(cycle=cycle, requested_by=requested_by, **options)
    transaction.on_commit(lambda: report_snapshot_compute_task.enqueue(snapshot.pk))
    return snapshot
