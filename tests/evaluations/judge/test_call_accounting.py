"""Judge accounting (issue 25 item 6): every call sent is counted once in the run, and no judge is asked twice
about one item when one call can serve two roles."""
from __future__ import annotations

from collections import Counter

import pytest

from evaluations.judge import pipeline
from evaluations.judge.fake_server import FaultRule, text_key
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_create, judge_run_resume
from evaluations.models import JudgeResult, ModelResponse

from .conftest import MODELS, import_benchmark, no_sleep

FAST = {"client_options": {"sleep": no_sleep}}
GPT, CLAUDE, GEMINI = (m[0] for m in MODELS)
PRIMARY, FALLBACK = "google/gemini-3-flash-preview", "openai/gpt-4o-mini"


class SimulatedCrash(BaseException):
    """What a killed worker does to the database thread: nothing after it runs (BaseException: no handler)."""


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=12)
    return rubric_v1


@pytest.fixture
def default_judges(judge_settings, monkeypatch):  # type: ignore[no-untyped-def]
    """The judges as shipped: the secondary judge left unset (so it is the fallback judge)."""
    monkeypatch.delenv("FAITHBENCH_JUDGE_SECONDARY_MODEL", raising=False)
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "JUDGE_SECONDARY_MODEL": ""}
    return judge_settings


def calls_per_item_and_model(records: list, texts: dict[int, str]) -> dict[int, Counter]:
    by_key: dict[str, Counter] = {}
    for record in records:
        by_key.setdefault(record.key, Counter())[record.model] += 1
    return {rid: by_key.get(text_key(text), Counter()) for rid, text in texts.items()}


def test_with_the_default_judges_a_failing_primary_never_asks_the_fallback_model_twice_about_one_item(
        benchmark, default_judges, fake_server):
    """Fallback scenario: the primary judge answers 503 to everything. Gemini responses need the secondary judge
    (self-preference), which by default is the fallback model: one call of it serves both roles."""
    fake_server.rules.append(FaultRule("503", model=PRIMARY))
    run = judge_run_create(rubric=benchmark, models=[GEMINI])
    assert run.secondary_model == run.fallback_model == FALLBACK
    summary = judge_run_execute(run=run, **FAST)

    texts = dict(ModelResponse.objects.filter(model__name=GEMINI).values_list("id", "text"))
    per_item = calls_per_item_and_model(fake_server.records(), texts)
    assert len(per_item) == 12
    for calls in per_item.values():
        assert calls == Counter({PRIMARY: 3, FALLBACK: 1})  # 3 attempts of the primary, one call of the other
    assert summary.status == "finished" and summary.scored == 12 and summary.adds_up
    decisive = JudgeResult.objects.filter(run=run, role="secondary")
    assert decisive.count() == 12 and set(decisive.values_list("status", flat=True)) == {"scored"}
    run.refresh_from_db()
    assert run.calls == len(fake_server.records()) == 12 * 4


def test_a_secondary_judge_other_than_the_fallback_still_gets_its_own_call(benchmark, judge_settings, fake_server):
    judge_settings.FAITHBENCH = {**judge_settings.FAITHBENCH, "JUDGE_SECONDARY_MODEL": "openai/gpt-5"}
    target = ModelResponse.objects.get(test_case__external_id="C-0001", model__name=GEMINI)
    fake_server.rules.append(FaultRule("503", model=PRIMARY, contains=target.text))
    run = judge_run_create(rubric=benchmark, models=[GEMINI])
    judge_run_execute(run=run, **FAST)
    per_item = calls_per_item_and_model(fake_server.records(), {target.pk: target.text})
    assert per_item[target.pk] == Counter({PRIMARY: 3, FALLBACK: 1, "openai/gpt-5": 1})
    roles = set(JudgeResult.objects.filter(run=run, response=target).values_list("role", flat=True))
    assert roles == {"primary", "fallback", "secondary"}


def test_calls_answered_before_the_worker_died_stay_counted_and_the_resume_adds_only_its_own(
        benchmark, judge_settings, fake_server, monkeypatch):
    """The worker dies after calls were answered and before their results were stored; those items are sent again
    on resume. The run's calls and tokens must equal what the endpoint received and reported, re-sent calls
    included, each counted once."""
    fake_server.latency = 0.01
    run = judge_run_create(rubric=benchmark)
    real_store = pipeline.judge_results_store
    stores = []

    def store_then_die(**kwargs):  # type: ignore[no-untyped-def]
        stores.append(len(kwargs["outcomes"]))
        if len(stores) == 2:
            raise SimulatedCrash  # the second batch's answers arrived; its results are never stored
        real_store(**kwargs)

    monkeypatch.setattr(pipeline, "judge_results_store", store_then_die)
    with pytest.raises(SimulatedCrash):
        judge_run_execute(run=run, config_overrides={"max_in_flight": 4, "write_batch_size": 5}, **FAST)
    monkeypatch.setattr(pipeline, "judge_results_store", real_store)
    run.refresh_from_db()
    stored = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    assert run.status == "running" and len(stored) == stores[0] == run.processed_items >= 1
    calls_at_crash = len(fake_server.records())

    summary = judge_run_execute(run=judge_run_resume(run=run, force=True), **FAST)
    assert summary.status == "finished" and summary.scored == 36 and summary.adds_up
    records = fake_server.records()
    assert len(records) > calls_at_crash and len(records) > 36 + 12  # some calls really were sent twice
    run.refresh_from_db()
    assert run.calls == len(records)
    usage = fake_server.usage_reported()
    assert (run.prompt_tokens, run.completion_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert run.cost > sum(r.cost for r in JudgeResult.objects.filter(run=run))  # the lost answers were paid too
