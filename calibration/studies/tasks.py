"""Background work of study reports (django-tasks, database backend: `manage.py run_worker` executes them; `make run` starts one)."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django_tasks import task

from accounts.models import User
from evidence.models import Snapshot
from evidence.selectors import Citation, snapshot_summary

from ..models import Study
from .snapshots import study_snapshot_compute, study_snapshot_request


@task()
def study_snapshot_compute_task(snapshot_id: int) -> Citation:
    """Compute a queued study snapshot (idempotent: a snapshot already taken or done is left alone)."""
    return snapshot_summary(study_snapshot_compute(snapshot_id=snapshot_id))


@transaction.atomic
def study_snapshot_start(*, study: Study, requested_by: User | None, **options: Any) -> Snapshot:
    """Queue the next version of a study's report and hand it to the worker once the request commits."""
    snapshot = study_snapshot_request(study=study, requested_by=requested_by, **options)
    transaction.on_commit(lambda: study_snapshot_compute_task.enqueue(snapshot.pk))
    return snapshot
