"""Leaderboard arithmetic on a small hand-computed example, the bootstrap, and self-preference."""
from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

import stats.means as stats_means
from accounts.models import User
from evaluations.judge import selectors as judge_selectors
from evaluations.judge.leaderboard import LeaderboardItem, leaderboard_compute, paired_comparison
from evaluations.judge.pipeline import judge_run_execute
from evaluations.judge.selectors import leaderboard_build, leaderboard_cached
from evaluations.judge.services import judge_run_create, judge_run_finish
from evaluations.models import EvaluatedModel, JudgeResult, JudgeRun, TestCase
from evaluations.selectors import difficulty_weight
from evaluations.tasks import judge_run_execute_task
from stats.means import bootstrap_weighted_mean_ci, weighted_mean

from . import leaderboard_reference as reference
from .conftest import MODELS, import_benchmark, no_sleep
from .results import store_random_results


def without_ties(board) -> dict:  # type: ignore[no-untyped-def]
    """The leaderboard as a dict without the tie groups, which the reference implementations predate (the groups
    are a function of the intervals compared here; tested on their own below)."""
    data = asdict(board)
    for row in data["models"]:
        for key in ("tie_group", "cases", "ranked"):  # issue 32's fields: the references predate them
            row.pop(key, None)
        for score in (row["overall"], *row["by_dimension"].values(), *row["by_tradition"].values()):
            score.pop("thin", None)
    for comparison in data["comparisons"]:
        comparison.pop("thin", None)
    data.pop("trial", None)
    data.pop("min_cases", None)
    return data

# case id: (dimension, difficulty weight, tradition)
CASES = {1: ("textual", 1.0, "none"), 2: ("doctrinal", 2.0, "reformed"), 3: ("doctrinal", 3.0, "reformed"),
         4: ("historical", 1.5, "catholic")}
# model: {case: composite, or None when the item failed}
SCORES = {
    "A": {1: 0.5, 2: 0.8, 3: 0.2, 4: 0.6},
    "B": {1: 0.9, 2: 0.4, 3: None, 4: 0.3},
    "C": {1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4},
}


def items() -> list[LeaderboardItem]:
    return [
        LeaderboardItem(model=model, family=model.lower(), case_id=case, dimension=CASES[case][0],
                        difficulty_weight=CASES[case][1], tradition=CASES[case][2], scored=value is not None,
                        composite=value, primary_composite=value, self_preference=False)
        for model, values in SCORES.items() for case, value in values.items()
    ]


@pytest.fixture(scope="module")
def board():  # type: ignore[no-untyped-def]
    return leaderboard_compute(items(), n_resamples=1000, seed=7, min_cases=1)  # arithmetic: no guardrail


def test_model_score_is_the_difficulty_weighted_mean_of_scored_composites(board):
    rows = {row.model: row for row in board.models}
    # A: (0.5×1 + 0.8×2 + 0.2×3 + 0.6×1.5) / (1 + 2 + 3 + 1.5) = 3.6 / 7.5
    assert rows["A"].overall.score == pytest.approx(0.48)
    # B: case 3 failed and is excluded: (0.9×1 + 0.4×2 + 0.3×1.5) / 4.5 = 2.15 / 4.5
    assert rows["B"].overall.score == pytest.approx(2.15 / 4.5)
    # C: (0.1 + 0.4 + 0.9 + 0.6) / 7.5
    assert rows["C"].overall.score == pytest.approx(2.0 / 7.5)
    assert [r.model for r in board.models] == ["A", "B", "C"]
    assert (rows["B"].items, rows["B"].scored, rows["B"].excluded) == (4, 3, 1)
    assert rows["B"].failure_rate == pytest.approx(0.25) and rows["A"].failure_rate == 0


def test_scores_per_dimension_and_per_tradition(board):
    a = next(r for r in board.models if r.model == "A")
    assert a.by_dimension["textual"].score == pytest.approx(0.5)
    assert a.by_dimension["doctrinal"].score == pytest.approx((1.6 + 0.6) / 5)  # 0.44
    assert a.by_dimension["historical"].score == pytest.approx(0.6)
    assert a.by_tradition["reformed"].score == pytest.approx(0.44)
    assert a.by_tradition["none"].score == pytest.approx(0.5)
    b = next(r for r in board.models if r.model == "B")
    assert b.by_dimension["doctrinal"].score == pytest.approx(0.4) and b.by_dimension["doctrinal"].n == 1


def test_pairwise_comparisons_are_paired_on_common_cases_with_bonferroni(board):
    pairs = {(c.model_a, c.model_b): c for c in board.comparisons}
    assert set(pairs) == {("A", "B"), ("A", "C"), ("B", "C")}
    ab = pairs[("A", "B")]
    # Common cases 1, 2, 4: differences −0.4, 0.4, 0.3; mean 0.1; sd = √(0.38 / 2) = 0.43589
    assert ab.n_common == 3 and ab.mean_difference == pytest.approx(0.1)
    sd = math.sqrt(0.19)
    assert ab.cohens_d == pytest.approx(0.1 / sd)
    t = 0.1 / (sd / math.sqrt(3))
    assert ab.t_statistic == pytest.approx(t)
    # Student t with 2 degrees of freedom: two-sided p = 1 − t / √(t² + 2).
    assert ab.p_value == pytest.approx(1 - t / math.sqrt(t * t + 2))
    assert ab.p_bonferroni == pytest.approx(min(1.0, 3 * ab.p_value)) == 1.0
    ac = pairs[("A", "C")]
    assert ac.n_common == 4 and ac.mean_difference == pytest.approx(0.275)
    assert ac.p_value == pytest.approx(scipy_stats.ttest_rel([0.5, 0.8, 0.2, 0.6], [0.1, 0.2, 0.3, 0.4]).pvalue)
    assert ac.p_bonferroni == pytest.approx(min(1.0, 3 * ac.p_value))
    assert not any(c.significant for c in board.comparisons)


def test_paired_comparison_degenerate_cases():
    assert paired_comparison([], []) == (None, None, None, None)
    assert paired_comparison([0.5], [0.2]) == (pytest.approx(0.3), None, None, None)
    assert paired_comparison([0.5, 0.6], [0.4, 0.5]) == (pytest.approx(0.1), None, None, None)  # zero spread


def test_intervals_contain_the_estimate_and_are_reproducible_with_the_seed(board):
    for row in board.models:
        assert row.overall.ci_low - 1e-12 <= row.overall.score <= row.overall.ci_high + 1e-12
    again = leaderboard_compute(items(), n_resamples=1000, seed=7, min_cases=1)
    assert [(r.overall.ci_low, r.overall.ci_high) for r in again.models] == \
           [(r.overall.ci_low, r.overall.ci_high) for r in board.models]


def test_bootstrap_is_stratified_by_dimension():
    # Within each stratum every value is the same, so every stratified resample has the same mean.
    values = [0.2] * 5 + [0.8] * 5
    strata = ["textual"] * 5 + ["doctrinal"] * 5
    assert bootstrap_weighted_mean_ci(values, None, strata, seed=1) == pytest.approx((0.5, 0.5))
    low, high = bootstrap_weighted_mean_ci(values, None, None, seed=1)  # unstratified: the mix varies
    assert low < 0.5 < high


def test_bootstrap_percentile_interval_matches_a_direct_computation():
    rng = np.random.default_rng(3)
    x = rng.random(40)
    w = rng.choice([1.0, 1.5, 2.0, 3.0], size=40)
    low, high = bootstrap_weighted_mean_ci(x, w, None, n_resamples=1000, seed=11)
    draws = np.random.default_rng(11).integers(0, 40, size=(1000, 40))
    stats = (w[draws] * x[draws]).sum(axis=1) / w[draws].sum(axis=1)
    assert (low, high) == pytest.approx(tuple(np.percentile(stats, [2.5, 97.5])))
    assert weighted_mean(x, w) == pytest.approx(float((x * w).sum() / w.sum()))
    assert math.isnan(bootstrap_weighted_mean_ci([], [])[0])


def test_leaderboard_uses_the_secondary_judge_for_the_primary_judges_family_and_shows_both(
    db, tmp_path, rubric_v1, judge_settings
):
    import_benchmark(tmp_path, n_cases=18)
    run = judge_run_create(rubric=rubric_v1)
    judge_run_execute(run=run, client_options={"sleep": no_sleep})
    board = leaderboard_build(run=run, n_resamples=200)
    rows = {row.model: row for row in board.models}
    gemini = MODELS[2][0]
    assert rows[gemini].self_preference and not rows[MODELS[0][0]].self_preference

    def expected(role: str) -> float:
        results = JudgeResult.objects.filter(run=run, response__model__name=gemini, role=role, status="scored")
        pairs = [(float(r.composite), float(difficulty_weight(r.response.test_case.difficulty)))
                 for r in results.select_related("response__test_case")]
        return sum(c * w for c, w in pairs) / sum(w for _, w in pairs)

    assert rows[gemini].overall.score == pytest.approx(expected("secondary"))
    assert rows[gemini].primary_judge_score == pytest.approx(expected("primary"))
    assert rows[gemini].overall.score != rows[gemini].primary_judge_score  # the fake judges disagree
    gpt = rows[MODELS[0][0]]
    assert gpt.overall.score == pytest.approx(gpt.primary_judge_score)


# --- The aggregated path gives exactly what the previous per-item computation gave ------------------------


def random_items(seed: int) -> list[LeaderboardItem]:
    """Items of 2–5 models over random cases: failures, unscored dimensions, repeated responses, self-preference."""
    rng = np.random.default_rng(seed)
    dimensions = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
    traditions = ["none", "catholic", "orthodox", "reformed", "evangelical"]
    cases = {case: (str(rng.choice(dimensions)), float(rng.choice([1.0, 1.5, 2.0, 3.0])), str(rng.choice(traditions)))
             for case in range(int(rng.integers(1, 400)))}
    items = []
    for m in range(int(rng.integers(2, 6))):
        failure_rate = 1.0 if m == 4 else float(rng.uniform(0, 0.3))  # a fifth model never scores
        self_preference = bool(rng.random() < 0.3)
        for case, (dimension, weight, tradition) in cases.items():
            for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):
                scored = bool(rng.random() >= failure_rate)
                composite = round(float(rng.random()), 6) if scored else None
                primary = (composite if not self_preference else round(float(rng.random()), 6)) \
                    if rng.random() > 0.05 else None
                items.append(LeaderboardItem(
                    model=f"vendor/model-{m}", family=f"family{m % 3}", case_id=case, dimension=dimension,
                    difficulty_weight=weight, tradition=tradition, scored=scored, composite=composite,
                    primary_composite=primary, self_preference=self_preference))
    order = rng.permutation(len(items))
    return [items[i] for i in order]


@pytest.mark.parametrize("seed", range(12))
def test_columnar_computation_gives_exactly_the_previous_results_on_random_items(seed, monkeypatch):
    items = random_items(seed)
    if seed % 2:  # bootstrap in many small blocks of resamples, odd sizes included
        monkeypatch.setattr(stats_means, "CHUNK_DRAWS", 97 + seed)
    new = leaderboard_compute(items, n_resamples=250, seed=seed, min_cases=1)  # the reference predates issue 32
    old = reference.leaderboard_compute(items, n_resamples=250, seed=seed)
    assert without_ties(new) == without_ties(old)
    assert [row.model for row in new.models]  # not vacuous
    assert any(row.overall.score is None for row in new.models) == any(
        all(not i.scored for i in items if i.model == row.model) for row in new.models)


def random_run(tmp_path, rubric, seed: int):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=36)
    import_benchmark(tmp_path, n_cases=10, run_label="r2")  # a second response to some cases: per-case means
    run = judge_run_create(rubric=rubric, base_url="http://127.0.0.1:9/v1", primary_model="google/gemini-3-flash-preview",
                           fallback_model="openai/gpt-4o-mini", secondary_model="openai/gpt-4o-mini")
    store_random_results(run, seed)
    judge_run_finish(run=run, status="finished")
    return run


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_aggregated_database_path_gives_exactly_the_previous_results(db, tmp_path, rubric_v1, seed, settings):
    settings.FAITHBENCH_MIN_CASES_PER_MODEL = 1  # the reference predates issue 32's guardrail
    run = random_run(tmp_path, rubric_v1, seed)
    assert JudgeResult.objects.filter(run=run, role="secondary").exists()
    assert JudgeResult.objects.filter(run=run, role="fallback").exists()
    new = leaderboard_build(run=run, n_resamples=200, seed=seed)
    assert without_ties(new) == without_ties(reference.leaderboard_build(run=run, n_resamples=200, seed=seed))
    assert sum(row.items for row in new.models) == 3 * 46


def test_leaderboard_is_cached_until_the_run_cases_or_models_change(db, tmp_path, rubric_v1, monkeypatch):
    run = random_run(tmp_path, rubric_v1, 4)
    computed = []
    build = judge_selectors.leaderboard_build

    def counting_build(**kwargs):  # type: ignore[no-untyped-def]
        computed.append(kwargs["run"].pk)
        return build(**kwargs)

    monkeypatch.setattr(judge_selectors, "leaderboard_build", counting_build)
    first = leaderboard_cached(run=run)
    assert asdict(leaderboard_cached(run=run)) == asdict(first) == asdict(build(run=run))
    assert len(computed) == 1
    # A resumed run adds results.
    import_benchmark(tmp_path, n_cases=1, prefix="LATE")
    wider = judge_run_create(rubric=rubric_v1, base_url="http://127.0.0.1:9/v1")
    JudgeRun.objects.filter(pk=run.pk).update(selection=wider.selection, total_items=wider.total_items)
    run.refresh_from_db()
    store_random_results(run, 5)
    more = leaderboard_cached(run=run)
    assert len(computed) == 2 and sum(r.items for r in more.models) == sum(r.items for r in first.models) + 3
    # A case's difficulty changes (an import or the admin sets updated_at): its weight changes the scores.
    case = TestCase.objects.get(external_id="C-0000")
    case.difficulty = "expert" if case.difficulty != "expert" else "easy"
    case.save()
    changed = leaderboard_cached(run=run)
    assert len(computed) == 3 and asdict(changed) != asdict(more)
    # A model's family is renamed.
    EvaluatedModel.objects.filter(name=MODELS[0][0]).update(family="renamed")
    assert next(r for r in leaderboard_cached(run=run).models if r.model == MODELS[0][0]).family == "renamed"
    assert len(computed) == 4
    leaderboard_cached(run=run)
    assert len(computed) == 4

def test_the_worker_caches_the_leaderboard_when_a_run_ends(db, tmp_path, rubric_v1, judge_settings, monkeypatch,
                                                           client, django_assert_max_num_queries):
    import_benchmark(tmp_path, n_cases=12)
    run = judge_run_create(rubric=rubric_v1)
    summary = judge_run_execute_task.call(run.pk)
    assert summary["scored"] == 36

    def no_computing(**kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the page computed the leaderboard instead of reading the worker's")

    monkeypatch.setattr(judge_selectors, "leaderboard_build", no_computing)
    client.force_login(User.objects.create_superuser(email="boss@faithbench.test", password="pw-test-1234"))
    with django_assert_max_num_queries(12):
        page = client.get(reverse("judge:leaderboard"))
    assert page.status_code == 200 and page.context["board"].models[0].overall.n > 0
    assert client.get("/api/v1/leaderboard/").json()["run"] == run.pk


def test_tie_groups_claim_no_order_between_overlapping_intervals() -> None:
    from evaluations.judge.leaderboard import ModelRow, Score, tie_groups_assign

    def row(name: str, score: float | None, low: float | None, high: float | None) -> ModelRow:
        return ModelRow(model=name, family="", items=10, scored=10, excluded=0, failure_rate=0.0,
                        overall=Score(score, low, high, 10), primary_judge_score=score, self_preference=False)

    rows = [row("a", 0.80, 0.75, 0.85), row("b", 0.78, 0.72, 0.83),  # overlaps a
            row("c", 0.74, 0.70, 0.76),  # overlaps a's interval (0.76 ≥ 0.75): still a's group
            row("d", 0.70, 0.65, 0.74),  # below a's 0.75: a new group, led by d
            row("e", 0.60, 0.50, 0.66),  # overlaps d (0.66 ≥ 0.65)
            row("f", 0.40, 0.35, 0.45), row("g", None, None, None)]
    tie_groups_assign(rows)
    assert [r.tie_group for r in rows] == [1, 1, 1, 2, 2, 3, 0]
