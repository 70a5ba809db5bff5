"""Background work of the evaluations app (django-tasks, database backend: `manage.py run_worker` executes them; `make run` starts one).

Tasks call services; services never call tasks. Code that wants work done in the background (views,
the admin, commands) calls the functions here, which enqueue once the current transaction commits.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django_tasks import task

from .judge.pipeline import judge_run_execute
from .judge.selectors import RunSummaryJson, leaderboard_refresh
from .judge.services import (
    judge_run_create,
    judge_run_resume,
    judge_run_retry_failed,
    judge_runs_create,
    judge_runs_reclaim,
)
from .models import JudgeRun, RubricVersion


@task()
def judge_run_execute_task(run_id: int) -> RunSummaryJson:
    """Execute a queued judge run, then cache its leaderboard; returns its summary (also at /judge/runs/<id>/)."""
    run = JudgeRun.objects.select_related("rubric").get(pk=run_id)
    summary = judge_run_execute(run=run).as_dict()
    if summary["scored"]:
        leaderboard_refresh(run=run)  # pages and the API then read it instead of computing it per request
    return summary


def judge_run_enqueue(*, run: JudgeRun) -> None:
    """Queue the run's execution as a django-tasks task once the current transaction commits."""

    def enqueue() -> None:
        result = judge_run_execute_task.enqueue(run.pk)
        JudgeRun.objects.filter(pk=run.pk).update(task_id=str(result.id))

    transaction.on_commit(enqueue)


@transaction.atomic
def judge_run_start(*, rubric: RubricVersion, created_by: Any = None, **selection: Any) -> JudgeRun:
    """Create a run and queue it for the background worker (`manage.py run_worker`)."""
    run = judge_run_create(rubric=rubric, created_by=created_by, **selection)
    judge_run_enqueue(run=run)
    return run


@transaction.atomic
def judge_run_resume_start(*, run: JudgeRun, budget: Decimal | None = None,
                           base_url: str | None = None) -> JudgeRun:
    """Resume a stopped run (with an optional new, higher budget; `base_url`: the endpoint configured now) and
    queue it once the transaction commits."""
    run = judge_run_resume(run=run, budget=budget, base_url=base_url)
    judge_run_enqueue(run=run)
    return run


@transaction.atomic
def judge_run_retry_start(*, run: JudgeRun, budget: Decimal | None = None,
                          base_url: str | None = None) -> JudgeRun:
    """Put a run's failed items back in its queue (with an optional new budget; `base_url`: the endpoint configured
    now) and queue it once committed."""
    run, _ = judge_run_retry_failed(run=run, budget=budget, base_url=base_url)
    judge_run_enqueue(run=run)
    return run


@transaction.atomic
def judge_runs_start(*, rubric: RubricVersion, created_by: Any = None, judges: list[str] | None = None,
                     repeats: int = 1, **selection: Any) -> list[JudgeRun]:
    """Create one run per judge (each repeated `repeats` times) and queue them all for the worker."""
    runs = judge_runs_create(rubric=rubric, judges=judges or [], repeats=repeats, created_by=created_by, **selection)
    for run in runs:
        judge_run_enqueue(run=run)
    return runs


def judge_runs_recover() -> list[int]:
    """Put runs whose worker died back in the queue and enqueue them (called by every `run_worker` every few
    seconds: a restarted or second worker resumes an abandoned run by itself, without an operator)."""
    requeued = judge_runs_reclaim()
    for run_id in requeued:
        judge_run_enqueue(run=JudgeRun.objects.get(pk=run_id))
    return requeued
