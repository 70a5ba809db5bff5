"""Demo benchmark data: the files in fixtures/demo/, loaded through the real importers."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from .importing import ImportReport, import_file, import_records
from .services import reference_data_ensure

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"


@transaction.atomic
def demo_benchmark_load(*, directory: Path = DEMO_DIR) -> list[ImportReport]:
    """Traditions, rubric v1.0, test cases, models with responses, and TheoBERT cases (idempotent)."""
    reference_data_ensure()
    reports = []
    for kind, pattern in (("cases", "cases-*.json"), ("responses", "responses-*.jsonl"), ("theobert", "theobert-*.json")):
        for path in sorted(directory.glob(pattern)):
            reports.append(import_file(path=path, kind=kind, name=str(path.relative_to(directory.parent.parent))))
    return reports


CONDITIONS_RUN_LABEL = "demo-conditions"
CONDITIONS_JUDGE_LABEL = "demo (conditions: reasoning, route, repetitions)"
DEMO_REASONING_EFFECT = 0.15  # the fake judge's known effect of reasoning on the composite (docs/conditions.md)
CONDITION_PLAN = (  # (condition, model, repetitions)
    ("standard", "openai/gpt-4o", 4),
    ("standard", "anthropic/claude-sonnet-4.5", 1),
    ("demo-reasoning", "openai/gpt-4o", 1),
    ("demo-reasoning", "anthropic/claude-sonnet-4.5", 1),
    ("demo-route-b", "openai/gpt-4o", 4),  # the same cases × 4 under both routes: the variance budget's table
)


def demo_conditions_create(*, n_cases: int = 24) -> Any:
    """The condition page's demo (once): reasoning off/on for two models, 4 repetitions of the standard condition for
    one model, a second provider route for one model — answered offline by the fake endpoint, then judged by a run
    of their own in which reasoning has a known effect (+0.15). Returns that judge run, or None if it exists."""
    from .judge.config import PipelineConfig
    from .judge.fake_server import REASONING_MARKER, FakeLLMServer
    from .judge.generation import generation_pending, generation_run
    from .judge.pipeline import judge_run_execute
    from .judge.services import judge_run_create
    from .models import EvaluatedModel, GenerationCondition, JudgeRun, TestCase, standard_condition_id
    from .selectors import rubric_active

    if JudgeRun.objects.filter(label=CONDITIONS_JUDGE_LABEL).exists():
        return None
    standard_condition_id()
    GenerationCondition.objects.get_or_create(name="demo-reasoning", defaults={
        "reasoning": True, "reasoning_effort": "medium",
        "description": "Demo: the standard condition with reasoning on (medium effort), §17.11."})
    GenerationCondition.objects.get_or_create(name="demo-route-b", defaults={
        "route": "demo-provider-b", "description": "Demo: the standard condition through a second provider, §8.3."})
    cases = list(TestCase.objects.public().active().order_by("external_id")[:n_cases])
    known = {m.name: m for m in EvaluatedModel.objects.all()}
    with FakeLLMServer(condition_effects={REASONING_MARKER: DEMO_REASONING_EFFECT}) as server:
        config = PipelineConfig.from_settings(base_url=server.base_url)
        for name, model, repetitions in CONDITION_PLAN:
            if model not in known:
                continue
            condition = GenerationCondition.objects.get(is_standard=True) if name == "standard" else \
                GenerationCondition.objects.get(name=name)
            items = generation_pending(condition=condition, cases=cases, models=[(model, "", "")],
                                       run_label=CONDITIONS_RUN_LABEL, repetitions=repetitions)
            for outcome in generation_run(items=items, condition=condition, run_label=CONDITIONS_RUN_LABEL,
                                          config=config):
                if outcome.rows:
                    import_records(records=outcome.rows, kind="responses", label="demo conditions")
        run = judge_run_create(rubric=rubric_active(), label=CONDITIONS_JUDGE_LABEL, base_url=server.base_url,
                               run_label=CONDITIONS_RUN_LABEL)
        judge_run_execute(run=run)
    # older than the other demo runs, so the main demo run stays "the latest finished run" of the other pages
    oldest = JudgeRun.objects.exclude(pk=run.pk).order_by("created_at").values_list("created_at", flat=True).first()
    if oldest is not None:
        JudgeRun.objects.filter(pk=run.pk).update(created_at=oldest - timedelta(seconds=1))
    run.refresh_from_db()
    return run
