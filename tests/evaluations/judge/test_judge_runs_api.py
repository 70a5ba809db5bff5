"""POST /api/v1/judge-runs/, GET its state, POST .../cancel/: who may, bad requests, and a run the worker
executes against the fake endpoint, followed through the API until its counts add up."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.models import ApiToken
from evaluations.models import JudgeRun
from tests.accounts.api import token_auth
from tests.annotations.factories import person
from tests.evaluations.judge.conftest import import_benchmark


def post(client: Client, url: str, body: object, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(url, data=json.dumps(body), content_type="application/json", **extra)


@pytest.fixture
def benchmark(db, tmp_path, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=6)


def test_start_follow_cancel_and_who_may(benchmark, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    admin = person("admin", name="Run Admin")
    body = {"models": ["openai/gpt-4o"], "cases": "difficulty=easy|medium", "label": "api"}
    assert post(Client(), "/api/v1/judge-runs/", body, **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code == 403
    expert = Client()
    expert.force_login(person(name="Plain Expert"))
    assert post(expert, "/api/v1/judge-runs/", body).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        started = post(Client(), "/api/v1/judge-runs/", body, **token_auth(admin, ApiToken.Scope.JUDGE_RUN))
    assert started.status_code == 202, started.content
    state = started.json()
    assert (state["status"], state["total"], state["pending"], state["adds_up"]) == ("queued", 4, 4, True)
    run = JudgeRun.objects.get(pk=state["run_id"])
    assert run.label == "api" and run.task_id  # queued for the worker
    read = Client().get(f"/api/v1/judge-runs/{run.pk}/", **token_auth(admin, ApiToken.Scope.REPORTS_READ))
    assert read.status_code == 200 and read.json()["run_id"] == run.pk
    cancel = token_auth(admin, ApiToken.Scope.JUDGE_RUN)
    assert post(Client(), f"/api/v1/judge-runs/{run.pk}/cancel/", {}, **cancel).json()["status"] == "cancelled"
    again = post(Client(), f"/api/v1/judge-runs/{run.pk}/cancel/", {}, **cancel)
    assert again.status_code == 409 and "cannot be cancelled" in again.json()["detail"]
    assert Client().get("/api/v1/judge-runs/999999/", **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code == 404


@pytest.mark.parametrize("body, field", [
    ({"limit": 0}, "limit"),
    ({"models": ["no/such-model"]}, ""),
    ({"cases": "colour=blue"}, ""),
])
def test_bad_starts_are_400_and_start_nothing(benchmark, body, field) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(person("admin", name="Run Admin"))
    response = post(client, "/api/v1/judge-runs/", body)
    assert response.status_code == 400, response.content
    assert field in {e["field"] for e in response.json()["errors"]}
    assert not JudgeRun.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_started_over_the_api_is_executed_and_adds_up(tmp_path, judge_settings) -> None:  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=6)
    client = Client()
    client.force_login(person("admin", name="Run Admin"))
    state = post(client, "/api/v1/judge-runs/", {"limit": 5}).json()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    done = client.get(f"/api/v1/judge-runs/{state['run_id']}/").json()
    assert (done["status"], done["total"], done["scored"], done["pending"], done["adds_up"]) == ("finished", 5, 5, 0, True)
    assert float(done["cost"]) > 0  # the fake endpoint reports a cost per call
