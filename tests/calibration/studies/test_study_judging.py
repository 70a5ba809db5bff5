"""Judging an imported study against the local fake endpoint: each answer becomes a score of the model's judge
rater; retries and failures are counted; a second run sends only what is missing (no call repeated after it
succeeded); cancelling a queued run never starts it; the study's report then compares the judge with the humans."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from calibration.models import Study, StudyJudgeRun, StudyRater, StudyScore
from calibration.studies.importing import study_import
from calibration.studies.judging import (
    parse_study_score,
    study_judge_run_cancel,
    study_judge_run_execute,
    study_judge_run_request,
)
from calibration.studies.snapshots import study_snapshot_compute, study_snapshot_request
from evaluations.judge.fake_server import FakeLLMServer, FaultRule, fake_study_score, text_key
from evaluations.judge.prompts import study_user_message
from tests.evaluations.judge.conftest import no_sleep

pytestmark = pytest.mark.django_db
PROMPT = "Read the summary below and rate its {name}.\n\nSummary: {{{{ instance }}}}\n\nAnswer with a score."


def judge_bench_file(path: Path, *, n: int = 12) -> Path:
    """A JUDGE-BENCH-format dataset: two graded 1–5 metrics with a prompt each, three humans, item texts."""
    data = {
        "dataset": "mini", "annotations": [
            {"metric": m, "category": "graded", "worst": 1, "best": 5, "prompt": PROMPT.format(name=m)}
            for m in ("coherence", "fluency")],
        "instances": [
            {"id": i, "instance": f"Summary number {i}: the council met at Nicaea in 325 and λόγος was discussed.",
             "annotations": {m: {"individual_human_scores": [1 + (i + h) % 5 for h in range(3)]}
                             for m in ("coherence", "fluency")}}
            for i in range(n)],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_prompts_and_replies() -> None:
    assert study_user_message(template="Rate: {{instance}} now", text="T", dimension="d") == "Rate: T now"
    assert study_user_message(template="Rate this.", text="T", dimension="d") == "Rate this.\n\nT"
    assert study_user_message(template="", text="T", dimension="d") == "Rate the following text for d.\n\nT"
    assert study_user_message(template="{{ instance }} {x}", text="a {b} \\1", dimension="d") == "a {b} \\1 {x}"
    assert parse_study_score('{"score": 4}', low=1, high=5) == 4
    assert parse_study_score("```json\n{\"score\": 2}\n```", low=1, high=5) == 2
    assert parse_study_score("I give it 3 out of 5.", low=1, high=5) == 3
    for bad in ('{"score": 6}', "no idea", '{"score": true}', '{"score": "NaN"}'):
        with pytest.raises(ValueError):
            parse_study_score(bad, low=1, high=5)


def test_a_judge_scores_a_study_resumes_without_repeating_and_enters_its_report(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    study_import(path=judge_bench_file(tmp_path / "mini.json"), study="mini", fmt="judge-bench")
    study = Study.objects.get(name="mini")
    settings.FAITHBENCH = {**getattr(settings, "FAITHBENCH", {}), "MAX_IN_FLIGHT": 4}
    with FakeLLMServer(fault_rates={"429": 0.2}, seed=3) as server:
        # item 7's fluency answer is unreadable every time: counted as a parse failure, never stored
        server.rules.append(FaultRule("malformed", contains="Summary number 7:", model="judge-a"))
        trial = study_judge_run_request(study=study, model="judge-a", requested_by=None, base_url=server.base_url,
                                        limit=5)
        trial = study_judge_run_execute(run=trial, client_options={"sleep": no_sleep})
        assert (trial.status, trial.total, trial.scored + trial.failed) == ("finished", 5, 5)
        rest = study_judge_run_request(study=study, model="judge-a", requested_by=None, base_url=server.base_url)
        rest = study_judge_run_execute(run=rest, client_options={"sleep": no_sleep})
        assert rest.status == "finished" and rest.total == 24 - trial.scored
        again = study_judge_run_execute(run=rest)  # a second execution of the same run does nothing
        assert again.scored == rest.scored
        judge = StudyRater.objects.get(study=study, name="judge-a")
        assert judge.kind == "judge"
        # item 7 (both metrics) unreadable; a call whose three attempts all met a 429 failed too
        assert rest.errors["parse"] == 2 and rest.failed == sum(rest.errors.values()) >= 2, rest.errors
        assert StudyScore.objects.filter(rater=judge).count() == trial.scored + rest.scored == 24 - rest.failed
        assert rest.prompt_tokens > 0 and rest.completion_tokens > 0 and rest.cost > 0
        # resuming sends exactly what is missing
        server.rules.clear()
        server.fault_rates.clear()
        last = study_judge_run_request(study=study, model="judge-a", requested_by=None, base_url=server.base_url)
        last = study_judge_run_execute(run=last, client_options={"sleep": no_sleep})
        assert (last.status, last.total, last.scored, last.failed) == ("finished", rest.failed, rest.failed, 0)
        records = server.records()
    stored = StudyScore.objects.filter(rater=judge)
    assert stored.count() == 24
    # every stored score is the fake's deterministic answer for that exact prompt
    for score in stored.select_related("item", "dimension"):
        user = study_user_message(template=score.dimension.prompt, text=score.item.text,
                                        dimension=score.dimension.key)
        assert score.value == fake_study_score(text_key(user), 1, 5, "judge-a")
    # no prompt that got an answer was sent again (429s are retried within one call)
    ok_calls = [r for r in records if r.outcome == "ok"]
    assert len(ok_calls) == len({r.key for r in ok_calls}) == 24

    snapshot = study_snapshot_compute(snapshot_id=study_snapshot_request(study=study, requested_by=None,
                                                                          n_resamples=0).pk)
    row = snapshot.payload["dimensions"]["coherence"]["judges"][0]
    assert row["rater"] == "judge-a" and row["n_items"] == 12 and row["confusion"]["labels"] == [1, 2, 3, 4, 5]
    assert sum(map(sum, row["confusion"]["matrix"])) == 12


def test_refusals_and_cancelling_a_queued_run(tmp_path: Path) -> None:
    study_import(path=judge_bench_file(tmp_path / "mini.json", n=3), study="mini", fmt="judge-bench")
    study = Study.objects.get(name="mini")
    for kwargs, field in (({"model": "human-1"}, "model"), ({"model": " "}, "model"),
                          ({"model": "j", "dimensions": ["nope"]}, "dimensions"), ({"model": "j", "limit": 0}, "limit")):
        with pytest.raises(ValidationError) as caught:
            study_judge_run_request(study=study, requested_by=None, base_url="http://127.0.0.1:9/v1", **kwargs)
        assert field in caught.value.message_dict
    run = study_judge_run_request(study=study, model="j", requested_by=None, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValidationError, match="still queued or running"):
        study_judge_run_request(study=study, model="j", requested_by=None, base_url="http://127.0.0.1:9/v1")
    assert study_judge_run_cancel(run=run) is True
    run = study_judge_run_execute(run=run)
    assert run.status == "cancelled" and run.started_at is None and run.total == 0
    assert study_judge_run_cancel(run=run) is False
    bare = Study.objects.create(name="no texts")
    with pytest.raises(ValidationError, match="no text"):
        study_judge_run_request(study=bare, model="j", requested_by=None, base_url="http://127.0.0.1:9/v1")


def test_manage_py_judge_study(tmp_path: Path) -> None:
    study_import(path=judge_bench_file(tmp_path / "mini.json", n=4), study="mini", fmt="judge-bench")
    with FakeLLMServer() as server:
        out = io.StringIO()
        call_command("judge_study", "mini", "--model", "judge-b", "--dimension", "fluency", "--base-url",
                     server.base_url, stdout=out, stderr=io.StringIO())
    assert "4 scored, 0 failed of 4" in out.getvalue() and "USD" in out.getvalue()
    assert StudyJudgeRun.objects.get().status == "finished"
    assert StudyScore.objects.filter(rater__name="judge-b", dimension__key="fluency").count() == 4
    with pytest.raises(CommandError, match="no study"):
        call_command("judge_study", "nope", "--model", "x")
    with pytest.raises(CommandError, match="human rater"):
        call_command("judge_study", "mini", "--model", "human-2")


def test_the_api_starts_follows_and_cancels_a_study_judge_run(tmp_path: Path, settings, client,  # type: ignore[no-untyped-def]
                                                             django_capture_on_commit_callbacks, immediate_tasks) -> None:
    from accounts.models import ApiToken
    from tests.accounts.api import token_auth
    from tests.annotations.factories import person

    study_import(path=judge_bench_file(tmp_path / "mini.json", n=3), study="mini", fmt="judge-bench")
    study = Study.objects.get(name="mini")
    admin = person("admin", name="Judge Admin")
    runner, reader = token_auth(admin, ApiToken.Scope.JUDGE_RUN), token_auth(admin, ApiToken.Scope.REPORTS_READ)
    url = f"/api/v1/studies/{study.pk}/judge-runs/"
    assert client.post(url, {"model": "m"}, content_type="application/json", **reader).status_code == 403
    bad = client.post(url, {"model": "human-1"}, content_type="application/json", **runner)
    assert bad.status_code == 400 and bad.json()["errors"] == [
        "model: 'human-1' is a human rater of this study: a judge needs its own name"]
    assert client.post(url, {"limit": 0}, content_type="application/json", **runner).status_code == 400
    with FakeLLMServer() as server:
        settings.FAITHBENCH = {**getattr(settings, "FAITHBENCH", {}), "LLM_BASE_URL": server.base_url}
        with django_capture_on_commit_callbacks(execute=True):
            started = client.post(url, {"model": "api-judge", "dimensions": ["coherence"]},
                                  content_type="application/json", **runner)
    assert started.status_code == 202, started.content
    run = client.get(f"/api/v1/studies/judge-runs/{started.json()['id']}/", **reader).json()
    assert (run["status"], run["total"], run["scored"], run["failed"]) == ("finished", 3, 3, 0)
    assert float(run["cost"]) > 0 and run["dimensions"] == ["coherence"]
    cancel = client.post(f"/api/v1/studies/judge-runs/{run['id']}/cancel/", **runner)
    assert cancel.status_code == 409  # it has ended
    queued = study_judge_run_request(study=study, model="later", requested_by=None, base_url=server.base_url)
    cancelled = client.post(f"/api/v1/studies/judge-runs/{queued.pk}/cancel/", **runner)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["started_at"] is None


def test_a_run_whose_process_died_is_failed_by_the_next_request_which_resumes_it(tmp_path: Path) -> None:
    from datetime import timedelta

    from django.utils import timezone

    study_import(path=judge_bench_file(tmp_path / "mini.json", n=3), study="mini", fmt="judge-bench")
    study = Study.objects.get(name="mini")
    dead = study_judge_run_request(study=study, model="j", requested_by=None, base_url="http://127.0.0.1:9/v1")
    StudyJudgeRun.objects.filter(pk=dead.pk).update(status="running", started_at=timezone.now(),
                                                    heartbeat_at=timezone.now() - timedelta(minutes=2))
    with pytest.raises(ValidationError, match="still queued or running"):  # alive two minutes ago: still running
        study_judge_run_request(study=study, model="j", requested_by=None, base_url="http://127.0.0.1:9/v1")
    StudyJudgeRun.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=6))
    with FakeLLMServer() as server:
        again = study_judge_run_request(study=study, model="j", requested_by=None, base_url=server.base_url)
        again = study_judge_run_execute(run=again)
    dead.refresh_from_db()
    assert dead.status == "failed" and "stopped" in dead.error
    assert (again.status, again.scored) == ("finished", 6)
