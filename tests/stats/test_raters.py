"""Rater effects (stats/raters.py): checked against simulations with known severities and drift, hand computations,
scikit-learn's κ, the `krippendorff` package and crowd-kit's MACE worker model. No database."""
from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import kstwobign
from sklearn.metrics import cohen_kappa_score

from stats.raters import (
    RaterDataError,
    classical_figures,
    clustered_proportion,
    drift_test,
    facets_fit,
    fair_average,
    fatigue_profile,
    rater_data,
    rater_drift,
    rater_flags,
    sitting_positions,
    test_retest,
)

pytestmark = pytest.mark.simulation  # no database: .ci/run runs it once, in the SQLite pass

STEPS = np.array([-1.5, 0.0, 1.5])


def simulate(rng: np.random.Generator, severity: np.ndarray, items: int, subs: int = 2, *,
             careless: dict[int, float] | None = None, shift: dict[int, float] | None = None):
    """Fully crossed ratings from the many-facet graded model; `shift` adds logits to a rater's second half."""
    theta = rng.normal(0, 1, items)
    steps = STEPS[None, :] + np.linspace(-0.3, 0.3, subs)[:, None]
    item, rater, sub = (a.ravel() for a in np.meshgrid(np.arange(items), np.arange(severity.size), np.arange(subs),
                                                        indexing="ij"))
    half = (item >= items // 2).astype(int)
    sev = severity[rater] + np.array([(shift or {}).get(int(r), 0.0) for r in rater]) * half
    score = (rng.random(item.size)[:, None] < expit(theta[item][:, None] - sev[:, None] - steps[sub])).sum(axis=1)
    for r, share in (careless or {}).items():
        hit = (rater == r) & (rng.random(item.size) < share)
        score[hit] = rng.integers(0, 4, hit.sum())
    return item, rater, sub, score, half


def by_label(fit_values: np.ndarray, labels: tuple) -> np.ndarray:
    out = np.empty(len(labels))
    out[np.array(labels, dtype=int)] = fit_values
    return out


def test_rater_severity_recovers_known_severities_with_honest_errors():
    rng = np.random.default_rng(7)
    truth = np.array([-0.8, -0.4, -0.1, 0.1, 0.4, 0.8])
    item, rater, sub, score, _ = simulate(rng, truth, items=150)
    data = rater_data(item, rater, sub, score)
    fit = facets_fit(data)
    est = by_label(fit.severity, data.raters)
    se = by_label(fit.severity_se, data.raters)
    assert fit.converged
    assert np.corrcoef(est, truth)[0, 1] > 0.97
    assert np.all(np.abs(est - truth) < 3.5 * se + 0.05)  # model SEs (θ held fixed) are a little optimistic
    assert est.sum() == pytest.approx(0.0, abs=1e-9)  # the origin: Σ σ = 0
    assert np.all(fit.reported)
    # ratings drawn from the model fit it (mean squares near 1 once JMLE's leverage is divided out)
    assert abs(fit.infit.mean() - 1) < 0.05 and np.all((fit.infit > 0.75) & (fit.infit < 1.25))


def test_rater_severity_fair_average_is_the_expected_score_of_a_neutral_rater_by_hand():
    rng = np.random.default_rng(3)
    item, rater, sub, score, _ = simulate(rng, np.array([-0.3, 0.0, 0.3]), items=40)
    data = rater_data(item, rater, sub, score)
    fit = facets_fit(data)
    fair = fair_average(fit, 4)
    i, d = 5, 1
    by_hand = sum(1 / (1 + math.exp(-(fit.quality[i] - fit.steps[d, k]))) for k in range(3))
    assert fair[i, d] == pytest.approx(by_hand, abs=1e-12)
    assert np.all((fair >= 0) & (fair <= 3))


@pytest.mark.filterwarnings("ignore")  # crowd-kit's own pandas deprecation warnings
def test_rater_severity_careless_rater_is_flagged_and_crowdkit_worker_model_agrees():
    from crowdkit.aggregation import MACE

    rng = np.random.default_rng(11)
    truth = np.zeros(6)  # equal severities: the categorical worker models have no severity facet
    item, rater, sub, score, _ = simulate(rng, truth, items=150, subs=4, careless={0: 0.6})
    data = rater_data(item, rater, sub, score)
    fit = facets_fit(data)
    flags = {int(r): {f.code for f in fl} for r, fl in zip(data.raters, rater_flags(fit), strict=True)}
    assert "erratic" in flags[0]
    assert all("erratic" not in flags[r] for r in range(1, 6))
    infit = by_label(fit.infit, data.raters)
    assert int(np.argmax(infit)) == 0
    # MACE (Hovy et al. 2013; crowd-kit's categorical worker model with a spamming state): each response ×
    # sub-dimension is a task; a worker's competence is the posterior share of "knowing" (not spamming) labels.
    # Its least competent worker is our most misfitting, flagged rater. (Dawid–Skene's nominal confusion matrices
    # do not separate them on ordinal data with a continuous latent quality: every rater looks ~40 % accurate.)
    frame = pd.DataFrame({"task": item * 4 + sub, "worker": rater, "label": score})
    mace = MACE(n_restarts=1, n_iter=25, random_state=0).fit(frame)
    competence = mace.spamming_[:, 1]
    names = pd.factorize(frame["worker"])[1]
    assert names[int(np.argmin(competence))] == 0
    assert competence[list(names).index(0)] < 0.5 * np.median(competence)


def test_rater_severity_flag_reasons_state_the_rule_and_false_positive_rate():
    rng = np.random.default_rng(5)
    truth = np.array([1.2, 0.0, -0.1, 0.1, -1.2])
    item, rater, sub, score, _ = simulate(rng, truth, items=150)
    data = rater_data(item, rater, sub, score)
    fit = facets_fit(data)
    flags = {int(r): fl for r, fl in zip(data.raters, rater_flags(fit), strict=True)}
    assert [f.code for f in flags[0]] == ["severe"]
    assert [f.code for f in flags[4]] == ["lenient"]
    assert flags[1] == [] and flags[2] == [] and flags[3] == []
    assert "95 %" in flags[0][0].rule and "%" in flags[0][0].false_positive and "logits" in flags[0][0].reason


@pytest.mark.parametrize(("scores", "raters", "message"), [
    ([2, 2, 2, 2], ["a", "b", "a", "b"], "one category"),
    ([1, 2, 3, 0], ["a", "a", "a", "a"], "two raters"),
])
def test_rater_severity_bad_input_is_refused_in_words(scores, raters, message):
    data = rater_data([1, 1, 2, 2], raters, ["x"] * 4, scores)
    with pytest.raises(RaterDataError, match=message):
        facets_fit(data)


def test_rater_severity_bad_scores_refused():
    with pytest.raises(RaterDataError, match="0..3"):
        rater_data([1], ["a"], ["x"], [4])
    with pytest.raises(RaterDataError, match="no ratings"):
        rater_data([], [], [], [])


def test_rater_severity_few_ratings_are_not_reported():
    rng = np.random.default_rng(2)
    item, rater, sub, score, _ = simulate(rng, np.array([0.0, 0.2, -0.2]), items=60)
    keep = (rater != 2) | (item < 4)  # rater 2 scored 4 items × 2 sub-dimensions = 8 ratings
    data = rater_data(item[keep], rater[keep], sub[keep], score[keep])
    fit = facets_fit(data)
    reported = dict(zip(data.raters, fit.reported, strict=True))
    assert reported[2] is np.False_ and reported[0] and reported[1]
    assert rater_flags(fit)[list(data.raters).index(2)] == []


def test_rater_severity_classical_figures_by_hand_and_against_krippendorff():
    # Two responses × one sub-dimension, three raters; gold on response "p" only.
    items = ["p", "p", "p", "q", "q", "q"]
    raters = ["a", "b", "c", "a", "b", "c"]
    scores = [3, 2, 2, 0, 1, 1]
    gold = [2, 2, 2, np.nan, np.nan, np.nan]
    data = rater_data(items, raters, ["x"] * 6, scores)
    out = classical_figures(data, gold)
    a = list(data.raters).index("a")
    assert out.gold_n[a] == 1 and out.gold_agreement[a] == 0.0
    assert out.gold_agreement[list(data.raters).index("b")] == 1.0
    # a: (3 − 2) on p and (0 − 1) on q → mean 0
    assert out.panel_deviation[a] == pytest.approx(0.0)
    b = list(data.raters).index("b")
    # b: (2 − 2.5) and (1 − 0.5) → 0
    assert out.panel_deviation[b] == pytest.approx(0.0)
    matrix = np.array([[3, 0], [2, 1], [2, 1]], dtype=float)
    assert out.alpha_all == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="ordinal",
                                                             value_domain=[0, 1, 2, 3]), abs=1e-9)
    without_a = krippendorff.alpha(matrix[1:], level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    assert out.alpha_without[a] == pytest.approx(without_a, abs=1e-9)


def test_rater_severity_clustered_agreement_interval_covers_in_simulation():
    rng = np.random.default_rng(19)
    p_true, hits = 0.7, 0
    for _ in range(400):
        # 15 responses × 4 cells, agreement correlated within a response (its own rate ~ Beta around 0.7)
        rate = rng.beta(7, 3, 15)
        x = (rng.random((15, 4)) < rate[:, None]).ravel()
        _, _, ci = clustered_proportion(x, np.repeat(np.arange(15), 4))
        hits += ci[0] <= p_true <= ci[1]
    assert hits / 400 >= 0.92


def test_rater_drift_change_rule_false_alarm_rate_and_brownian_bridge_limit():
    rng = np.random.default_rng(23)
    se = np.array([0.1, 0.15, 0.1, 0.2, 0.1, 0.12])
    alarms = sum(drift_test(rng.normal(0.3, se), se, simulations=2000, seed=s).p_value < 0.05 for s in range(300))
    assert alarms / 300 < 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / 300)
    rising = drift_test(np.array([-0.4, -0.2, 0.0, 0.2, 0.4]), np.full(5, 0.1))
    assert rising.p_value < 0.001 and rising.slope == pytest.approx(0.2)
    # Many equal periods: the statistic's null is the sup of a Brownian bridge (Kolmogorov's distribution).
    x = np.zeros(400)
    x[:200], x[200:] = 1, -1
    scale = kstwobign.ppf(0.95) / (np.abs(np.cumsum(x)).max() / math.sqrt(400))
    at_critical = drift_test(x * scale, np.ones(400), simulations=4000)
    assert at_critical.p_value == pytest.approx(0.05, abs=0.015)


def test_rater_drift_finds_the_rater_who_moved_and_not_the_others():
    rng = np.random.default_rng(31)
    item, rater, sub, score, half = simulate(rng, np.array([0.0, 0.3, -0.3, 0.1, -0.1]), items=160,
                                             shift={1: 1.0})
    data = rater_data(item, rater, sub, score)
    fit = facets_fit(data)
    period = item // 40  # four "weeks" of 40 responses
    results = {int(r): d for r, d in zip(data.raters, rater_drift(data, fit, period, simulations=1000), strict=True)}
    assert results[1].p_value < 0.01 and results[1].last - results[1].first > 0.5
    assert all(results[r].p_value > 0.01 for r in (0, 2, 3, 4))
    assert results[1].labels == (0, 1, 2, 3)
    flags = rater_flags(fit, [results[int(r)] for r in data.raters])
    assert "drift" in {f.code for f in flags[list(data.raters).index(1)]}


def test_rater_drift_fatigue_positions_and_bins_by_hand():
    # submissions at 0:05, 0:10, 0:15, then a 2-hour pause, then 2:20; 300 s active each
    times = np.array([300, 600, 900, 8400])
    minutes = sitting_positions(times, np.full(4, 300), gap_minutes=30)
    assert minutes.tolist() == [0.0, 5.0, 10.0, 0.0]
    bins = fatigue_profile([0, 5, 25, 45], [1, 1, 0, np.nan], [60, 80, 100, 200], edges=(0, 20, 40))
    assert [b.n for b in bins] == [2, 1, 1]
    assert bins[0].agreement == 1.0 and bins[1].agreement == 0.0 and bins[2].agreement is None
    assert bins[0].median_seconds == 70 and bins[2].label == "after 40 min"


def test_retest_quadratic_kappa_matches_scikit_learn():
    rng = np.random.default_rng(41)
    first = rng.integers(0, 4, 60)
    second = np.clip(first + rng.integers(-1, 2, 60), 0, 3)
    result = test_retest(first, second, np.repeat(np.arange(15), 4))
    assert result.kappa == pytest.approx(cohen_kappa_score(first, second, weights="quadratic"), abs=1e-12)
    assert result.exact == pytest.approx(np.mean(first == second))
    lo, hi = result.kappa_interval
    assert lo <= result.kappa <= hi and -1 <= lo and hi <= 1
    assert result.exact_interval[0] <= result.exact <= result.exact_interval[1] <= 1


def test_retest_too_few_pairs_and_one_category_give_words_not_numbers():
    few = test_retest([1, 2], [1, 2], ["a", "b"])
    assert few.exact is None and few.kappa is None and "at least 10" in few.note
    flat = test_retest([2] * 12, [2] * 12, list(range(12)))
    assert flat.exact == 1.0 and flat.kappa is None and "one category" in flat.note


def test_retest_kappa_interval_covers_the_population_kappa_in_simulation():
    # One stable expert re-scores 15 responses × 4 sub-dimensions; both scorings from the model given the same θ.
    # Population quadratic κ of two such scorings = 1 − E[Var(X | θ, d)] / Var(X), by quadrature over θ ~ N(0, 1).
    rng = np.random.default_rng(43)
    steps = STEPS[None, :] + np.array([[-0.3], [-0.1], [0.1], [0.3]])
    nodes = np.linspace(-6, 6, 241)
    w = np.exp(-0.5 * nodes**2)
    w /= w.sum()
    star = expit(nodes[:, None, None] - steps[None])
    probs = np.concatenate([1 - star[..., :1], star[..., :-1] - star[..., 1:], star[..., -1:]], axis=2)
    c = np.arange(4)
    mean, second = (probs * c).sum(2), (probs * c**2).sum(2)
    weight = w[:, None] / 4
    truth = 1 - (weight * (second - mean**2)).sum() / ((weight * second).sum() - (weight * mean).sum() ** 2)
    item = np.repeat(np.arange(15), 4)
    sub = np.tile(np.arange(4), 15)
    hits = 0
    for _ in range(200):
        theta = rng.normal(0, 1, 15)
        p = expit(theta[item][:, None] - steps[sub])
        a = (rng.random(60)[:, None] < p).sum(1)
        b = (rng.random(60)[:, None] < p).sum(1)
        lo, hi = test_retest(a, b, item).kappa_interval
        hits += lo <= truth <= hi
    assert hits / 200 >= 0.92
