"""Background work of the calibrated leaderboard (django-tasks; `manage.py run_worker`). Tasks call services."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django_tasks import task

from accounts.models import User
from annotations.models import CalibrationCycle
from evaluations.models import JudgeRun
from evidence.models import Snapshot
from evidence.selectors import Citation, snapshot_summary

from .snapshots import calibrated_snapshot_compute, calibrated_snapshot_request


@task()
def calibrated_snapshot_compute_task(snapshot_id: int) -> Citation:
    """Compute a queued calibrated leaderboard (idempotent: one already taken or done is left alone)."""
    return snapshot_summary(calibrated_snapshot_compute(snapshot_id=snapshot_id))


@transaction.atomic
def calibrated_snapshot_start(*, run: JudgeRun, cycle: CalibrationCycle, requested_by: User | None,
                              **options: Any) -> Snapshot:
    """Queue the next version of a run's calibrated leaderboard; the worker gets it once the request commits."""
    snapshot = calibrated_snapshot_request(run=run, cycle=cycle, requested_by=requested_by, **options)
    transaction.on_commit(lambda: calibrated_snapshot_compute_task.enqueue(snapshot.pk))
    return snapshot
