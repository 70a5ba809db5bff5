"""What a run's page says happened (failed with a reason and a fix, error counts explained), and the run page's
actions: retry failed items, resume, cancel, repeat; several runs started at once (judges × repeats)."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluations.judge.fake_server import FaultRule
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import (
    judge_run_cancel,
    judge_run_create,
    judge_run_retry_failed,
    judge_runs_create,
)
from evaluations.judge.status import failure_explained, judge_run_errors, judge_run_outcome
from evaluations.models import JudgeResult, JudgeRun

from .conftest import import_benchmark


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=5, models=[("openai/gpt-4o", "OpenAI", "gpt")])
    return rubric_v1


def five(rubric) -> JudgeRun:  # type: ignore[no-untyped-def]
    return judge_run_create(rubric=rubric, models=["openai/gpt-4o"])


def test_no_api_key_fails_the_run_with_the_reason_and_the_setting_to_fix(benchmark, judge_settings, fake_server):
    fake_server.api_key = "sk-the-right-one"
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "LLM_API_KEY": ""}
    run = five(benchmark)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and run.flagged_auth_error and run.scored_items == 0
    assert "No API key is configured" in run.error_message and "FAITHBENCH_LLM_API_KEY" in run.error_message
    outcome = judge_run_outcome(run=run)
    assert outcome.state == "failed" and outcome.tone == "bad"
    assert outcome.headline == "Failed — 0 of 5 scored, 5 pending"
    assert "No API key is configured (FAITHBENCH_LLM_API_KEY is empty)" in outcome.reason
    assert "401" in outcome.reason and "Set FAITHBENCH_LLM_API_KEY" in outcome.fix
    assert outcome.can_resume and outcome.pending == 5 and not outcome.can_cancel

    # a key that the endpoint refuses is another reason
    wrong = judge_run_outcome(run=run, has_key=True)
    assert "refused the API key" in wrong.reason


def test_a_run_whose_every_item_failed_is_failed_not_finished_and_its_errors_are_explained(benchmark, fake_server):
    fake_server.rules.append(FaultRule("404"))  # neither judge known to the endpoint: no retries, fallback tried
    run = five(benchmark)
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.processed_items, run.scored_items, run.failed_items) == ("failed", 5, 0, 5)
    assert "does not know the judge model google/gemini-3-flash-preview (404)" in run.error_message
    outcome = judge_run_outcome(run=run)
    assert outcome.headline == "Failed — 0 of 5 scored, 5 failed" and outcome.retryable == 5
    errors = judge_run_errors(run=run)
    assert (errors.failed_calls, errors.items, errors.attempts) == (10, 5, 10)
    assert errors.by_role == {"primary": 5, "fallback": 5} and errors.by_class == {"not_found": 10}
    assert errors.sentence(max_attempts=3) == (
        "10 failed calls over 5 items (primary judge 5, fallback judge 5; 10 HTTP attempts, each call tried up to 3 "
        "times): not_found 10.")


def test_retry_failed_items_sends_only_them_again_and_keeps_the_spent_calls(benchmark, fake_server):
    from evaluations.models import ModelResponse

    run = five(benchmark)  # the first two items fail (400: no retry, the fallback also refused), the others score
    failing = list(ModelResponse.objects.order_by("id")[:2])
    for response in failing:
        fake_server.rules.append(FaultRule("400", contains=response.text))
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.scored_items, run.failed_items) == ("finished", 3, 2)
    outcome = judge_run_outcome(run=run)
    assert outcome.state == "finished_with_failures" and outcome.retryable == 2 and "2 items failed" in outcome.reason
    calls_before = run.calls
    scored_ids = set(JudgeResult.objects.filter(run=run, status="scored").values_list("id", flat=True))

    fake_server.rules.clear()
    run, retried = judge_run_retry_failed(run=run)
    assert retried == 2 and run.status == "queued" and run.processed_items == 3 and run.failed_items == 0
    assert not JudgeResult.objects.filter(run=run, response__in=failing).exists()
    judge_run_execute(run=run)
    run.refresh_from_db()
    assert (run.status, run.scored_items, run.failed_items, run.processed_items) == ("finished", 5, 0, 5)
    assert run.retried_items == 2 and run.calls == calls_before + 2
    assert scored_ids <= set(JudgeResult.objects.filter(run=run).values_list("id", flat=True))  # kept, not re-sent
    with pytest.raises(ValidationError, match="no failed item"):
        judge_run_retry_failed(run=run)


def test_retry_refuses_an_active_run_and_cancel_stops_a_queued_one(benchmark):
    run = five(benchmark)
    with pytest.raises(ValidationError, match="queued"):
        judge_run_retry_failed(run=run)
    run = judge_run_cancel(run=run)
    assert run.status == "cancelled"
    outcome = judge_run_outcome(run=run)
    assert outcome.state == "cancelled" and outcome.can_resume and outcome.pending == 5


def test_failure_reasons_by_error_class():
    offline = failure_explained(error_classes={"connection_error": 10}, base_url="https://openrouter.ai/api/v1",
                                primary_model="m", has_key=False)
    assert "No API key is configured" in offline.reason and "could not be reached" in offline.reason
    assert "FAITHBENCH_LLM_API_KEY" in offline.fix and "fake_server" in offline.fix
    local = failure_explained(error_classes={"connection_error": 4}, base_url="http://127.0.0.1:9/v1",
                              primary_model="m", has_key=False)
    assert "API key" not in local.reason and "FAITHBENCH_LLM_BASE_URL" in local.fix
    unreadable = failure_explained(error_classes={"parse_error": 3}, base_url="u", primary_model="m", has_key=True)
    assert "could not be read" in unreadable.reason


def test_several_judges_and_repeats_make_one_series_per_judge(benchmark):
    runs = judge_runs_create(rubric=benchmark, judges=["judge/a", "judge/b"], repeats=3, models=["openai/gpt-4o"],
                             budget=Decimal("1"))
    assert [r.primary_model for r in runs] == ["judge/a"] * 3 + ["judge/b"] * 3
    assert runs[1].repeat_of == runs[0] and runs[2].repeat_of == runs[0] and runs[4].repeat_of == runs[3]
    assert all(r.total_items == 5 and r.budget == Decimal("1") for r in runs)
    with pytest.raises(ValidationError, match="once"):
        judge_runs_create(rubric=benchmark, judges=["judge/a", "judge/a"])
    with pytest.raises(ValidationError, match="repeats"):
        judge_runs_create(rubric=benchmark, repeats=11)


@pytest.fixture
def admin_client(client, benchmark):  # type: ignore[no-untyped-def]
    from tests.annotations.factories import person

    client.force_login(person("admin", name="Judge Admin"))
    return client


def test_start_page_confirms_with_the_estimate_then_queues(admin_client, benchmark, immediate_tasks,
                                                            django_capture_on_commit_callbacks):
    data = {"rubric": benchmark.pk, "models": [], "judge": "google/gemini-3-flash-preview", "repeats": "2",
            "other_judges": "openai/gpt-4o-mini", "limit": "3", "label": "page"}
    page = admin_client.get(reverse("judge:run_start"))
    assert page.status_code == 200 and "API key configured" in page.content.decode()
    confirm = admin_client.post(reverse("judge:run_start"), data)
    body = confirm.content.decode()
    assert confirm.status_code == 200 and "Confirm: 4 judge runs" in body and "3 items" in body
    assert JudgeRun.objects.count() == 0  # the estimate created nothing
    with django_capture_on_commit_callbacks(execute=True):
        started = admin_client.post(reverse("judge:run_start"), {**data, "start": "1"})
    runs = list(JudgeRun.objects.order_by("id"))
    assert len(runs) == 4 and started.status_code == 302 and f"started={runs[0].pk}-{runs[-1].pk}" in started["Location"]
    assert all(r.status == "finished" and r.scored_items == 3 for r in runs)  # the immediate backend ran them
    listed = admin_client.get(started["Location"]).content.decode()
    assert "Started 4 runs" in listed and "Finished — 3 of 3 scored" in listed
    bad = admin_client.post(reverse("judge:run_start"), {**data, "cases": "colour=blue"})
    assert bad.status_code == 422 and "bad case filter" in bad.content.decode()


def test_run_page_retries_a_run_that_failed_for_want_of_a_key(admin_client, benchmark, judge_settings, fake_server,
                                                               immediate_tasks, django_capture_on_commit_callbacks):
    fake_server.api_key = "sk-right"
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "LLM_API_KEY": ""}
    run = five(benchmark)
    judge_run_execute(run=run)
    page = admin_client.get(reverse("judge:run_detail", args=[run.pk])).content.decode()
    assert "Failed — 0 of 5 scored, 5 pending" in page and "No API key is configured" in page
    assert "Retry: send the 5 items without a result" in page
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "LLM_API_KEY": "sk-right"}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("judge:run_resume", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "finished" and run.scored_items == 5
    page = admin_client.get(reverse("judge:run_detail", args=[run.pk])).content.decode()
    assert "Finished — 5 of 5 scored" in page and "Run again" in page
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("judge:run_repeat", args=[run.pk]))
    repeat = JudgeRun.objects.get(repeat_of=run)
    assert repeat.status == "finished" and repeat.scored_items == 5
    refused = admin_client.post(reverse("judge:run_retry", args=[run.pk]), follow=True)
    assert "no failed item to retry" in refused.content.decode()


def test_command_line_starts_several_judges_and_retries_failed_items(benchmark, fake_server):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("judge_run", "--judge", "judge/a,judge/b", "--repeat", "2", "--limit", "2", stdout=out)
    a, b, *repeats = JudgeRun.objects.order_by("id")  # the first run of each judge, then the repeats
    assert (a.primary_model, b.primary_model) == ("judge/a", "judge/b")
    assert sorted((r.repeat_of_id, r.primary_model) for r in repeats) == [(a.pk, "judge/a"), (b.pk, "judge/b")]
    assert f"manage.py judge_bias judges --run {a.pk} --run {b.pk}" in out.getvalue()

    fake_server.rules.append(FaultRule("400"))
    failed = five(benchmark)
    judge_run_execute(run=failed)
    fake_server.rules.clear()
    out = StringIO()
    call_command("judge_run", "--retry", str(failed.pk), "--wait", stdout=out)
    failed.refresh_from_db()
    assert "5 failed item(s) will be sent again" in out.getvalue()
    assert (failed.status, failed.scored_items, failed.retried_items) == ("finished", 5, 5)


def test_api_says_why_a_run_failed_and_retries_and_resumes_it(benchmark, fake_server, immediate_tasks,
                                                                django_capture_on_commit_callbacks):
    import json

    from django.test import Client

    from accounts.models import ApiToken
    from tests.accounts.api import token_auth
    from tests.annotations.factories import person

    admin = person("admin", name="API Admin")
    auth = token_auth(admin, ApiToken.Scope.JUDGE_RUN)
    fake_server.rules.append(FaultRule("400"))
    run = five(benchmark)
    judge_run_execute(run=run)
    state = Client().get(f"/api/v1/judge-runs/{run.pk}/", **token_auth(admin, ApiToken.Scope.REPORTS_READ)).json()
    assert state["status"] == "failed" and state["outcome"] == "Failed — 0 of 5 scored, 5 failed"
    assert "refused the requests (400" in state["reason"] and state["fix"]
    fake_server.rules.clear()
    with django_capture_on_commit_callbacks(execute=True):
        retried = Client().post(f"/api/v1/judge-runs/{run.pk}/retry/", **auth)
    assert retried.status_code == 202 and retried.json()["retried_items"] == 5
    run.refresh_from_db()
    assert run.status == "finished" and run.scored_items == 5
    again = Client().post(f"/api/v1/judge-runs/{run.pk}/retry/", **auth)
    assert again.status_code == 409 and "no failed item" in again.json()["detail"]
    resumed = Client().post(f"/api/v1/judge-runs/{run.pk}/resume/", data=json.dumps({}),
                            content_type="application/json", **auth)
    assert resumed.status_code == 409 and "every item has a result" in resumed.json()["detail"]
