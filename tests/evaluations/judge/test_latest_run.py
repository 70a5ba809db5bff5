"""Issue 15 part 10: "the latest run" means the newest run with status *finished*, everywhere a default run is
taken — a newer cancelled, failed or running run is never the default (its scores are partial)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from calibration.cycles.ratings import judge_run_for_cycle
from evaluations.judge.selectors import judge_run_latest_finished
from evaluations.models import JudgeRun, RubricVersion
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _not_trials(monkeypatch):  # type: ignore[no-untyped-def]
    """These runs carry counts but no results: whether a run is a trial (issue 32) is tested in test_trial_run."""
    from evaluations.judge import selectors

    monkeypatch.setattr(selectors, "judge_run_is_trial", lambda *, run: False)


def make_run(rubric: RubricVersion, status: str, *, age_minutes: int, scored: int = 10) -> JudgeRun:
    processed = scored if status != JudgeRun.Status.RUNNING else scored
    run = JudgeRun.objects.create(rubric=rubric, primary_model="j", base_url="http://127.0.0.1:9/v1", status=status,
                                  total_items=40, processed_items=processed, scored_items=scored)
    JudgeRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=age_minutes))
    return run


@pytest.fixture
def runs(rubric_v1):  # type: ignore[no-untyped-def]
    finished = make_run(rubric_v1, JudgeRun.Status.FINISHED, age_minutes=60)
    newer = {status: make_run(rubric_v1, status, age_minutes=age)
             for status, age in ((JudgeRun.Status.CANCELLED, 30), (JudgeRun.Status.FAILED, 20),
                                 (JudgeRun.Status.RUNNING, 10), (JudgeRun.Status.QUEUED, 5))}
    make_run(rubric_v1, JudgeRun.Status.FINISHED, age_minutes=1, scored=0)  # finished with nothing scored
    return finished, newer


def test_the_selector_skips_newer_cancelled_failed_running_and_empty_runs(runs, rubric_v1) -> None:  # type: ignore[no-untyped-def]
    finished, newer = runs
    assert judge_run_latest_finished() == finished
    assert judge_run_latest_finished(rubric_id=rubric_v1.pk) == finished
    other = RubricVersion.objects.create(version="9.9", status=RubricVersion.Status.DRAFT)
    assert judge_run_latest_finished(rubric_id=other.pk) is None
    newest_elsewhere = make_run(other, JudgeRun.Status.FINISHED, age_minutes=0)
    assert judge_run_latest_finished() == newest_elsewhere
    assert judge_run_latest_finished(rubric_id=rubric_v1.pk) == finished


def test_every_default_uses_it_and_an_explicit_choice_still_works(runs, rubric_v1) -> None:  # type: ignore[no-untyped-def]
    from annotations.models import CalibrationCycle
    from delphi import rescoring

    finished, newer = runs
    cycle = CalibrationCycle.objects.create(name="c", rubric=rubric_v1, seed=1)
    assert judge_run_for_cycle(cycle=cycle) == finished
    cancelled = newer[JudgeRun.Status.CANCELLED]
    assert judge_run_for_cycle(cycle=cycle, run_id=cancelled.pk) == cancelled  # chosen by id: allowed
    client = Client()
    client.force_login(person("admin", name="Latest Run Admin"))
    assert client.get("/api/v1/leaderboard/").json()["run"] == finished.pk
    assert client.get(f"/api/v1/leaderboard/?run={cancelled.pk}").json()["run"] == cancelled.pk
    seen = []
    original = rescoring.judged_items
    rescoring.judged_items = lambda *, run: seen.append(run) or original(run=run)  # type: ignore[assignment]
    try:
        rescoring.rescoring_report(old_dimension_weights={}, old_sub_weights={}, new_dimension_weights={},
                                   new_sub_weights={})
    except Exception:  # the empty weights may not re-score; which run it read is what matters here
        pass
    finally:
        rescoring.judged_items = original  # type: ignore[assignment]
    assert seen == [finished]
