"""Conditions end to end (issue 26 items 1, 2, 5): responses generated under three conditions by the fake endpoint,
judged by the fake judge with a known effect of reasoning (+0.2 composite) and none of the route, then the
per-condition leaderboards and paired deltas must find exactly that."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from evaluations.judge.conditions import condition_report_build, condition_report_csv
from evaluations.judge.fake_server import REASONING_MARKER, route_marker
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_create
from evaluations.models import GenerationCondition

from .conftest import import_benchmark

MODELS = [("openai/gpt-4o", "OpenAI", "gpt"), ("anthropic/claude-sonnet-4.5", "Anthropic", "claude")]
REASONING_EFFECT = 0.2


@pytest.fixture
def judged(db, tmp_path, rubric_v1, judge_settings, fake_server):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=24, models=MODELS)  # the standard condition, one repetition
    GenerationCondition.objects.create(name="reasoning", reasoning=True)
    GenerationCondition.objects.create(name="route-b", route="provider-b")
    for condition, models in (("reasoning", "openai/gpt-4o,anthropic/claude-sonnet-4.5"), ("route-b", "openai/gpt-4o")):
        call_command("generate_responses", "--models", models, "--condition", condition, "--repetitions", "2",
                     "--run-label", "r1", stdout=StringIO(), stderr=StringIO())
    # The truth: reasoning raises the judge's expected composite by 0.2; the route changes nothing.
    fake_server.condition_effects = {REASONING_MARKER: REASONING_EFFECT, route_marker("provider-b"): 0.0}
    run = judge_run_create(rubric=rubric_v1, label="conditions", base_url=fake_server.base_url)
    judge_run_execute(run=run)
    run.refresh_from_db()
    return run


def test_condition_delta_finds_the_known_reasoning_effect_and_no_route_effect(judged):
    report = condition_report_build(run=judged, n_resamples=500)
    boards = {b.condition.name: b for b in report.boards}
    assert list(boards) == ["standard", "reasoning", "route-b"]  # the standard condition first
    assert (boards["standard"].repetitions, boards["reasoning"].repetitions) == (1, 2)
    assert boards["reasoning"].responses == 24 * 2 * 2
    deltas = {(d.model, d.axis): d for d in report.deltas}
    assert set(deltas) == {("openai/gpt-4o", "reasoning"), ("anthropic/claude-sonnet-4.5", "reasoning"),
                           ("openai/gpt-4o", "route")}  # route-b vs reasoning differ in two settings: no pair
    for model, _, _ in MODELS:
        reasoning = deltas[(model, "reasoning")]
        assert (reasoning.condition, reasoning.baseline, reasoning.n_cases) == ("reasoning", "standard", 24)
        assert reasoning.ci_low <= REASONING_EFFECT <= reasoning.ci_high
        assert reasoning.distinguishable
    route = deltas[("openai/gpt-4o", "route")]
    assert (route.condition, route.baseline) == ("route-b", "standard")
    assert route.ci_low <= 0 <= route.ci_high and not route.distinguishable
    text = condition_report_csv(report)
    assert "openai/gpt-4o,route,route-b,standard," in text and text.count("\n") == 1 + 5 + 1 + 1 + 3  # header, 2 + 2 + 1 models; blank; header, 3 deltas


def test_condition_delta_leaderboard_of_a_condition_counts_cases_not_repetitions(judged):
    report = condition_report_build(run=judged, n_resamples=100)
    reasoning = next(b for b in report.boards if b.condition.name == "reasoning")
    for row in reasoning.board.models:
        assert row.items == 24  # 24 cases, each the mean of 2 repetitions


def test_condition_delta_page_and_csv_for_a_lead(judged, client, django_assert_max_num_queries):
    from django.urls import reverse

    from accounts.models import User
    from annotations.models import Panel
    from tests.annotations.factories import person

    lead = person(User.Role.EXPERT, email="lead@example.org")
    Panel.objects.create(name="Lead's panel", lead=lead)
    client.force_login(lead)
    page = client.get(reverse("judge:conditions"))  # the newest run with several conditions: this one
    assert page.status_code == 200 and page.context["run"].pk == judged.pk
    html = page.content.decode()
    assert html.count('data-testid="condition-board"') == 3
    assert "<svg" in html and "not distinguishable from zero" in html and "differs from zero" in html
    with django_assert_max_num_queries(16):  # cached: the same whatever the number of items
        client.get(reverse("judge:conditions") + f"?run={judged.pk}")
    csv_response = client.get(reverse("judge:conditions_export", args=[judged.pk]))
    assert csv_response["Content-Type"] == "text/csv"
    assert "route,route-b,standard" in csv_response.content.decode()


def test_condition_delta_api_for_an_admin(judged, client):
    from django.urls import reverse

    from accounts.models import User
    from tests.annotations.factories import person

    client.force_login(person(User.Role.ADMIN, email="admin.conditions@example.org"))
    data = client.get(reverse("api-judge-run-conditions", kwargs={"pk": judged.pk})).json()
    assert [b["condition"] for b in data["boards"]] == ["standard", "reasoning", "route-b"]
    assert data["boards"][1]["settings"]["reasoning"] is True and data["boards"][1]["repetitions"] == 2
    reasoning = [d for d in data["deltas"] if d["axis"] == "reasoning"]
    assert len(reasoning) == 2 and all(d["distinguishable"] and d["ci_low"] <= 0.2 <= d["ci_high"] for d in reasoning)
