"""Operator paths (issue 33, part 5): Retry and Resume send to the endpoint configured now, so the failure advice
("set FAITHBENCH_LLM_BASE_URL, restart, press Retry") works as written; numeric fields are bounded; a bad `?run=`
on the leaderboard pages is a 400 with a message."""
from __future__ import annotations

import pytest
from django.urls import reverse

from evaluations.judge.services import judge_run_create
from evaluations.models import JudgeRun

from .conftest import import_benchmark


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=3, models=[("openai/gpt-4o", "OpenAI", "gpt")])
    return rubric_v1


@pytest.mark.parametrize("action", ["judge:run_retry", "judge:run_resume"])
def test_retry_and_resume_call_the_endpoint_configured_now(action, admin_client, benchmark, judge_settings,
                                                           fake_server, immediate_tasks,
                                                           django_capture_on_commit_callbacks):
    run = judge_run_create(rubric=benchmark, models=["openai/gpt-4o"], base_url="http://127.0.0.1:9/v1")
    # As the pipeline leaves a run whose endpoint did not answer (nothing listens on port 9).
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED,
                                              error_message="The endpoint http://127.0.0.1:9/v1 did not answer.")
    # The advice: set FAITHBENCH_LLM_BASE_URL (the fixture's settings name the working fake server), press Retry.
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse(action, args=[run.pk]), follow=True)
    run.refresh_from_db()
    assert run.base_url == fake_server.base_url
    assert run.status == JudgeRun.Status.FINISHED and run.scored_items == 3
    assert f"now calls the configured endpoint {fake_server.base_url}" in response.content.decode()


def test_a_huge_limit_is_a_form_error_not_a_500(admin_client, benchmark):
    response = admin_client.post(reverse("judge:run_start"), {
        "rubric": benchmark.pk, "judge": "google/gemini-3-flash-preview", "repeats": 1,
        "limit": "99999999999999999999999999"})
    assert response.status_code in (200, 400, 422)
    assert "Ensure this value is less than or equal to" in response.content.decode()
    assert JudgeRun.objects.count() == 0


@pytest.mark.parametrize("url", ["judge:leaderboard", "judge:conditions"])
def test_a_bad_run_in_the_query_is_a_400_with_a_message(url, admin_client, benchmark):
    not_a_number = admin_client.get(reverse(url), {"run": "abc"})
    assert not_a_number.status_code == 400 and b"run: must be a judge run id" in not_a_number.content
    missing = admin_client.get(reverse(url), {"run": "987654"})
    assert missing.status_code == 400 and b"no judge run 987654" in missing.content


def test_a_failed_runs_id_on_the_conditions_page_is_a_400_saying_so(admin_client, benchmark):
    run = judge_run_create(rubric=benchmark, models=["openai/gpt-4o"])
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED)
    response = admin_client.get(reverse("judge:conditions"), {"run": run.pk})
    assert response.status_code == 400 and f"judge run {run.pk} is failed".encode() in response.content
