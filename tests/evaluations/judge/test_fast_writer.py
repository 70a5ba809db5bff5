"""The pipeline's fast writer (COPY on PostgreSQL, one compiled INSERT + executemany on SQLite) stores exactly what
the ORM's bulk_create stores for the same results."""
from __future__ import annotations

from decimal import Decimal

from django.utils import timezone

from evaluations.judge.outcomes import ItemOutcome, ResultRecord, ScoreRecord
from evaluations.judge.services import judge_results_store, judge_run_create
from evaluations.models import JudgeResult, JudgeScore, ModelResponse

from .conftest import import_benchmark

COMPARED = ("response_id", "judge_model", "role", "status", "error_class", "error_message", "http_status", "attempts",
            "raw_response", "composite", "consistency_flag", "prompt_tokens", "completion_tokens", "cost",
            "latency_ms", "retry_wait_ms")


def records(i: int) -> list[ResultRecord]:
    """Every shape a result takes: scored (with scores), failed then fallback, secondary unparseable."""
    scored = ResultRecord(role="primary", judge_model="g/j", status="scored", http_status=200, attempts=1,
                          raw_response='{"scores": []} ✓ λόγος', composite=Decimal(f"0.{i:06d}"),
                          consistency_flag=bool(i % 2), prompt_tokens=900 + i, completion_tokens=300,
                          cost=Decimal("0.00012345"), latency_ms=101, retry_wait_ms=0,
                          scores=[ScoreRecord("lexicalAccuracy", i % 4, "why 'quoted'", bool(i % 3)),
                                  ScoreRecord("contextualFidelity", 3, "", False)])
    if i % 3 == 0:
        return [scored]
    if i % 3 == 1:
        failed = ResultRecord(role="primary", judge_model="g/j", status="failed", error_class="server_error",
                              error_message="HTTP 503", http_status=503, attempts=3, retry_wait_ms=3000)
        return [failed, ResultRecord(**{**scored.__dict__, "role": "fallback", "judge_model": "o/k"})]
    broken = ResultRecord(role="secondary", judge_model="o/k", status="parse_error", error_class="parse_error",
                          error_message="not JSON", http_status=200, attempts=1, raw_response="{oops")
    return [scored, broken]


def stored(run) -> tuple[list[tuple], list[tuple]]:  # type: ignore[no-untyped-def]
    results = JudgeResult.objects.filter(run=run).order_by("response_id", "role")
    scores = (JudgeScore.objects.filter(result__run=run)
              .order_by("result__response_id", "result__role", "sub_dimension")
              .values_list("result__response_id", "result__role", "sub_dimension", "raw_score", "reasoning",
                           "consistency_flag"))
    return list(results.values_list(*COMPARED)), list(scores)


def test_the_fast_writer_stores_what_bulk_create_stores(db, tmp_path, rubric_v1):
    import_benchmark(tmp_path, n_cases=4)
    responses = list(ModelResponse.objects.order_by("pk").values_list("pk", flat=True))
    fast, reference = judge_run_create(rubric=rubric_v1), judge_run_create(rubric=rubric_v1)

    judge_results_store(run=fast, outcomes=[ItemOutcome(response_id=rid, results=records(i))
                                            for i, rid in enumerate(responses)])
    now = timezone.now()
    for i, rid in enumerate(responses):
        for r in records(i):
            result = JudgeResult.objects.create(
                run=reference, response_id=rid, created_at=now,
                **{name: getattr(r, name) for name in COMPARED if name != "response_id"})
            JudgeScore.objects.bulk_create([JudgeScore(result=result, sub_dimension=s.key, raw_score=s.raw_score,
                                                       reasoning=s.reasoning, consistency_flag=s.consistency_flag)
                                            for s in r.scores])

    fast_results, fast_scores = stored(fast)
    assert len(fast_results) == JudgeResult.objects.filter(run=reference).count() == 4 + 8 + 8
    assert (fast_results, fast_scores) == stored(reference)
    created = JudgeResult.objects.filter(run=fast).values_list("created_at", flat=True)
    assert all(c is not None and abs((c - now).total_seconds()) < 60 for c in created)
    for result in JudgeResult.objects.filter(run=fast):  # each score hangs on its own result
        expected = records(responses.index(result.response_id))
        keys = {r.role: [s.key for s in r.scores] for r in expected}[result.role]
        assert sorted(result.scores.values_list("sub_dimension", flat=True)) == sorted(keys)
