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
from .uploads import PendingUpload, upload_job_queued, upload_job_run


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


@task()
def study_upload_task(token: str, study: str, fmt: str, name: str, options: dict[str, Any], dry_run: bool) -> str:
    """Check (dry run) or import an uploaded ratings file on the worker; its progress and outcome go to the upload's
    state (calibration/studies/uploads.py). Returns the final status."""
    return str(upload_job_run(token=token, study=study, fmt=fmt, name=name, options=options, dry_run=dry_run)["status"])


def study_upload_start(*, pending: PendingUpload, dry_run: bool) -> None:
    """Hand the session's uploaded file to the worker: its check (dry run) or its import. The page answers at once."""
    upload_job_queued(pending=pending, dry_run=dry_run)
    # No row of ours waits for a commit (the job's state is a file), so the task is queued at once.
    study_upload_task.enqueue(pending.token, pending.study, pending.fmt, pending.name, dict(pending.options or {}),
                              dry_run)
