"""Demo judge scores without a network: judge the loaded responses against the in-process fake endpoint."""
from __future__ import annotations

from typing import Any

from ..models import JudgeRun, RubricVersion
from ..selectors import rubric_active
from .fake_server import FakeLLMServer
from .pipeline import judge_run_execute
from .services import judge_run_create

DEMO_LABEL = "demo (offline fake judge)"
SECOND_LABEL = "demo (a second fake judge, for the judge comparison)"
SECOND_JUDGE = "anthropic/claude-haiku-4.5"


def judge_demo_run(*, rubric: RubricVersion | None = None, created_by: Any = None, label: str = DEMO_LABEL,
                   primary_model: str | None = None) -> JudgeRun:
    """A finished judge run over every active response, scored by the fake judge (idempotent per label)."""
    existing = JudgeRun.objects.filter(label=label, status=JudgeRun.Status.FINISHED).first()
    if existing is not None:
        return existing
    with FakeLLMServer() as server:
        run = judge_run_create(rubric=rubric or rubric_active(), label=label, base_url=server.base_url,
                               created_by=created_by, primary_model=primary_model)
        judge_run_execute(run=run)
    run.refresh_from_db()
    return run
