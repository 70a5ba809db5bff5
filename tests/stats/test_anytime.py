"""Anytime-valid prediction-powered sequences (stats/anytime.py), checked against a known truth and references.

- Monte-Carlo coverage under optional stopping: the truth must lie in the interval after *every* prefix of the
  labels (what an admin who looks after each label and stops at will relies on), at 1–30 labels, for uniform and
  active (unequal π) draws, one mean, independent and paired differences; fixed seeds, a few hundred runs.
- References: the boundary's crossing probability against a simulated random walk; the betting sequence at
  π = 1 and λ = 0 against an independent transcription of Waudby-Smith & Ramdas' hedged capital process; the
  Hoeffding normal-mixture sequence (Howard et al. 2021) must be wider at moderate n; ppi_py's fixed-n PPI++
  interval as the width reference.
- Bad input gives a status and a reason in words, never NaN, never an exception.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.anytime import (
    LabelledSample,
    _crossing,
    boundary_line,
    difference_cs,
    difference_cs_path,
    labels_to_verdict,
    mean_cs,
    mean_cs_path,
    pair_verdict,
    paired_difference_cs,
)

ALPHA = 0.05


def _population(rng: np.random.Generator, size: int, bias: float = 0.05, noise: float = 0.08) -> tuple:
    """Items with a known expected expert score q and a judge with bias and noise, both in [0, 1]."""
    q = rng.beta(4, 3, size)
    judge = np.clip(q + bias + rng.normal(0, noise, size), 0, 1)
    return q, judge


def _labels(rng: np.random.Generator, q: np.ndarray) -> np.ndarray:
    """An expert panel's score: the mean of 3 Bernoulli(q) votes — bounded, with expectation exactly q."""
    return rng.binomial(3, q) / 3


def _covered_throughout(lower: np.ndarray, upper: np.ndarray, truth: float) -> bool:
    return bool(np.all((lower <= truth) & (truth <= upper)))


# ---------------------------------------------------------------------------------------------------------------
# Coverage under optional stopping, small n (known truth)


def test_anytime_mean_cs_covers_under_optional_stopping_small_sample_uniform_draw() -> None:
    rng = np.random.default_rng(31)
    runs, covered = 300, 0
    for _ in range(runs):
        q, judge = _population(rng, 400)
        drawn = rng.integers(0, q.size, 30)
        lower, upper = mean_cs_path(_labels(rng, q[drawn]), judge[drawn], judge, horizon=10, max_labels=200)
        covered += _covered_throughout(lower, upper, float(q.mean()))
    assert covered / runs >= 0.93


def test_anytime_mean_cs_covers_under_optional_stopping_small_sample_active_draw() -> None:
    """Unequal π (more labels where the judge is least sure), IPW pseudo-outcomes: still covers the population mean."""
    rng = np.random.default_rng(32)
    runs, covered = 300, 0
    for _ in range(runs):
        q, judge = _population(rng, 400, noise=0.12)
        pi = np.clip(0.05 + 0.6 * judge * (1 - judge) * 4 * rng.uniform(0.3, 1.0, q.size), 0.02, 1.0)
        drawn = rng.choice(q.size, 30, p=pi / pi.sum())
        lower, upper = mean_cs_path(_labels(rng, q[drawn]), judge[drawn], judge, pi=pi[drawn], pi_unlabeled=pi,
                                    horizon=10, max_labels=200)
        covered += _covered_throughout(lower, upper, float(q.mean()))
    assert covered / runs >= 0.93


def test_anytime_mean_cs_weighted_estimand_small_sample_coverage() -> None:
    """Difficulty weights in the estimand (θ = Σ wᵢ qᵢ / Σ wᵢ) with a uniform draw."""
    rng = np.random.default_rng(33)
    runs, covered = 200, 0
    for _ in range(runs):
        q, judge = _population(rng, 300)
        weights = rng.choice([1.0, 1.5, 2.0, 3.0], q.size)
        drawn = rng.integers(0, q.size, 25)
        lower, upper = mean_cs_path(_labels(rng, q[drawn]), judge[drawn], judge, w=weights[drawn],
                                    w_unlabeled=weights, horizon=10, max_labels=200)
        covered += _covered_throughout(lower, upper, float(np.average(q, weights=weights)))
    assert covered / runs >= 0.93


def test_anytime_difference_cs_covers_under_optional_stopping_small_sample() -> None:
    """Two models, independent labels, a judge that flatters model a by 0.1: the gap's sequence covers."""
    rng = np.random.default_rng(34)
    runs, covered = 300, 0
    for _ in range(runs):
        qa, judge_a = _population(rng, 300, bias=0.10)
        qb, judge_b = _population(rng, 300, bias=0.0)
        da, db = rng.integers(0, 300, 30), rng.integers(0, 300, 30)
        a = LabelledSample(_labels(rng, qa[da]), judge_a[da], judge_a)
        b = LabelledSample(_labels(rng, qb[db]), judge_b[db], judge_b)
        lower, upper = difference_cs_path(a, b, horizon=10, max_labels=200)
        covered += _covered_throughout(lower, upper, float(qa.mean() - qb.mean()))
    assert covered / runs >= 0.93


def test_paired_difference_cs_covers_small_sample_and_is_narrower_than_independent() -> None:
    """Same cases for both models (scores share the case's difficulty; a noisy judge explains little of it):
    covers, and narrower than the independent-samples sequence on the same labels."""
    rng = np.random.default_rng(35)
    runs, covered = 300, 0
    paired_widths, independent_widths = [], []
    for _ in range(runs):
        case = rng.beta(4, 3, 300)
        qa, qb = np.clip(case + 0.04, 0, 1), np.clip(case - 0.02 + rng.normal(0, 0.03, 300), 0, 1)
        judge_a = np.clip(qa + 0.1 + rng.normal(0, 0.2, 300), 0, 1)
        judge_b = np.clip(qb + rng.normal(0, 0.2, 300), 0, 1)
        drawn = rng.integers(0, 300, 30)
        # an expert label with expectation exactly q and sd ≈ 0.07: Beta(50q, 50(1 − q))
        ya = rng.beta(50 * qa[drawn] + 1e-9, 50 * (1 - qa[drawn]) + 1e-9)
        yb = rng.beta(50 * qb[drawn] + 1e-9, 50 * (1 - qb[drawn]) + 1e-9)
        a = LabelledSample(ya, judge_a[drawn], judge_a)
        b = LabelledSample(yb, judge_b[drawn], judge_b)
        lower, upper = difference_cs_path(a, b, paired=True, horizon=10, max_labels=200)
        covered += _covered_throughout(lower, upper, float(qa.mean() - qb.mean()))
        paired_widths.append(paired_difference_cs(a, b, horizon=10, max_labels=200).width)
        independent_widths.append(difference_cs(a, b, horizon=10, max_labels=200).width)
    assert covered / runs >= 0.93
    assert np.median(paired_widths) < 0.8 * np.median(independent_widths)


# ---------------------------------------------------------------------------------------------------------------
# References


def test_anytime_boundary_crossing_probability_matches_a_simulated_random_walk() -> None:
    """Siegmund's formula for the line (a, b) against 20,000 Gaussian random walks of T steps."""
    rng = np.random.default_rng(36)
    for horizon, max_labels in ((10, 200), (100, 200), (20, 60)):
        a, b = boundary_line(ALPHA, horizon, max_labels)
        assert _crossing(a, b, float(max_labels)) == pytest.approx(ALPHA / 2, abs=1e-6)
        walks = np.cumsum(rng.normal(size=(20_000, max_labels)), axis=1)
        t = np.arange(1, max_labels + 1)
        crossed = float(np.mean(np.any(walks >= a + b * t, axis=1)))
        # looking after each step misses crossings between steps: at most the continuous-time probability
        assert crossed <= ALPHA / 2 + 0.004
        assert crossed >= ALPHA / 2 - 0.012
    a, b = boundary_line(ALPHA, 100, None)  # Ville: e^{−2ab} = α/2, narrowest at the horizon (a = b · 100)
    assert math.exp(-2 * a * b) == pytest.approx(ALPHA / 2)
    assert a == pytest.approx(100 * b)


def _wsr_hedged_reference(x: np.ndarray, alpha: float, grid: np.ndarray) -> tuple[float, float]:
    """Waudby-Smith & Ramdas (2024), Theorem 3 with the predictable plug-in (their eqs. 26–27), for X in [0, 1].

    An independent transcription with loops: μ̂ₜ = (1/2 + Σ X)/(t+1), σ̂²ₜ = (1/4 + Σ (Xᵢ − μ̂ᵢ)²)/(t+1),
    λₜ = √(2 log(2/α) / (σ̂²ₜ₋₁ t log(1+t))), truncated at c/m (K⁺) and c/(1−m) (K⁻), c = 1/2; the running
    intersection of {m : max(K⁺/2… )} written as: reject m once K⁺ or K⁻ has reached 2/α.
    """
    rejected = np.zeros(grid.size, dtype=bool)
    for j, m in enumerate(grid):
        k_plus = k_minus = 1.0
        mean_sum, var_sum, prev_var = 0.0, 0.0, 0.25
        for t, xt in enumerate(x, start=1):
            lam = math.sqrt(2 * math.log(2 / alpha) / (prev_var * t * math.log(1 + t)))
            lam_plus = min(lam, 0.5 / m) if m > 0 else lam
            lam_minus = min(lam, 0.5 / (1 - m)) if m < 1 else lam
            k_plus *= 1 + lam_plus * (xt - m)
            k_minus *= 1 - lam_minus * (xt - m)
            if k_plus >= 2 / alpha or k_minus >= 2 / alpha:
                rejected[j] = True
                break
            mean_sum += xt
            mu = (0.5 + mean_sum) / (t + 1)
            var_sum += (xt - mu) ** 2
            prev_var = (0.25 + var_sum) / (t + 1)
    kept = grid[~rejected]
    return float(kept.min()), float(kept.max())


def test_anytime_betting_at_pi_1_and_lam_0_is_waudby_smith_ramdas_hedged_sequence() -> None:
    rng = np.random.default_rng(37)
    grid = np.linspace(0, 1, 2001)
    for n in (5, 20, 60):
        y = rng.beta(2, 3, n)
        judge = np.clip(y + rng.normal(0, 0.1, n), 0, 1)
        ours = mean_cs(y, judge, judge, lam=0.0, method="betting", pi=np.ones(n), pi_unlabeled=np.ones(n))
        low, high = _wsr_hedged_reference(y, ALPHA, grid)
        # ours is refined to ~1.5e-5 and rounded outward; the reference is on a grid of 5e-4
        assert ours.lower == pytest.approx(low, abs=6e-4)
        assert ours.upper == pytest.approx(high, abs=6e-4)
        assert ours.lower <= low + 1e-9 and ours.upper >= high - 1e-9 or n < 10


def _hoeffding_normal_mixture_half_width(n: int, alpha: float, horizon: int, scale: float) -> float:
    """Two-sided normal-mixture boundary for a sub-Gaussian (σ = range/2) mean, ρ tuned at ``horizon``
    (Howard et al. 2021, eq. 14 / Robbins 1970): √(2(nρ²+1)/(n²ρ²) · log(√(nρ²+1)/α)) · σ."""
    sigma = scale / 2
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / horizon
    return sigma * math.sqrt(2 * (n * rho2 + 1) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha))


def test_anytime_narrower_than_hoeffding_normal_mixture_and_close_to_ppi_py_at_moderate_n() -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the reference implementation) is not installed")
    rng = np.random.default_rng(38)
    ours, betting, fixed = [], [], []
    for _ in range(40):
        q, judge = _population(rng, 2000)
        drawn = rng.integers(0, q.size, 100)
        y = _labels(rng, q[drawn])
        ours.append(mean_cs(y, judge[drawn], judge, horizon=100, max_labels=200).width)
        betting.append(mean_cs(y, judge[drawn], judge, method="betting", horizon=100).width)
        low, high = ppi_py.ppi_mean_ci(y, judge[drawn], judge, alpha=ALPHA)
        fixed.append(float(np.asarray(high).item() - np.asarray(low).item()))
    hoeffding = 2 * _hoeffding_normal_mixture_half_width(100, ALPHA, 100, 1.0)
    assert np.mean(ours) < 0.5 * hoeffding
    assert np.mean(betting) < hoeffding
    ratio = np.mean(ours) / np.mean(fixed)
    assert 1.0 < ratio < 1.45  # the price of looking at will: above 1, and far below the mixture's ≈ 1.55 × …


# ---------------------------------------------------------------------------------------------------------------
# Properties


def test_anytime_past_intervals_do_not_depend_on_later_labels() -> None:
    """λ and σ are predictable/online: the interval after t labels is the same whatever label t+1 is."""
    rng = np.random.default_rng(39)
    q, judge = _population(rng, 200)
    drawn = rng.integers(0, 200, 20)
    y = _labels(rng, q[drawn])
    changed = y.copy()
    changed[-1] = 1 - changed[-1]
    for method in ("boundary", "betting"):
        low1, high1 = mean_cs_path(y, judge[drawn], judge, method=method)
        low2, high2 = mean_cs_path(changed, judge[drawn], judge, method=method)
        np.testing.assert_allclose(low1[:-1], low2[:-1])
        np.testing.assert_allclose(high1[:-1], high2[:-1])
        assert np.all(np.diff(low1) >= -1e-12) and np.all(np.diff(high1) <= 1e-12)  # never widens


def test_anytime_small_sample_intervals_stay_in_bounds_and_never_collapse() -> None:
    """1–4 identical labels with a judge that agrees: a valid interval, inside the scale, never of zero width."""
    for n in range(1, 5):
        y = np.full(n, 0.8)
        for bounds in ((0.0, 1.0), (0.0, 3.0)):
            est = mean_cs(y, y, np.full(50, 0.8), bounds=bounds)
            assert bounds[0] <= est.lower < est.upper <= bounds[1]
            assert est.width > 0.2 * (bounds[1] - bounds[0])
            assert est.status == "few_labels" and est.reason and "wide" in est.reason
    est = mean_cs([1.0] * 12, [1.0] * 12, [1.0] * 40)
    assert est.upper == 1.0 and 0.0 < est.lower < 1.0 and est.status == "ok"


def test_anytime_small_sample_difference_clipped_at_the_edge_is_not_a_point_nor_separated() -> None:
    """4 pairs drawn with π = 0.01 give pseudo-outcome gaps far past the space: clipped, the sequence would be the
    single point +1 ("separated" after 4 looks); fewer than 5 steps show the whole space instead."""
    pi_all = [0.01] * 4 + [1.0] * 196
    a = LabelledSample([1.0] * 4, [0.1] * 4, [0.1] * 200, pi=[0.01] * 4, pi_unlabeled=pi_all)
    b = LabelledSample([0.0] * 4, [0.1] * 4, [0.1] * 200, pi=[0.01] * 4, pi_unlabeled=pi_all)
    for diff in (difference_cs(a, b), paired_difference_cs(a, b)):
        assert (diff.lower, diff.upper) == (-1.0, 1.0)
        assert any("collapsed" in note for note in diff.notes)
        assert pair_verdict(diff).verdict == "continue"


def test_anytime_verdicts_separated_equivalent_continue() -> None:
    rng = np.random.default_rng(40)
    case = rng.beta(4, 3, 400)
    judge = np.clip(case + rng.normal(0, 0.05, 400), 0, 1)
    drawn = rng.integers(0, 400, 150)
    y = _labels(rng, case[drawn])
    base = LabelledSample(y, judge[drawn], judge)
    lower_b = LabelledSample(np.clip(y - 0.3, 0, 1), np.clip(judge[drawn] - 0.3, 0, 1), np.clip(judge - 0.3, 0, 1))
    separated = pair_verdict(paired_difference_cs(base, lower_b, horizon=100))
    assert (separated.verdict, separated.leader) == ("separated", "a") and separated.looks == 150
    flipped = pair_verdict(paired_difference_cs(lower_b, base, horizon=100))
    assert (flipped.verdict, flipped.leader) == ("separated", "b")
    same = pair_verdict(paired_difference_cs(base, base, horizon=100), margin=0.05)
    assert same.verdict == "equivalent" and "±0.05" in same.reason
    few = LabelledSample(y[:3], judge[drawn][:3], judge)
    assert pair_verdict(paired_difference_cs(few, few), margin=0.05).verdict == "continue"


def test_anytime_peeking_after_every_label_rarely_separates_equal_models() -> None:
    """Equal expert truth, a judge that flatters a by 0.1: looking after each of 100 labels, ≤ ~α false verdicts."""
    rng = np.random.default_rng(41)
    runs, false_separations = 200, 0
    for _ in range(runs):
        q = rng.beta(4, 3, 300)
        judge_a = np.clip(q + 0.1 + rng.normal(0, 0.08, 300), 0, 1)
        judge_b = np.clip(q + rng.normal(0, 0.08, 300), 0, 1)
        da, db = rng.integers(0, 300, 100), rng.integers(0, 300, 100)
        a = LabelledSample(_labels(rng, q[da]), judge_a[da], judge_a)
        b = LabelledSample(_labels(rng, q[db]), judge_b[db], judge_b)
        lower, upper = difference_cs_path(a, b, horizon=20, max_labels=200)
        false_separations += bool(np.any((lower > 0) | (upper < 0)))
    assert false_separations / runs <= 0.07


def test_anytime_labels_to_verdict_forecast_matches_simulated_stopping() -> None:
    """The forecast for a gap of 0.1 (sd 0.15 per step) is within 40 % of the simulated median stopping step."""
    rng = np.random.default_rng(42)
    forecast = labels_to_verdict(gap=0.1, sd=0.15, horizon=20, max_labels=200)
    assert forecast.target == "separated" and forecast.labels is not None
    stops = []
    for _ in range(200):
        steps = np.clip(0.5 + 0.1 + rng.normal(0, 0.15, 200), 0, 1) - 0.5  # D in [−0.5, 0.5]
        lower, _upper = mean_cs_path(steps + 0.5, steps + 0.5, [0.6], lam=0.0, horizon=20, max_labels=200)
        crossed = np.flatnonzero(lower > 0.5)
        stops.append(int(crossed[0]) + 1 if crossed.size else 200)
    assert abs(forecast.labels - np.median(stops)) <= 0.4 * np.median(stops)
    unreachable = labels_to_verdict(gap=0.0, sd=0.4, margin=0.05, max_labels=200)
    assert unreachable.labels is None and "no verdict in reach" in unreachable.reason
    equivalent = labels_to_verdict(gap=0.0, sd=0.02, margin=0.05, max_labels=200)
    assert equivalent.target == "equivalent" and equivalent.labels is not None


# ---------------------------------------------------------------------------------------------------------------
# Bad input: a status and a reason, never NaN, never an exception


def _no_nan(est: object) -> None:
    for name in ("estimate", "lower", "upper"):
        value = getattr(est, name)
        assert value is None or math.isfinite(value), name


@pytest.mark.parametrize(
    ("kwargs", "status", "words"),
    [
        ({"Y": [], "Yhat": [], "Yhat_unlabeled": [0.5] * 10}, "no_labels", "no expert labels"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5] * 10}, "few_labels", "1 expert label"),
        ({"Y": [0.4, 0.5], "Yhat": [0.5], "Yhat_unlabeled": [0.5] * 10}, "invalid", "paired item by item"),
        ({"Y": [0.4, float("nan")], "Yhat": [0.5, 0.5], "Yhat_unlabeled": [0.5]}, "invalid", "missing"),
        ({"Y": [0.4, 2.0], "Yhat": [0.5, 0.5], "Yhat_unlabeled": [0.5]}, "invalid", "outside the bounds"),
        ({"Y": [0.4, 0.5], "Yhat": [0.5, 0.5], "Yhat_unlabeled": []}, "invalid", "no judged items"),
        ({"Y": [0.4, 0.5], "Yhat": [0.5, 0.5], "Yhat_unlabeled": [0.5], "pi": [0.5], "pi_unlabeled": [0.5]},
         "invalid", "pi has 1 values for 2 items"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "pi": [0.0], "pi_unlabeled": [0.5]},
         "invalid", "π = 0"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "pi": [0.5]}, "invalid", "go together"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "alpha": 1.5}, "invalid", "alpha"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "bounds": (1.0, 0.0)}, "invalid", "bounds"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "lam": 2.0}, "invalid", "lam"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "method": "magic"}, "invalid", "method"),
        ({"Y": [0.4], "Yhat": [0.5], "Yhat_unlabeled": [0.5], "horizon": 0}, "invalid", "horizon"),
        ({"Y": ["x"], "Yhat": [0.5], "Yhat_unlabeled": [0.5]}, "invalid", "numbers"),
    ],
)
def test_anytime_bad_input_small_sample_says_so_in_words(kwargs: dict, status: str, words: str) -> None:
    y, yhat, yhat_u = kwargs.pop("Y"), kwargs.pop("Yhat"), kwargs.pop("Yhat_unlabeled")
    est = mean_cs(y, yhat, yhat_u, **kwargs)
    assert est.status == status
    assert est.reason is not None and words in est.reason
    _no_nan(est)
    assert est.lower <= est.upper


def test_anytime_constant_judge_and_pi_one_everywhere_are_noted() -> None:
    rng = np.random.default_rng(43)
    y = rng.binomial(3, 0.6, 20) / 3
    constant = mean_cs(y, np.full(20, 0.5), np.full(100, 0.5))
    assert constant.lam == 0.0 and any("constant judge" in note for note in constant.notes)
    experts_only = mean_cs(y, np.full(20, 0.5), np.full(100, 0.5), lam=0.0)
    assert (constant.lower, constant.upper) == (experts_only.lower, experts_only.upper)
    everywhere = mean_cs(y, y, y, pi=np.ones(20), pi_unlabeled=np.ones(20))
    plain = mean_cs(y, y, y)
    assert any("π = 1" in note for note in everywhere.notes)
    assert (everywhere.lower, everywhere.upper) == pytest.approx((plain.lower, plain.upper))


@pytest.mark.parametrize("margin", [0.0, -0.1, 1.0, 2.0, float("nan")])
def test_anytime_margin_outside_the_scale_is_invalid_in_words(margin: float) -> None:
    a = LabelledSample([0.5, 0.6], [0.5, 0.6], [0.5] * 10)
    verdict = pair_verdict(paired_difference_cs(a, a), margin=margin)
    assert verdict.verdict == "invalid" and "margin" in verdict.reason
    assert math.isfinite(verdict.margin)
    forecast = labels_to_verdict(gap=0.1, sd=0.1, margin=margin)
    assert forecast.labels is None and "margin" in forecast.reason


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0.01, 1)), min_size=0, max_size=12),
    population=st.lists(st.tuples(st.floats(0, 1), st.floats(0.01, 1)), min_size=1, max_size=15),
    method=st.sampled_from(["boundary", "betting"]),
)
def test_anytime_small_sample_any_input_gives_a_bounded_interval_never_nan(labels: list, population: list,
                                                                            method: str) -> None:
    y = [x[0] for x in labels]
    yhat = [x[1] for x in labels]
    pi = [x[2] for x in labels]
    est = mean_cs(y, yhat, [p[0] for p in population], pi=pi, pi_unlabeled=[p[1] for p in population],
                  method=method)
    _no_nan(est)
    assert 0.0 <= est.lower <= est.upper <= 1.0
    assert est.status in ("ok", "few_labels", "no_labels")
    if est.status != "no_labels":
        assert est.width > 0


def test_paired_difference_bad_input_and_no_labels() -> None:
    a = LabelledSample([0.5, 0.6], [0.5, 0.6], [0.5] * 10)
    b = LabelledSample([0.5], [0.5], [0.5] * 10)
    mismatched = paired_difference_cs(a, b)
    assert mismatched.status == "invalid" and "same cases" in (mismatched.reason or "")
    assert pair_verdict(mismatched).verdict == "invalid"
    none = difference_cs(LabelledSample([], [], [0.5] * 3), a)
    assert none.status == "no_labels" and (none.lower, none.upper) == (-1.0, 1.0)
    assert pair_verdict(none).verdict == "continue"
    unequal = difference_cs(a, b)
    assert unequal.n == 1 and any("wait for a partner" in note for note in unequal.notes)
    _no_nan(unequal)


def test_anytime_forecast_starts_from_the_interval_a_reader_sees() -> None:
    """The demo's llama row: 25 looks, shift −0.062 with the interval −0.159 to 0.036 (half-width 0.098) and a
    labels-only sd of 0.090. From the sd alone the mean path is past the line already (0 further labels: the old
    page said "the next label may settle it"); from the shown interval, a verdict needs many more labels, and
    one more label can never turn an interval of half-width 0.098 around −0.062 into one clear of 0."""
    alone = labels_to_verdict(gap=-0.062, sd=0.090, n_so_far=25, horizon=46)
    seen = labels_to_verdict(gap=-0.062, sd=0.090, n_so_far=25, horizon=46, half_width_now=0.098)
    assert alone.labels is not None and seen.labels is not None
    assert seen.labels > 10 > alone.labels
    assert seen.target == "separated"
    # a wider interval now means further to go, never less
    wider = labels_to_verdict(gap=-0.062, sd=0.090, n_so_far=25, horizon=46, half_width_now=0.12)
    assert wider.labels is None or wider.labels > seen.labels
    # never a forecast of labels already seen; a verdict is always ≥ 1 label away while the verdict is "continue"
    assert labels_to_verdict(gap=-0.3, sd=0.090, n_so_far=25, horizon=46, half_width_now=0.31).labels >= 1
