"""Issue 33: a bad query parameter on the judge and calibrated API endpoints is a 400 whose JSON names the parameter
— never a 404 (as `/api/v1/leaderboard/?run=abc` was) nor a 500 — and a good one still answers."""
from __future__ import annotations

import pytest
from django.urls import reverse

from evaluations.models import JudgeRun
from tests.annotations.factories import person

BAD_IDS = ["abc", "0", "-1", "1.5", "1e3", "9" * 30, "²", " 1", "0x10"]


@pytest.fixture
def admin_client(client, db):  # type: ignore[no-untyped-def]
    client.force_login(person("admin"))
    return client


@pytest.fixture
def run(rubric_v1) -> JudgeRun:  # type: ignore[no-untyped-def]
    return JudgeRun.objects.create(rubric=rubric_v1, primary_model="google/gemini-3-flash-preview",
                                   fallback_model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                                   status=JudgeRun.Status.FINISHED)


def _named_400(response, name: str) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert list(body) == [name], body
    message = body[name] if isinstance(body[name], str) else " ".join(body[name])
    assert message
    return message


@pytest.mark.parametrize("value", BAD_IDS)
def test_api_query_leaderboard_run_that_is_not_an_id_is_a_400_naming_run(admin_client, value: str) -> None:  # type: ignore[no-untyped-def]
    message = _named_400(admin_client.get(reverse("api-leaderboard"), {"run": value}), "run")
    assert "judge run id" in message


def test_api_query_leaderboard_run_that_does_not_exist_is_a_400_naming_run(admin_client, run) -> None:  # type: ignore[no-untyped-def]
    message = _named_400(admin_client.get(reverse("api-leaderboard"), {"run": str(run.pk + 1000)}), "run")
    assert message == f"there is no judge run {run.pk + 1000}"
    good = admin_client.get(reverse("api-leaderboard"), {"run": str(run.pk)})
    assert good.status_code == 200 and good.json()["run"] == run.pk


@pytest.mark.parametrize("endpoint", ["api-calibrated", "api-calibrated-bundle"])
@pytest.mark.parametrize("value", BAD_IDS)
def test_api_query_calibrated_version_that_is_not_a_version_is_a_400_naming_version(admin_client, run, endpoint: str,  # type: ignore[no-untyped-def]
                                                                                    value: str) -> None:
    message = _named_400(admin_client.get(reverse(endpoint, args=[run.pk]), {"version": value}), "version")
    assert "whole number" in message


@pytest.mark.parametrize("endpoint", ["api-calibrated", "api-calibrated-bundle"])
def test_api_query_calibrated_good_version_without_a_snapshot_is_not_a_400(admin_client, run, endpoint: str) -> None:  # type: ignore[no-untyped-def]
    response = admin_client.get(reverse(endpoint, args=[run.pk]), {"version": "3"})
    assert response.status_code == 404 and "version 3" in response.json()["detail"]


@pytest.mark.parametrize("endpoint", ["api-calibrated-versions", "api-judge-run-conditions", "api-judge-run"])
def test_api_query_endpoints_without_query_parameters_ignore_unknown_ones(admin_client, run, endpoint: str) -> None:  # type: ignore[no-untyped-def]
    """No query parameter is read by these: an unknown one changes nothing (no 500, the same answer)."""
    plain = admin_client.get(reverse(endpoint, args=[run.pk]))
    odd = admin_client.get(reverse(endpoint, args=[run.pk]), {"run": "abc", "version": "x"})
    assert plain.status_code == odd.status_code == 200 and plain.json() == odd.json()


@pytest.mark.parametrize("value", ["abc", "0", "9" * 30])
def test_api_query_leaderboard_run_on_the_pages_is_a_400_naming_run(admin_client, value: str) -> None:  # type: ignore[no-untyped-def]
    for name in ("judge:leaderboard", "judge:conditions", "calibrated:index"):
        response = admin_client.get(reverse(name), {"run": value})
        assert response.status_code == 400 and response.content.decode().startswith("run:"), name
