"""Issue 32 part 2: a trial run (too few cases per model) never becomes the headline, is never ranked, and thin
evidence gets words instead of intervals and effect sizes."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluations.judge.guardrails import MIN_CASES_DEFAULT, evidence_enough, run_is_trial
from evaluations.judge.leaderboard import LeaderboardItem, leaderboard_compute, paired_comparison
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.selectors import judge_run_is_trial, judge_run_latest_finished, leaderboard_cached
from evaluations.judge.services import judge_run_create
from evaluations.models import JudgeRun
from tests.annotations.factories import person

from .conftest import import_benchmark, no_sleep

# Two cases per model, four models: the "8-item test run" of issue 32 (composites chosen so that the overall
# intervals of B and C overlap and A's does not: without the guardrail the ranks are 1 / 2 / 2 / 3 and d is huge).
TRIAL = {"A": (0.90, 0.86), "B": (0.60, 0.87), "C": (0.58, 0.70), "D": (0.10, 0.12)}


def trial_items() -> list[LeaderboardItem]:
    return [LeaderboardItem(model=m, family=m.lower(), case_id=case, dimension="textual", difficulty_weight=1.0,
                            tradition="none", scored=True, composite=value, primary_composite=value,
                            self_preference=False)
            for m, values in TRIAL.items() for case, value in enumerate(values, start=1)]


def test_trial_run_default_minimum_is_the_methodology_cell_size() -> None:
    assert MIN_CASES_DEFAULT == 10  # methodology §5.1.1: at least 10 cases per dimension × difficulty cell
    assert not evidence_enough(2) and not evidence_enough(9) and evidence_enough(10)
    assert not evidence_enough(1, minimum=2) and evidence_enough(2, minimum=2)
    assert run_is_trial({"a": 2, "b": 9}) and not run_is_trial({"a": 2, "b": 10}) and run_is_trial({})


def test_trial_run_without_the_guardrail_reproduces_the_reported_defect() -> None:
    """What the issue saw: ranks from 2 items per model, an interval from two items, d from two pairs."""
    board = leaderboard_compute(trial_items(), n_resamples=500, seed=1, min_cases=2)
    assert [row.tie_group for row in board.models] != [0, 0, 0, 0]
    assert board.models[0].overall.ci_low is not None
    _, _, _, d = paired_comparison([0.90, 0.86], [0.10, 0.12])
    assert d is not None and d > 10  # Cohen's d_z from two pairs: a standard deviation with one degree of freedom


def test_trial_run_is_listed_but_never_ranked_and_shows_no_interval_or_effect_size() -> None:
    board = leaderboard_compute(trial_items(), n_resamples=500, seed=1)
    assert board.trial and board.min_cases == 10
    assert [row.model for row in board.models] == ["A", "B", "C", "D"]  # listed, in score order
    assert all(row.tie_group == 0 and not row.ranked and row.cases == 2 for row in board.models)
    assert all(row.overall.score is not None for row in board.models)  # the estimate stays
    assert all(row.overall.ci_low is None and row.overall.ci_high is None and row.overall.thin
               for row in board.models)
    cells = [cell for row in board.models for cell in (*row.by_dimension.values(), *row.by_tradition.values())]
    assert cells and all(cell.ci_low is None and cell.thin for cell in cells)
    assert all(c.cohens_d is None and c.thin and not c.significant for c in board.comparisons)
    assert board.thin_words(2) == "too few cases for an interval (n = 2; needs at least 10)"


def test_trial_run_rule_ranks_models_that_reach_the_minimum_and_not_those_below_it() -> None:
    items = [LeaderboardItem(model=m, family=m, case_id=c, dimension="textual", difficulty_weight=1.0,
                             tradition="none", scored=True, composite=base + 0.001 * c, primary_composite=None,
                             self_preference=False)
             for m, base, n in (("big", 0.8, 12), ("other", 0.2, 12), ("small", 0.9, 3)) for c in range(n)]
    board = leaderboard_compute(items, n_resamples=300, seed=2)
    rows = {row.model: row for row in board.models}
    assert not board.trial
    assert rows["big"].ranked and rows["big"].tie_group == 1 and rows["other"].tie_group == 2
    assert not rows["small"].ranked and rows["small"].tie_group == 0 and rows["small"].overall.ci_low is None
    assert rows["big"].overall.ci_low is not None
    by_pair = {(c.model_a, c.model_b): c for c in board.comparisons}
    assert by_pair[("big", "other")].cohens_d is not None and not by_pair[("big", "other")].thin
    assert by_pair[("small", "big")].cohens_d is None and by_pair[("small", "big")].n_common == 3


@pytest.fixture
def full_and_trial_runs(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    """A finished run over 12 cases × 3 models, then a newer finished 6-item test run (2 items per model)."""
    import_benchmark(tmp_path, n_cases=12)
    full = judge_run_create(rubric=rubric_v1, label="full")
    judge_run_execute(run=full, client_options={"sleep": no_sleep})
    trial = judge_run_create(rubric=rubric_v1, label="smoke", cases="external_id=C-0000|C-0001")
    judge_run_execute(run=trial, client_options={"sleep": no_sleep})
    full.refresh_from_db()
    trial.refresh_from_db()
    assert trial.status == JudgeRun.Status.FINISHED and trial.created_at > full.created_at
    return full, trial


def test_trial_run_is_never_the_default_leaderboard_run(full_and_trial_runs, client) -> None:  # type: ignore[no-untyped-def]
    full, trial = full_and_trial_runs
    assert judge_run_is_trial(run=trial) and not judge_run_is_trial(run=full)
    assert judge_run_latest_finished(skip_trials=True) == full
    assert judge_run_latest_finished() == trial  # a report's or a draw's judge: any finished run (not a board)
    client.force_login(person("admin", name="Trial Admin"))
    page = client.get(reverse("judge:leaderboard")).content.decode()
    assert f"Run {full.pk}," in page
    assert client.get("/api/v1/leaderboard/").json()["run"] == full.pk


def test_trial_run_chosen_explicitly_is_marked_and_unranked(full_and_trial_runs, client) -> None:  # type: ignore[no-untyped-def]
    full, trial = full_and_trial_runs
    board = leaderboard_cached(run=trial)
    assert board.trial and all(row.tie_group == 0 for row in board.models)
    client.force_login(person("admin", name="Trial Admin"))
    page = client.get(reverse("judge:leaderboard") + f"?run={trial.pk}").content.decode()
    assert "Trial run" in page
    ranks = re.findall(r'data-testid="tie-group">([^<]*)<', page)
    assert ranks and set(ranks) == {"—"}
    assert "too few cases for an interval (n = 2; needs at least 10)" in page
    assert not re.search(r"\d\.\d+–\d\.\d+ · n=[12]\b", page)  # no "0.87–0.87 · n=1"
    full_page = client.get(reverse("judge:leaderboard") + f"?run={full.pk}").content.decode()
    assert "Trial run" not in full_page
    assert "1" in re.findall(r'data-testid="tie-group">([^<]*)<', full_page)


def test_trial_run_minimum_is_a_setting(full_and_trial_runs, settings) -> None:  # type: ignore[no-untyped-def]
    full, trial = full_and_trial_runs
    settings.FAITHBENCH_MIN_CASES_PER_MODEL = 2
    assert not judge_run_is_trial(run=trial) and judge_run_latest_finished(skip_trials=True) == trial
    assert not leaderboard_cached(run=trial).trial  # the cache key carries the minimum


def test_trial_run_is_not_plotted_in_the_score_history(full_and_trial_runs, client) -> None:  # type: ignore[no-untyped-def]
    from calibration.calibrated.history import score_history

    full, trial = full_and_trial_runs
    history = score_history()
    assert [s.run_id for s in history.snapshots] == [full.pk]
    assert [s.run_id for s in history.trials] == [trial.pk]
    assert all(len(h.points) == 1 and h.points[0].snapshot.run_id == full.pk for h in history.models)
    client.force_login(person("admin", name="Trial Admin"))
    page = client.get(reverse("calibrated:history")).content.decode()
    assert 'data-testid="history-trials"' in page and f"#{trial.pk}." in page
    assert page.count('data-testid="history-model"') == 3


def test_trial_run_condition_delta_on_few_cases_has_no_interval_and_no_effect_size() -> None:
    from evaluations.judge.leaderboard import LeaderboardColumns, condition_delta

    def columns(values: list[float]) -> LeaderboardColumns:
        return LeaderboardColumns.from_items([
            LeaderboardItem(model="m", family="m", case_id=c, dimension="textual", difficulty_weight=1.0,
                            tradition="none", scored=True, composite=v, primary_composite=v, self_preference=False)
            for c, v in enumerate(values)])

    few = condition_delta(columns([0.9, 0.8]), columns([0.1, 0.15]), model="m", names=("a", "b"), axis="x")
    assert few.thin and few.delta is not None and few.ci_low is None and few.cohens_d is None
    assert not few.distinguishable
    many = condition_delta(columns([0.9 - 0.01 * i for i in range(12)]), columns([0.1 + 0.02 * i for i in range(12)]),
                           model="m", names=("a", "b"), axis="x", n_resamples=200)
    assert not many.thin and many.ci_low is not None and many.cohens_d is not None and many.distinguishable


def test_trial_run_is_marked_in_the_leaderboard_api(full_and_trial_runs, client) -> None:  # type: ignore[no-untyped-def]
    full, trial = full_and_trial_runs
    client.force_login(person("admin", name="Trial Admin"))
    body = client.get(f"/api/v1/leaderboard/?run={trial.pk}").json()
    assert body["trial"] is True and body["min_cases"] == 10
    assert all(not m["ranked"] and m["tie_group"] == 0 and m["overall"]["thin"] for m in body["models"])
    assert all(c["cohens_d"] is None and c["thin"] for c in body["comparisons"])
    assert client.get(f"/api/v1/leaderboard/?run={full.pk}").json()["trial"] is False
