"""Demo judge scores without a network: judge the loaded responses against the in-process fake endpoint."""
from __future__ import annotations

from typing import Any

from ..models import JudgeRun, RubricVersion
from ..selectors import rubric_active
from .fake_server import FakeLLMServer
from .pipeline import judge_run_execute
from .services import judge_run_create

DEMO_LABEL = "demo (offline fake judge)"


def judge_demo_run(*, rubric: RubricVersion | None = None, created_by: Any = None) -> JudgeRun:
    """A finished judge run over every active response, scored by the fake judge (idempotent)."""
    existing = JudgeRun.objects.filter(label=DEMO_LABEL, status=JudgeRun.Status.FINISHED).first()
    if existing is not None:
        return existing
    with FakeLLMServer() as server:
        run = judge_run_create(rubric=rubric or rubric_active(), label=DEMO_LABEL, base_url=server.base_url,
                               created_by=created_by)
        judge_run_execute(run=run)
    run.refresh_from_db()
    return run
