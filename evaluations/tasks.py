"""Background work of the evaluations app (django-tasks, database backend: run `manage.py db_worker`)."""
from __future__ import annotations

from typing import Any

from django_tasks import task


@task()
def judge_run_execute_task(run_id: int) -> dict[str, Any]:
    """Execute a queued judge run, then cache its leaderboard; returns its summary (also at /judge/runs/<id>/)."""
    from .judge.models import JudgeRun
    from .judge.pipeline import judge_run_execute
    from .judge.selectors import leaderboard_refresh

    run = JudgeRun.objects.select_related("rubric").get(pk=run_id)
    summary = judge_run_execute(run=run).as_dict()
    if summary["scored"]:
        leaderboard_refresh(run=run)  # pages and the API then read it instead of computing it per request
    return summary
