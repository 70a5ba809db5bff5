"""Position bias (issue 15 part 1): pairwise runs against the fake endpoint — a judge that always prefers the first
answer is flagged, a fair one is not; every pair is asked in both orders; faults are retried; a resumed run sends
only the ordered pairs it has no verdict for; the prompt names the dimension and shows both answers."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from calibration.validation.position import ALL, position_analysis
from calibration.validation.store import bias_checks
from evaluations.judge.fake_server import FaultRule
from evaluations.judge.pairwise import (
    pairwise_run_create,
    pairwise_run_execute,
    parse_preference,
    pending_pair_calls,
)
from evaluations.judge.prompts import PAIRWISE_SYSTEM_PROMPT
from evaluations.models import PairwiseJudgment, PairwiseRun

from .conftest import import_benchmark, no_sleep

FAST = {"client_options": {"sleep": no_sleep}}


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=24)  # 3 models: 3 pairs per case, 72 pairs, 144 ordered calls
    return rubric_v1


def test_replies_are_read_strictly() -> None:
    assert parse_preference('{"preferred": "B", "reasoning": "fuller"}') == ("B", "fuller")
    assert parse_preference('```json\n{"preferred": "Tie"}\n```') == ("tie", "")
    for bad in ("A is better", '{"preferred": "C"}', "[]"):
        with pytest.raises(ValueError):
            parse_preference(bad)


def test_a_fair_judge_passes_and_a_first_position_judge_is_flagged(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    fair = pairwise_run_execute(run=pairwise_run_create(model="fair-judge", base_url=fake_server.base_url), **FAST)
    assert (fair.status, fair.total, fair.done, fair.failed) == ("finished", 144, 144, 0)
    pairs = set(PairwiseJudgment.objects.filter(run=fair).values_list("first_id", "second_id"))
    assert all((b, a) in pairs for a, b in pairs)  # both orders of every pair
    fair_result = position_analysis(run=fair)
    assert fair_result["groups"][ALL]["reversals"] == 0 and not fair_result["flagged"]
    assert fair_result["groups"][ALL]["verdict"] == "pass"

    fake_server.position_bias = 0.5  # half the calls answered "A" whatever the answers
    biased = pairwise_run_execute(run=pairwise_run_create(model="lazy-judge", base_url=fake_server.base_url), **FAST)
    result = position_analysis(run=biased)
    overall = result["groups"][ALL]
    assert result["flagged"] and overall["flagged"] and overall["verdict"] == "fail"
    assert 0.25 < overall["reversal_rate"] < 0.75 and overall["first_position_share"] > 0.6
    assert set(result["groups"]) == {"textual", "hermeneutical", "doctrinal", "historical", "apologetics",
                                     "intertextual", ALL}


def test_the_prompt_names_the_dimension_and_shows_both_answers_in_order(benchmark, judge_settings) -> None:  # type: ignore[no-untyped-def]
    run = pairwise_run_create(model="m", base_url="http://127.0.0.1:9/v1", limit=1)
    (ab, ba) = pending_pair_calls(run=run)
    assert (ab.first, ab.second) == (ba.second, ba.first)
    assert ab.system == PAIRWISE_SYSTEM_PROMPT.format(dimension="Textual & Linguistic Analysis") or "dimension" in ab.system
    a_text = ab.user.split("ANSWER A:\n")[1].split("\n\nANSWER B:\n")[0]
    assert ba.user.endswith(a_text)  # the first answer of one order is the second of the other


def test_faults_are_retried_and_a_resumed_run_sends_only_what_is_missing(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    fake_server.rules.append(FaultRule("429", calls=(1,)))  # every prompt's first attempt is rate limited
    fake_server.rules.append(FaultRule("malformed", contains="C-0003", times=2))
    run = pairwise_run_create(model="j", base_url=fake_server.base_url, cases="external_id=C-000*", limit=12)
    run = pairwise_run_execute(run=run, **FAST)
    assert run.status == "finished" and run.done == 24 and run.failed == 2  # two unreadable replies kept as such
    PairwiseJudgment.objects.filter(run=run, preferred="").delete()  # as if never judged
    PairwiseRun.objects.filter(pk=run.pk).update(done=22, failed=0)
    before = len(fake_server.records())
    fake_server.rules.clear()
    run = pairwise_run_execute(run=PairwiseRun.objects.get(pk=run.pk), **FAST)
    assert len(fake_server.records()) - before == 2 and run.done == 24 and run.failed == 0


def test_the_command_runs_checks_and_stores(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    call_command("judge_pairwise", "--model", "cmd-judge", "--limit", "20", "--base-url", fake_server.base_url,
                 stdout=out, stderr=io.StringIO())
    # no reversal in 20 pairs, but 20 are too few to show the rate is below 10 %: uncertain, not flagged
    assert "40 of 40 calls" in out.getvalue() and "uncertain" in out.getvalue() and "FLAGGED" not in out.getvalue()
    check = bias_checks().get()
    assert check.check_kind == "position" and not check.flagged and check.n == 20 and check.pairwise_run is not None
    assert json.loads(json.dumps(check.payload))["groups"][ALL]["n_pairs"] == 20
    with pytest.raises(CommandError, match="bad case filter"):
        call_command("judge_pairwise", "--cases", "colour=blue", "--base-url", fake_server.base_url)
    with pytest.raises(CommandError, match="no pairwise run 999"):
        call_command("judge_pairwise", "--resume", "999")


class SimulatedCrash(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


def test_a_crashed_pairwise_run_resumes_without_sending_a_judged_pair_again(benchmark, judge_settings, fake_server) -> None:  # type: ignore[no-untyped-def]
    run = pairwise_run_create(model="j", base_url=fake_server.base_url, limit=30)

    def crash(stored: int) -> None:
        if stored >= 20:
            raise SimulatedCrash

    with pytest.raises(SimulatedCrash):
        pairwise_run_execute(run=run, batch=10, after_store=crash, **FAST)
    judged = list(PairwiseJudgment.objects.filter(run=run).values_list("first_id", "second_id"))
    assert 20 <= len(judged) < 60
    texts_sent = len(fake_server.records())
    run = pairwise_run_execute(run=PairwiseRun.objects.get(pk=run.pk), **FAST)
    assert run.status == "finished" and PairwiseJudgment.objects.filter(run=run).count() == 60
    assert len(fake_server.records()) - texts_sent == 60 - len(judged)  # only what had no verdict
