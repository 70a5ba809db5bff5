"""Background work of the evaluations app (django-tasks, database backend: run `manage.py db_worker`)."""
from __future__ import annotations

from typing import Any

from django_tasks import task


@task()
def judge_run_execute_task(run_id: int) -> dict[str, Any]:
    """Execute a queued judge run; returns its summary (also visible at /judge/runs/<id>/)."""
    from .judge.models import JudgeRun
    from .judge.pipeline import judge_run_execute

    run = JudgeRun.objects.select_related("rubric").get(pk=run_id)
    return judge_run_execute(run=run).as_dict()
