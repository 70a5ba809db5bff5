"""Background work of the validation programme (django-tasks; the worker is `manage.py run_worker`): pairwise runs
(then their position check) and the other checks, queued from the validation and pairwise pages."""
from __future__ import annotations

from typing import NotRequired, TypedDict, Unpack

from django.db import transaction
from django_tasks import task

from accounts.models import User
from annotations.models import CalibrationCycle
from evaluations.judge.pairwise import pairwise_run_create, pairwise_run_execute
from evaluations.models import JudgeRun, PairwiseRun

from .checks import CheckRequest, validation_check_run, validation_check_validate
from .forms import PairwiseOptions
from .position import position_check


class PairwiseTaskResult(TypedDict):
    """What the pairwise task returns (django-tasks stores it): the run's outcome, and its position check if any."""

    run: int
    status: str
    done: int
    failed: int
    check: NotRequired[int]
    flagged: NotRequired[bool]


class CheckTaskResult(TypedDict):
    """What the check task returns: the stored check."""

    check: int
    kind: str
    flagged: bool
    n: int | None


def _user(pk: int | None) -> User | None:
    return User.objects.filter(pk=pk).first() if pk is not None else None


@task()
def pairwise_run_execute_task(run_id: int, requested_by_id: int | None = None) -> PairwiseTaskResult:
    """Send a pairwise run's pending ordered pairs; when it finishes, compute and store its position check."""
    run = pairwise_run_execute(run=PairwiseRun.objects.get(pk=run_id))
    result: PairwiseTaskResult = {"run": run.pk, "status": run.status, "done": run.done, "failed": run.failed}
    if run.status == PairwiseRun.Status.FINISHED and run.failed < run.done:
        check = position_check(run=run, requested_by=_user(requested_by_id))
        result["check"] = check.pk
        result["flagged"] = check.flagged
    return result


@transaction.atomic
def pairwise_run_start(*, requested_by: User | None, **options: Unpack[PairwiseOptions]) -> PairwiseRun:
    """Create a pairwise run (`pairwise_run_create`'s options) and queue it once the request commits."""
    run = pairwise_run_create(created_by=requested_by, **options)
    pairwise_run_enqueue(run=run, requested_by=requested_by)
    return run


def pairwise_run_enqueue(*, run: PairwiseRun, requested_by: User | None) -> None:
    user_id = requested_by.pk if requested_by else None
    transaction.on_commit(lambda: pairwise_run_execute_task.enqueue(run.pk, user_id))


@task()
def validation_check_task(kind: str, run_ids: list[int], cycle_id: int | None,
                          requested_by_id: int | None = None) -> CheckTaskResult:
    """Compute one check of the validation programme and store it (the validation page then shows it)."""
    check = validation_check_run(request=CheckRequest(kind=kind, run_ids=tuple(run_ids), cycle_id=cycle_id),
                                 requested_by=_user(requested_by_id))
    return {"check": check.pk, "kind": check.check_kind, "flagged": check.flagged, "n": check.n}


def validation_check_start(*, kind: str, runs: list[JudgeRun], cycle: CalibrationCycle | None,
                           requested_by: User | None) -> CheckRequest:
    """Check the inputs (ValidationError naming the field), then queue the check for the worker."""
    request = validation_check_validate(kind=kind, runs=runs, cycle=cycle)
    user_id = requested_by.pk if requested_by else None
    transaction.on_commit(lambda: validation_check_task.enqueue(request.kind, list(request.run_ids),
                                                                request.cycle_id, user_id))
    return request
