"""A judge run rides out a lost database connection (issue 25, item 1): its writes are tried again within its lease,
and a batch whose commit went through unseen is not stored twice. The real PostgreSQL restart is
tests/config/test_worker_postgres_restart.py."""
from __future__ import annotations

import pytest
from django.db import OperationalError

from evaluations.judge import pipeline
from evaluations.judge.fake_server import text_key
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.services import judge_run_create
from evaluations.models import JudgeResult, JudgeRun, ModelResponse

from .conftest import import_benchmark, no_sleep

# Transactional: the retry closes the connection, so no test transaction may be around it.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_batch_committed_as_the_connection_dropped_is_stored_once_and_the_run_finishes(
        tmp_path, rubric_v1, judge_settings, fake_server, monkeypatch):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=4)
    run = judge_run_create(rubric=rubric_v1, label="outage")
    real_store, real_beat = pipeline.judge_results_store, pipeline.judge_run_heartbeat
    dropped = {"store": 0, "beat": 0}

    def store(**kwargs):  # type: ignore[no-untyped-def]
        real_store(**kwargs)  # committed ...
        if not dropped["store"]:
            dropped["store"] += 1
            raise OperationalError("server closed the connection unexpectedly")  # ... but the worker saw an error

    def beat(**kwargs):  # type: ignore[no-untyped-def]
        if dropped["beat"] < 2:
            dropped["beat"] += 1
            raise OperationalError("the database system is shutting down")
        return real_beat(**kwargs)

    monkeypatch.setattr(pipeline, "judge_results_store", store)
    monkeypatch.setattr(pipeline, "judge_run_heartbeat", beat)
    monkeypatch.setattr(pipeline, "CANCEL_CHECK_SECONDS", 0.0)  # renew the lease at once, so the heartbeat is hit
    summary = judge_run_execute(run=run, client_options={"sleep": no_sleep})

    assert dropped == {"store": 1, "beat": 2}
    assert summary.status == JudgeRun.Status.FINISHED and summary.scored == run.total_items == 12
    run.refresh_from_db()
    assert run.processed_items == 12 and run.calls == JudgeResult.objects.filter(run=run).count()
    per_item = JudgeResult.objects.filter(run=run, role="primary").values_list("response_id", flat=True)
    assert sorted(per_item) == sorted(ModelResponse.objects.values_list("id", flat=True))  # each once
    for text in ModelResponse.objects.values_list("text", flat=True):
        assert fake_server.calls_for(text) == (2 if "gemini" in text else 1), "an item was sent again"
    assert {r.key for r in fake_server.records()} >= {text_key(t) for t in ModelResponse.objects.values_list("text", flat=True)}
