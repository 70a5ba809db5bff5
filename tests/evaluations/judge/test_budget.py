"""Cost before you spend (issue 15 part 8): an estimate from the prompts the run will send, checked against what
the run then uses; a budget at which the run stops cleanly and from which it resumes."""
from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from evaluations.judge.estimate import judge_run_estimate
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_create, judge_run_resume
from evaluations.models import JudgeResult, JudgeRun, ModelResponse

from .conftest import import_benchmark, no_sleep

FAST = {"client_options": {"sleep": no_sleep}}


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=24)
    return rubric_v1


def test_an_estimate_is_close_to_what_the_run_then_uses(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    first = judge_run_create(rubric=benchmark, limit=12)
    cold = judge_run_estimate(run=first)
    assert cold.cost is None and "no price" in cold.basis  # nothing known about this judge's price yet
    assert cold.items == 12 and cold.calls >= 12
    judge_run_execute(run=first, **FAST)
    second = judge_run_create(rubric=benchmark)  # all 72; its first 12 are judged again (a new run)
    estimate = judge_run_estimate(run=second)
    judge_run_execute(run=second, **FAST)
    second.refresh_from_db()
    assert estimate.calls == second.calls  # no faults: one call per item, plus the secondary's
    assert 0.8 < estimate.prompt_tokens / second.prompt_tokens < 1.25
    assert 0.8 < estimate.completion_tokens / second.completion_tokens < 1.25
    assert estimate.cost is not None and 0.7 < float(estimate.cost / second.cost) < 1.4
    assert "earlier results" in estimate.basis


def test_a_configured_price_is_used_as_given(benchmark, judge_settings) -> None:  # type: ignore[no-untyped-def]
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "ESTIMATE_COMPLETION_TOKENS": 500, "JUDGE_PRICES": [
        ["google/gemini-3-flash-preview", 0.5, 3.0], ["openai/gpt-4o-mini", 0.15, 0.6]]}
    run = judge_run_create(rubric=benchmark, models=["openai/gpt-4o"], limit=6)
    estimate = judge_run_estimate(run=run)
    # gpt-4o is in neither judge's family: 6 primary calls, no secondary
    assert (estimate.items, estimate.calls, estimate.completion_tokens) == (6, 6, 3000)
    expected = (Decimal("0.5") * estimate.prompt_tokens + Decimal("3.0") * 3000) / 1_000_000
    assert estimate.cost == expected.quantize(Decimal("0.000001")) and "configured price" in estimate.basis


def test_a_run_stops_at_its_budget_and_resumes_with_a_higher_one(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    from django.db.models import Sum

    probe = judge_run_create(rubric=benchmark, limit=12)
    judge_run_execute(run=probe, **FAST)
    costs = [c for c in JudgeResult.objects.filter(run=probe).values("response_id").annotate(c=Sum("cost"))
             .values_list("c", flat=True)]
    per_item, most = sum(costs) / len(costs), max(costs)
    run = judge_run_create(rubric=benchmark, budget=(per_item * 10).quantize(Decimal("0.000001")))
    summary = judge_run_execute(run=run, config_overrides={"max_in_flight": 2, "write_batch_size": 2}, **FAST)
    run.refresh_from_db()
    assert summary.status == "cancelled" and 0 < run.processed_items < run.total_items
    # over by at most the calls that were in flight when the answers received had used the budget up (2 here)
    assert run.budget <= run.cost <= run.budget + most * 2
    assert "Stopped at its budget" in run.error_message and f"--resume {run.pk}" in run.error_message
    assert JudgeRun.objects.filter(pk=run.pk, started_at__isnull=False).exists()
    with pytest.raises(Exception, match="above what the run has cost"):
        judge_run_resume(run=run, budget=run.cost)
    done_before = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    texts = dict(ModelResponse.objects.values_list("id", "text"))
    calls_before = {rid: fake_server.calls_for(texts[rid]) for rid in done_before}
    judge_run_execute(run=judge_run_resume(run=run, budget=Decimal("1000")), **FAST)
    run.refresh_from_db()
    assert run.status == "finished" and run.processed_items == run.total_items and run.budget == Decimal("1000")
    assert all(fake_server.calls_for(texts[rid]) == calls_before[rid] for rid in done_before)


def test_the_command_estimates_without_creating_anything(benchmark, judge_settings) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    call_command("judge_run", "--estimate", "--limit", "5", "--budget", "0.5", stdout=out)
    assert "estimate: 5 item(s)" in out.getvalue() and "nothing was created" in out.getvalue()
    assert not JudgeRun.objects.exists()
    with pytest.raises(CommandError, match="budget must be more than 0"):
        call_command("judge_run", "--estimate", "--budget", "0", stdout=io.StringIO())
