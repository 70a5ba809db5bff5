"""Database invariants of judge runs, results and scores."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from evaluations.judge.services import judge_run_create
from evaluations.models import JudgeResult, JudgeRun, JudgeScore, ModelResponse

from .conftest import import_benchmark


@pytest.fixture
def run_and_response(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=1)
    run = judge_run_create(rubric=rubric_v1, base_url="http://127.0.0.1:1/v1")
    return run, ModelResponse.objects.first()


def result(run: JudgeRun, response: ModelResponse, **fields: object) -> JudgeResult:
    values = {"judge_model": "j", "role": "primary", "status": "scored", "composite": Decimal("0.5"), **fields}
    return JudgeResult.objects.create(run=run, response=response, **values)


def test_one_result_per_run_response_and_role(run_and_response):
    run, response = run_and_response
    result(run, response)
    result(run, response, role="secondary")
    with pytest.raises(IntegrityError), transaction.atomic():
        result(run, response)


@pytest.mark.parametrize("fields", [
    {"status": "scored", "composite": None},
    {"status": "scored", "composite": Decimal("1.5")},
    {"status": "failed", "composite": Decimal("0.5"), "error_class": "timeout"},
    {"status": "failed", "composite": None, "error_class": ""},
    {"status": "scored", "composite": Decimal("0.5"), "error_class": "timeout"},
    {"status": "lost", "composite": None, "error_class": "timeout"},
    {"role": "tertiary"},
])
def test_result_invariants_are_enforced_by_the_database(run_and_response, fields):
    run, response = run_and_response
    with pytest.raises(IntegrityError), transaction.atomic():
        result(run, response, **fields)


@pytest.mark.parametrize("raw", [-1, 4])
def test_raw_scores_are_between_zero_and_three(run_and_response, raw):
    run, response = run_and_response
    scored = result(run, response)
    JudgeScore.objects.create(result=scored, sub_dimension="lexicalAccuracy", raw_score=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeScore.objects.create(result=scored, sub_dimension="translationFidelity", raw_score=raw)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeScore.objects.create(result=scored, sub_dimension="lexicalAccuracy", raw_score=1)


def test_run_counters_must_add_up(run_and_response):
    run, _ = run_and_response
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeRun.objects.filter(pk=run.pk).update(processed_items=1)
    assert str(run) == f"judge run {run.pk} (queued)" and run.progress_percent == 0
    assert run.selection["max_response_id"] == ModelResponse.objects.order_by("-pk").first().pk


def test_the_fast_writer_column_lists_cover_every_model_field():
    from evaluations.judge.services import RESULT_COLUMNS, SCORE_COLUMNS

    def columns(model: type) -> set[str]:
        return {f.attname for f in model._meta.concrete_fields if not f.primary_key}

    assert set(RESULT_COLUMNS) == columns(JudgeResult) and len(RESULT_COLUMNS) == len(set(RESULT_COLUMNS))
    assert set(SCORE_COLUMNS) == columns(JudgeScore)


def test_results_written_by_the_fast_writer_read_back_like_orm_rows(run_and_response):
    from evaluations.judge.outcomes import ItemOutcome, ResultRecord, ScoreRecord
    from evaluations.judge.services import judge_results_store

    run, response = run_and_response
    record = ResultRecord(role="primary", judge_model="j", status="scored", attempts=2, http_status=200,
                          raw_response="{}", composite=Decimal("0.666667"), consistency_flag=True, prompt_tokens=10,
                          completion_tokens=5, cost=Decimal("0.00001234"),
                          scores=[ScoreRecord("lexicalAccuracy", 2, "why", True)])
    failed = ResultRecord(role="fallback", judge_model="k", status="failed", error_class="timeout", attempts=3)
    judge_results_store(run=run, outcomes=[ItemOutcome(response_id=response.pk, results=[record, failed])])
    stored = JudgeResult.objects.get(run=run, role="primary")
    assert (stored.composite, stored.cost, stored.consistency_flag) == (Decimal("0.666667"), Decimal("0.00001234"), True)
    assert stored.created_at is not None and stored.created_at.tzinfo is not None
    assert list(stored.scores.values_list("sub_dimension", "raw_score", "reasoning", "consistency_flag")) == [
        ("lexicalAccuracy", 2, "why", True)]
    assert JudgeResult.objects.get(run=run, role="fallback").composite is None
    other = JudgeResult.objects.get(run=run, role="fallback")
    assert abs((other.created_at - stored.created_at).total_seconds()) < 5  # comparable, timezone-aware timestamps
    run.refresh_from_db()
    assert (run.processed_items, run.scored_items, run.calls, run.cost) == (1, 0, 5, Decimal("0.00001234"))
    assert run.failed_items == 1  # the fallback's failure decides the item
