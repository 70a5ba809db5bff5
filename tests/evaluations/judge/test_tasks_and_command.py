"""Background execution through django-tasks (database backend) and the judge_run management command."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from evaluations.judge.services import judge_run_create
from evaluations.models import JudgeResult, JudgeRun
from evaluations.tasks import judge_run_start

from .conftest import import_benchmark


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=6)
    return rubric_v1


def run_command(*args: str) -> str:
    out = StringIO()
    call_command("judge_run", *args, stdout=out)
    return out.getvalue()


# The worker closes "old" connections between tasks, as in production: the data must be committed, and the
# migration's reference data is restored afterwards for the tests that follow.
@pytest.mark.django_db(transaction=True)
def test_a_started_run_is_executed_by_the_db_worker(tmp_path, judge_settings):
    from evaluations.models import RubricVersion

    import_benchmark(tmp_path, n_cases=6)
    run = judge_run_start(rubric=RubricVersion.objects.get(version="1.0"), label="background")  # autocommit
    run.refresh_from_db()
    task = DBTaskResult.objects.get(id=run.task_id)
    assert task.status == "READY" and run.status == "queued"
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    run.refresh_from_db()
    task.refresh_from_db()
    assert task.status == "SUCCESSFUL", task.traceback
    assert run.status == "finished" and run.processed_items == run.total_items == 18
    assert task.return_value["scored"] == 18 and task.return_value["adds_up"] is True


def test_command_wait_runs_in_process_and_prints_the_summary(benchmark):
    out = run_command("--wait", "--models", "openai/gpt-4o", "--cases", "difficulty=easy|medium", "--label", "cli")
    run = JudgeRun.objects.get(label="cli")
    assert run.status == "finished" and run.total_items == 4  # cases 0, 1, 4, 5
    assert "4 = 4 scored + 0 failed + 0 filtered + 0 pending" in out
    assert "failed by error class: none" in out
    status = run_command("--status", str(run.pk))
    assert f"run {run.pk}: finished" in status


def test_command_without_wait_queues_a_task(benchmark, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        out = run_command("--limit", "4")
    run = JudgeRun.objects.get()
    assert "queued" in out and run.total_items == 4
    assert DBTaskResult.objects.filter(id=run.task_id).exists()


def test_command_cancel_and_resume(benchmark, fake_server):
    run = judge_run_create(rubric=benchmark, limit=5)
    assert "cancelled" in run_command("--cancel", str(run.pk))
    out = run_command("--resume", str(run.pk), "--wait")
    assert "5 = 5 scored" in out
    assert JudgeResult.objects.filter(run=run, role="primary").count() == 5
    with pytest.raises(CommandError, match="finished"):
        run_command("--resume", str(run.pk), "--wait")


def test_command_rejects_bad_selections(benchmark):
    with pytest.raises(CommandError, match="unknown model"):
        run_command("--models", "acme/nonexistent", "--wait")
    with pytest.raises(CommandError, match="bad case filter"):
        run_command("--cases", "colour=red", "--wait")
    with pytest.raises(CommandError, match="no responses"):
        run_command("--cases", "dimension=textual,difficulty=expert", "--run-label", "nope", "--wait")
    with pytest.raises(CommandError, match="no judge run"):
        run_command("--status", "4242")


def test_command_fake_server_demo_runs_offline(benchmark, settings):
    settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_BASE_URL": "http://127.0.0.1:9/unreachable/v1"}
    out = run_command("--fake-server", "--wait", "--limit", "6")
    assert "fake endpoint at http://127.0.0.1:" in out and "6 = 6 scored" in out


def test_case_filters_select_by_every_facet(benchmark):
    def total(cases: str) -> int:
        return judge_run_create(rubric=benchmark, cases=cases).total_items

    assert total("dimension=textual") == 3  # case 0, one per model
    assert total("tradition=none") == 3
    assert total("tradition=catholic|orthodox") == 6
    assert total("external_id=C-000*,question_type=factual_recall") == 6  # cases 0 and 4
    assert total("visibility=public,difficulty=easy|expert") == 9


def test_generate_responses_uses_the_test_model_configuration_and_the_importer(benchmark, fake_server):
    from evaluations.models import ModelResponse

    out = StringIO()
    call_command("generate_responses", "--models", "openai/gpt-4o,mistralai/mistral-large=Mistral:mistral",
                 "--cases", "dimension=textual|doctrinal", "--run-label", "gen1", "--repetitions", "1", stdout=out)
    generated = ModelResponse.objects.filter(run_label="gen1").select_related("model", "test_case")
    assert generated.count() == 4 and "4 created" in out.getvalue()  # 2 cases × 2 models
    response = generated.get(model__name="mistralai/mistral-large", test_case__external_id="C-0000")
    assert response.model.family == "mistral" and str(response.temperature) == "0.70" and response.max_tokens == 2000
    assert response.system_prompt == "Answer the question." and response.text and response.completion_tokens
    assert fake_server.records()[0].kind == "test"
    with pytest.raises(CommandError, match="is new"):
        call_command("generate_responses", "--models", "acme/unknown", stdout=StringIO())


def test_demo_run_judges_every_response_offline_once(benchmark, settings):
    from evaluations.judge.demo import judge_demo_run

    settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_BASE_URL": "http://127.0.0.1:9/unreachable/v1"}
    run = judge_demo_run()
    assert run.status == "finished" and run.scored_items == run.total_items == 18
    assert judge_demo_run().pk == run.pk
