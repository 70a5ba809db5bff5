"""Staff pages, the leaderboard API and the admin: every view requires staff; experts never see judge output."""
from __future__ import annotations

import pytest
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_create
from evaluations.models import EvaluatedModel, JudgeRun
from tests.accounts.api import token_auth

from .conftest import import_benchmark, no_sleep


@pytest.fixture
def users(db):  # type: ignore[no-untyped-def]
    from accounts.models import User

    return {
        "expert": User.objects.create_user(email="expert@example.org", password="pw", role="expert"),
        "adjudicator": User.objects.create_user(email="lead@example.org", password="pw", role="adjudicator"),
        "staff": User.objects.create_user(email="staff@example.org", password="pw", role="admin", is_staff=True),
        "superuser": User.objects.create_superuser(email="root@example.org", password="pw"),
    }


@pytest.fixture
def finished_run(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=12)
    run = judge_run_create(rubric=rubric_v1, label="views")
    judge_run_execute(run=run, client_options={"sleep": no_sleep})
    run.refresh_from_db()
    return run


@pytest.fixture
def judge_admin() -> None:
    """The judge admin is registered by `evaluations.admin` like every other model admin."""
    reverse("admin:evaluations_judgerun_start")


PAGES = [
    ("get", "judge:run_list", False),
    ("get", "judge:run_detail", True),
    ("post", "judge:run_cancel", True),
    ("get", "judge:leaderboard", False),
]


@pytest.mark.parametrize("method, name, needs_run", PAGES)
@pytest.mark.parametrize("role, allowed", [(None, False), ("expert", False), ("adjudicator", False),
                                           ("staff", True), ("superuser", True)])
def test_permission_matrix_for_judge_pages(client, users, finished_run, method, name, needs_run, role, allowed):
    if role:
        client.force_login(users[role])
    url = reverse(name, args=[finished_run.pk] if needs_run else [])
    response = getattr(client, method)(url)
    if allowed:
        assert response.status_code in (200, 302)
        if method == "post":
            assert response["Location"] == reverse("judge:run_detail", args=[finished_run.pk])
    elif role is None:
        assert response.status_code == 302 and "/login/" in response["Location"]
    else:
        assert response.status_code == 403
        assert b"composite" not in response.content and b"lexicalAccuracy" not in response.content


@pytest.mark.parametrize("role, status", [(None, 401), ("expert", 403), ("adjudicator", 403), ("staff", 200),
                                          ("superuser", 200)])
def test_permission_matrix_for_the_leaderboard_api_with_token_auth(client, users, finished_run, role, status):
    headers = {}
    if role:
        headers = token_auth(users[role])
    response = client.get(reverse("api-leaderboard"), **headers)
    assert response.status_code == status


def test_leaderboard_api_returns_models_intervals_and_comparisons(client, users, finished_run,
                                                                 django_assert_max_num_queries):
    client.force_login(users["staff"])
    with django_assert_max_num_queries(6):
        data = client.get(reverse("api-leaderboard"), {"run": finished_run.pk}).json()
    assert data["run"] == finished_run.pk and data["rubric"] == "1.0" and data["n_resamples"] == 1000
    assert {m["model"] for m in data["models"]} == set(EvaluatedModel.objects.values_list("name", flat=True))
    row = data["models"][0]
    assert row["overall"]["ci_low"] <= row["overall"]["score"] <= row["overall"]["ci_high"]
    assert set(row["by_dimension"]) <= {"textual", "hermeneutical", "doctrinal", "historical", "apologetics",
                                        "intertextual"}
    assert len(data["comparisons"]) == 3
    assert {"p_value", "p_bonferroni", "cohens_d"} <= set(data["comparisons"][0])
    gemini = next(m for m in data["models"] if m["family"] == "gemini")
    assert gemini["self_preference"] and gemini["primary_judge_score"] is not None
    missing = client.get(reverse("api-leaderboard"), {"run": 999})  # issue 33: a bad query value is a 400 naming it
    assert missing.status_code == 400 and missing.json() == {"run": "there is no judge run 999"}


def test_leaderboard_endpoint_is_described_in_the_openapi_schema():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/leaderboard/"]["get"]
    assert operation["operationId"] == "judge_leaderboard"
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Leaderboard")
    assert "ModelRow" in schema["components"]["schemas"]


def test_leaderboard_page_shows_both_scores_for_self_preference(client, users, finished_run,
                                                               django_assert_max_num_queries):
    client.force_login(users["staff"])
    with django_assert_max_num_queries(10):  # + the run's series (one query) + is the newest run a trial (one)
        response = client.get(reverse("judge:leaderboard"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "google/gemini-2.5-pro" in page and "(secondary judge)" in page and "Bonferroni" in page


def test_run_list_query_count_does_not_grow_with_runs(client, users, finished_run, rubric_v1,
                                                     django_assert_max_num_queries):
    for _ in range(5):
        judge_run_create(rubric=rubric_v1)
    client.force_login(users["staff"])
    with django_assert_max_num_queries(4):
        response = client.get(reverse("judge:run_list"))
    assert response.status_code == 200 and response.content.count(b"/judge/runs/") >= 6


def test_progress_partial_polls_while_active_and_stops_when_finished(client, users, finished_run, rubric_v1):
    client.force_login(users["staff"])
    queued = judge_run_create(rubric=rubric_v1)
    partial = client.get(reverse("judge:run_detail", args=[queued.pk]), HTTP_HX_REQUEST="true")
    body = partial.content.decode()
    assert "<html" not in body and 'hx-trigger="every 2s"' in body and "0 of 36 items" in body
    page = client.get(reverse("judge:run_detail", args=[finished_run.pk])).content.decode()
    assert "<html" in page and "hx-trigger" not in page and 'role="progressbar"' in page
    assert "36 = 36 scored + 0 failed + 0 filtered + 0 pending" in page


def test_cancel_button_cancels_a_queued_run(client, users, rubric_v1, finished_run):
    run = judge_run_create(rubric=rubric_v1)
    client.force_login(users["staff"])
    client.post(reverse("judge:run_cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED


def test_admin_start_form_queues_a_task_and_opens_the_progress_page(client, users, rubric_v1, finished_run,
                                                                    judge_admin, django_capture_on_commit_callbacks):
    client.force_login(users["staff"])
    assert client.get(reverse("admin:evaluations_judgerun_changelist")).status_code in (200, 403)
    client.force_login(users["superuser"])
    assert b"Start a judge run" in client.get(reverse("admin:evaluations_judgerun_changelist")).content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:evaluations_judgerun_start"), {
            "rubric": rubric_v1.pk, "models": [EvaluatedModel.objects.get(name="openai/gpt-4o").pk],
            "cases": "dimension=textual|doctrinal", "limit": "3", "label": "from admin",
        })
    run = JudgeRun.objects.get(label="from admin")
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert run.total_items == 3 and run.status == "queued" and run.created_by == users["superuser"]
    task = DBTaskResult.objects.get(id=run.__class__.objects.get(pk=run.pk).task_id)
    assert task.task_path == "evaluations.tasks.judge_run_execute_task" and task.args_kwargs["args"] == [run.pk]
    runs = JudgeRun.objects.count()
    bad = client.post(reverse("admin:evaluations_judgerun_start"), {"rubric": rubric_v1.pk, "cases": "colour=red"})
    assert bad.status_code == 200 and b"bad case filter" in bad.content
    assert "bad case filter" in bad.context["form"].errors["cases"][0]  # on the field, next to it
    assert JudgeRun.objects.count() == runs


def test_admin_actions_cancel_and_resume(client, users, rubric_v1, finished_run, judge_admin,
                                         django_capture_on_commit_callbacks):
    client.force_login(users["superuser"])
    run = judge_run_create(rubric=rubric_v1)
    url = reverse("admin:evaluations_judgerun_changelist")
    client.post(url, {"action": "cancel_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "resume_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "queued" and run.task_id
    result = finished_run.results.first()
    assert client.get(reverse("admin:evaluations_judgeresult_change", args=[result.pk])).status_code == 200


def test_run_list_shows_the_runs_a_page_at_a_time(client, users, finished_run, rubric_v1, monkeypatch):
    from evaluations.judge import selectors

    runs = [finished_run.pk] + [judge_run_create(rubric=rubric_v1).pk for _ in range(4)]
    monkeypatch.setattr(selectors, "RUNS_PAGE_SIZE", 2)
    client.force_login(users["staff"])
    pages = [client.get(reverse("judge:run_list"), {"page": str(n)}) for n in (1, 2, 3)]
    assert [[run.pk for run in page.context["runs"]] for page in pages] == [runs[:2:-1], runs[2:0:-1], runs[:1]]
    assert "?page=2" in pages[0].content.decode() and "?page=4" not in pages[2].content.decode()
    assert "previous" in pages[2].content.decode()
