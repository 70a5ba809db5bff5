"""End-to-end judge runs against the fake endpoint over real HTTP (short timeouts, no real backoff)."""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest

from evaluations.judge import pipeline
from evaluations.judge.fake_server import FaultRule, fake_score, text_key
from evaluations.judge.leaderboard import case_composite
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_cancel, judge_run_create, judge_run_resume
from evaluations.models import JudgeResult, JudgeRun, JudgeScore, ModelResponse
from evaluations.selectors import rubric_weights

from .conftest import MODELS, import_benchmark, no_sleep

FAST = {"client_options": {"sleep": no_sleep}}
GPT, CLAUDE, GEMINI = (m[0] for m in MODELS)


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=12)
    return rubric_v1


def response_of(model: str, case: str = "C-0000") -> ModelResponse:
    return ModelResponse.objects.select_related("test_case").get(test_case__external_id=case, model__name=model)


def test_run_scores_every_response_with_the_fake_judges_deterministic_scores(benchmark, judge_settings):
    run = judge_run_create(rubric=benchmark, label="smoke")
    assert run.total_items == 36
    summary = judge_run_execute(run=run, **FAST)
    assert summary.status == JudgeRun.Status.FINISHED
    assert summary.scored == 36 and summary.adds_up and summary.excluded == 0 and summary.pending == 0
    weights = rubric_weights(rubric=benchmark)["textual"][1]
    response = response_of(GPT)
    result = JudgeResult.objects.get(run=run, response=response, role=JudgeResult.Role.PRIMARY)
    scores = {s.sub_dimension: s.raw_score for s in result.scores.all()}
    assert scores == {sub: fake_score(text_key(response.text), sub, result.judge_model) for sub in weights}
    assert result.composite == case_composite(raw_scores=scores, sub_weights=weights).quantize(Decimal("0.000001"))
    assert result.judge_model == "google/gemini-3-flash-preview" and result.attempts == 1
    run.refresh_from_db()
    assert run.processed_items == run.scored_items == 36 and run.finished_at is not None
    totals = JudgeResult.objects.filter(run=run)
    assert run.prompt_tokens == sum(r.prompt_tokens for r in totals) > 0
    assert run.cost == sum(r.cost for r in totals) > 0
    assert run.calls == totals.count() == 36 + 12  # 12 gemini responses also go to the secondary judge


def test_models_of_the_primary_judges_family_are_also_scored_by_the_secondary_judge(benchmark, judge_settings):
    run = judge_run_create(rubric=benchmark)
    summary = judge_run_execute(run=run, **FAST)
    assert summary.secondary_scored == 12 and summary.secondary_failed == 0
    gemini = JudgeResult.objects.filter(run=run, response__model__name=GEMINI)
    assert sorted(gemini.order_by("role").values_list("role", flat=True).distinct()) == ["primary", "secondary"]
    assert set(gemini.filter(role="secondary").values_list("judge_model", flat=True)) == {"openai/gpt-4o-mini"}
    assert not JudgeResult.objects.filter(run=run, role="secondary").exclude(response__model__name=GEMINI).exists()


def test_primary_http_error_after_retries_falls_back_to_the_secondary_model(benchmark, judge_settings, fake_server):
    target = response_of(GPT, "C-0001")
    fake_server.rules.append(FaultRule("503", contains=target.text, model="google/gemini-3-flash-preview"))
    run = judge_run_create(rubric=benchmark, models=[GPT])
    summary = judge_run_execute(run=run, **FAST)
    results = {r.role: r for r in JudgeResult.objects.filter(run=run, response=target)}
    assert results["primary"].status == "failed" and results["primary"].error_class == "server_error"
    assert results["primary"].attempts == 3 and results["primary"].http_status == 503
    assert results["fallback"].status == "scored" and results["fallback"].judge_model == "openai/gpt-4o-mini"
    assert summary.scored == 12 and summary.fallback_used == 1
    assert fake_server.calls_for(target.text) == 4


def test_403_is_recorded_as_filtered_and_excluded_without_fallback(benchmark, judge_settings, fake_server):
    target = response_of(GPT, "C-0002")
    fake_server.rules.append(FaultRule("403", contains=target.text))
    run = judge_run_create(rubric=benchmark, models=[GPT])
    summary = judge_run_execute(run=run, **FAST)
    result = JudgeResult.objects.get(run=run, response=target)
    assert (result.status, result.error_class, result.attempts, result.role) == ("filtered", "filtered", 1, "primary")
    assert summary.filtered == 1 and summary.excluded == 1 and summary.scored == 11 and summary.adds_up
    assert fake_server.calls_for(target.text) == 1


@pytest.mark.parametrize("fault", ["malformed", "partial", "missing", "float_score", "bad_envelope"])
def test_unparseable_judge_output_keeps_the_raw_text_as_a_judge_error(benchmark, judge_settings, fake_server, fault):
    target = response_of(CLAUDE, "C-0003")
    fake_server.rules.append(FaultRule(fault, contains=target.text))
    run = judge_run_create(rubric=benchmark, models=[CLAUDE])
    summary = judge_run_execute(run=run, **FAST)
    result = JudgeResult.objects.get(run=run, response=target)
    assert (result.status, result.error_class, result.attempts) == ("parse_error", "parse_error", 1)
    assert result.raw_response and result.composite is None and not result.scores.exists()
    assert summary.failed == {"parse_error": 1} and summary.scored == 11
    assert fake_server.calls_for(target.text) == 1  # no retry, no fallback


def test_scores_whose_reasoning_contradicts_them_are_flagged(benchmark, judge_settings, fake_server):
    target = response_of(CLAUDE, "C-0004")
    fake_server.rules.append(FaultRule("contradiction", contains=target.text))
    run = judge_run_create(rubric=benchmark, models=[CLAUDE])
    summary = judge_run_execute(run=run, **FAST)
    result = JudgeResult.objects.get(run=run, response=target)
    assert result.status == "scored" and result.consistency_flag and result.composite == 1
    assert JudgeScore.objects.filter(result=result, consistency_flag=True).count() == 4
    assert summary.flagged == 1
    run.refresh_from_db()
    assert run.flagged_items == 1


def test_401_stops_the_run_flags_it_and_a_resume_sends_only_what_is_left(benchmark, judge_settings, fake_server):
    fake_server.rules.append(FaultRule("401", times=1))
    run = judge_run_create(rubric=benchmark, models=[GPT, CLAUDE])
    summary = judge_run_execute(run=run, config_overrides={"max_in_flight": 1}, **FAST)
    run.refresh_from_db()
    assert run.status == "failed" and run.flagged_auth_error and "401" in run.error_message
    assert summary.flagged_auth_error and summary.pending == 24 and summary.adds_up
    assert not JudgeResult.objects.filter(run=run).exists()  # the 401 item is not recorded as a failure
    resumed = judge_run_resume(run=run)
    assert not resumed.flagged_auth_error
    summary = judge_run_execute(run=resumed, **FAST)
    assert summary.status == "finished" and summary.scored == 24
    assert len(fake_server.records()) == 25  # the 401 call plus one per item


def test_cancelling_a_running_run_stops_it_after_its_in_flight_requests(benchmark, judge_settings, fake_server,
                                                                          monkeypatch):
    monkeypatch.setattr(pipeline, "CANCEL_CHECK_SECONDS", 0.05)
    fake_server.latency = 0.05
    run = judge_run_create(rubric=benchmark)

    def cancel_after_first_batch(stored: int) -> None:
        if JudgeRun.objects.get(pk=run.pk).status == "running":
            judge_run_cancel(run=run)

    summary = judge_run_execute(run=run, config_overrides={"max_in_flight": 2, "write_batch_size": 1},
                                after_store=cancel_after_first_batch, **FAST)
    assert summary.status == "cancelled" and 0 < summary.done < 36 and summary.pending > 0 and summary.adds_up
    assert len(fake_server.records()) == JudgeResult.objects.filter(run=run).count()  # nothing sent and lost


def test_cancelling_a_queued_run_means_it_never_starts(benchmark, judge_settings, fake_server):
    run = judge_run_create(rubric=benchmark)
    assert judge_run_cancel(run=run).status == "cancelled"
    summary = judge_run_execute(run=run, **FAST)
    assert summary.status == "cancelled" and summary.pending == 36 and fake_server.records() == []
    run.refresh_from_db()
    assert run.started_at is None and run.finished_at is not None  # never started, so no start time


def test_each_result_records_its_latency_and_retry_waits_and_the_run_page_shows_them(  # type: ignore[no-untyped-def]
        benchmark, judge_settings, fake_server, client):
    from evaluations.judge.selectors import judge_run_call_stats
    from tests.annotations.factories import person

    target = response_of(GPT, "C-0002")
    fake_server.latency = 0.05
    fake_server.rules.append(FaultRule("503", contains=target.text, model="google/gemini-3-flash-preview", times=1))
    run = judge_run_create(rubric=benchmark, models=[GPT])
    judge_run_execute(run=run, **FAST)
    results = list(JudgeResult.objects.filter(run=run))
    assert results and all(r.latency_ms is not None and r.latency_ms >= 50 for r in results)
    retried = JudgeResult.objects.get(run=run, response=target, role="primary")
    assert retried.attempts == 2 and retried.retry_wait_ms == 1000  # the backoff before the second attempt
    assert sum(r.retry_wait_ms for r in results) == 1000
    stats = judge_run_call_stats(run=run)
    ordered = sorted(r.latency_ms for r in results)
    assert stats.results == len(results) and stats.latency_p50_ms == ordered[(len(ordered) + 1) // 2 - 1]
    assert stats.latency_p95_ms == ordered[-(-95 * len(ordered) // 100) - 1] and stats.retry_wait_s == 1.0
    assert stats.errors == {}  # the retried call succeeded
    client.force_login(person("admin", name="Run Page Admin"))
    page = client.get(f"/judge/runs/{run.pk}/").content.decode()
    assert f"p50 {stats.latency_p50_ms} ms · p95 {stats.latency_p95_ms} ms over {len(results)} results" in page


class SimulatedCrash(BaseException):
    """Stands for SIGKILL: nothing after it runs, not even the run's status update."""


def test_a_crashed_run_resumes_without_calling_the_endpoint_again_for_finished_items(benchmark, judge_settings,
                                                                                     fake_server):
    fake_server.latency = 0.01
    run = judge_run_create(rubric=benchmark)

    def crash(stored: int) -> None:
        if stored >= 10:
            raise SimulatedCrash

    with pytest.raises(SimulatedCrash):
        judge_run_execute(run=run, config_overrides={"max_in_flight": 4, "write_batch_size": 5}, after_store=crash,
                          **FAST)
    run.refresh_from_db()
    assert run.status == "running"  # as a killed worker leaves it
    finished = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    assert 10 <= len(finished) < 36 and run.processed_items == len(finished)
    texts = dict(ModelResponse.objects.values_list("id", "text"))
    calls_before = {rid: fake_server.calls_for(texts[rid]) for rid in texts}

    with pytest.raises(Exception, match="may still be alive"):
        judge_run_resume(run=run)  # its heartbeat is fresh
    summary = judge_run_execute(run=judge_run_resume(run=run, force=True), **FAST)

    assert summary.status == "finished" and summary.scored == 36 and summary.adds_up
    for rid in finished:
        assert fake_server.calls_for(texts[rid]) == calls_before[rid], "a finished item was sent again"
    assert JudgeResult.objects.filter(run=run, role="primary").count() == 36  # unique per run × response × role


def test_a_run_whose_worker_died_is_taken_back_after_its_lease_and_finished_by_another_worker(  # type: ignore[no-untyped-def]
        benchmark, judge_settings, fake_server, immediate_tasks, django_capture_on_commit_callbacks):
    """Issue 15 part 11: no operator. A worker dies mid-run; any worker's recovery thread takes the run back once its
    lease (STALE_RUN_SECONDS without a heartbeat) has expired and queues it; it finishes, and the only calls sent
    again are those whose answers had arrived but were not yet committed when the worker died."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluations.judge.services import judge_runs_reclaim
    from evaluations.tasks import judge_runs_recover

    fake_server.latency = 0.01
    run = judge_run_create(rubric=benchmark)

    def crash(stored: int) -> None:
        if stored >= 10:
            raise SimulatedCrash

    with pytest.raises(SimulatedCrash):
        judge_run_execute(run=run, config_overrides={"max_in_flight": 4, "write_batch_size": 5}, after_store=crash,
                          **FAST)
    run.refresh_from_db()
    committed = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    calls_at_crash = len(fake_server.records())
    assert run.status == "running" and 10 <= len(committed) < 36
    assert judge_runs_recover() == []  # its lease is still valid: nobody takes it
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=31))
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_runs_recover() == [run.pk]  # queued again and (immediate backend) executed to the end
    assert judge_runs_reclaim() == []  # taken once: a second worker finds nothing to take
    run.refresh_from_db()
    assert run.status == "finished" and run.processed_items == run.total_items == 36
    texts = dict(ModelResponse.objects.values_list("id", "text"))
    resent = [r for r in fake_server.records()[calls_at_crash:]
              if r.key in {text_key(texts[rid]) for rid in committed}]
    assert resent == []  # nothing committed was sent again
    # a cancelling run whose worker died becomes cancelled
    other = judge_run_create(rubric=benchmark, models=[GPT])
    JudgeRun.objects.filter(pk=other.pk).update(status="cancelling", heartbeat_at=timezone.now() - timedelta(minutes=5))
    assert judge_runs_reclaim() == []
    other.refresh_from_db()
    assert other.status == "cancelled" and other.finished_at is not None


def test_fault_injection_every_item_ends_scored_or_failed_and_nothing_is_lost_or_resent(
    db, tmp_path, rubric_v1, judge_settings, fake_server
):
    """20 % 429/503, 5 % malformed JSON, 2 % timeouts over 500 items, over real HTTP."""
    import_benchmark(tmp_path, n_cases=250, models=[MODELS[0], MODELS[1]], prefix="F")
    fake_server.fault_rates = {"429": 0.10, "503": 0.10, "malformed": 0.05, "timeout": 0.02}
    fake_server.seed = 20260301
    fake_server.hang_seconds = 3.0
    run = judge_run_create(rubric=rubric_v1)
    assert run.total_items == 500
    summary = judge_run_execute(run=run, config_overrides={"timeout": 1.0}, **FAST)

    # Every item has exactly one decisive result; none is lost, none pending.
    assert summary.status == "finished" and summary.pending == 0 and summary.adds_up
    assert summary.scored + summary.failed_total + summary.filtered == 500
    assert JudgeResult.objects.filter(run=run).order_by().values("response").distinct().count() == 500
    assert set(summary.failed) <= {"parse_error", "rate_limited", "server_error", "timeout"}
    assert not JudgeResult.objects.filter(run=run).exclude(status="scored").filter(error_class="").exists()

    # Never called again after a success (a 200, parseable or not).
    records = fake_server.records()
    by_key = defaultdict(list)
    for record in records:
        by_key[record.key].append(record)
    for calls in by_key.values():
        first_200 = next((i for i, c in enumerate(calls) if c.answered_200), None)
        assert first_200 is None or first_200 == len(calls) - 1, [c.outcome for c in calls]

    # The stored outcome of each item is what the server last said about it.
    expected_status = {"ok": "scored", "malformed": "parse_error", "429": "rate_limited", "503": "server_error",
                       "timeout": "timeout"}
    decisive = {}
    for response_id, role, status, error_class in JudgeResult.objects.filter(run=run).values_list(
            "response_id", "role", "status", "error_class"):
        if role == "fallback" or response_id not in decisive:
            decisive[response_id] = status if status == "scored" else error_class
    texts = dict(ModelResponse.objects.values_list("id", "text"))
    for response_id, outcome in decisive.items():
        assert expected_status[by_key[text_key(texts[response_id])][-1].outcome] == outcome

    # The faults did happen, and the counters match the server's log.
    outcomes = {r.outcome for r in records}
    assert {"429", "503", "malformed", "timeout"} <= outcomes
    run.refresh_from_db()
    assert run.calls == len(records)
    assert run.processed_items == 500 and run.scored_items == summary.scored
    assert summary.failed.get("parse_error", 0) >= 10 and summary.scored >= 450


def test_cancelling_a_run_whose_worker_died_cancels_it_at_once(benchmark, judge_settings):
    from datetime import timedelta

    from django.utils import timezone

    run = judge_run_create(rubric=benchmark)
    JudgeRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=timezone.now() - timedelta(hours=1))
    assert judge_run_cancel(run=run).status == "cancelled"
    fresh = judge_run_create(rubric=benchmark)
    JudgeRun.objects.filter(pk=fresh.pk).update(status="running", heartbeat_at=timezone.now())
    assert judge_run_cancel(run=fresh).status == "cancelling"
