"""Verbosity bias (stats/bias.py): the partial correlation against two independent formulas, Fisher intervals by
hand, and simulations with a known truth — a length-driven judge is flagged, a judge that only follows quality is
not, however much longer answers are better."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stats.bias import FLAG_AT, length_bias, length_normalised


def panel(rng: np.random.Generator, n: int, *, length_effect: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quality drives length (longer answers are better) and the experts' score (the mean of three experts, each
    off by noise of SD 0.4); the judge sees quality plus `length_effect` points per standard deviation of length,
    plus noise."""
    quality = rng.normal(size=n)
    words = 300 + 80 * (0.6 * quality + 0.8 * rng.normal(size=n))
    experts = quality + rng.normal(scale=0.4, size=(3, n)).mean(axis=0)
    z_length = (words - words.mean()) / words.std()
    judge = quality + length_effect * z_length + rng.normal(scale=0.4, size=n)
    return words, judge, experts


def test_the_partial_correlation_equals_the_precision_matrix_and_first_order_formulas() -> None:
    rng = np.random.default_rng(4)
    words, judge, experts = panel(rng, 120, length_effect=0.3)
    result = length_bias(words, judge, experts)
    precision = np.linalg.inv(np.corrcoef(np.vstack([judge, words, experts])))
    assert result.partial.r == pytest.approx(-precision[0, 1] / math.sqrt(precision[0, 0] * precision[1, 1]), abs=1e-12)
    r = np.corrcoef(np.vstack([judge, words, experts]))
    first_order = (r[0, 1] - r[0, 2] * r[1, 2]) / math.sqrt((1 - r[0, 2] ** 2) * (1 - r[1, 2] ** 2))
    assert result.partial.r == pytest.approx(first_order, abs=1e-12)
    assert result.pearson.r == pytest.approx(r[0, 1], abs=1e-12)
    assert result.reference_pearson.r == pytest.approx(r[1, 2], abs=1e-12)


def test_fisher_intervals_by_hand() -> None:
    # r = 0.5 from n = 50 points: z = atanh(0.5) = 0.549306, SE = 1/√47 = 0.145865, z ± 1.959964·SE =
    # [0.263416, 0.835196] → tanh: [0.257488, 0.683256] (Fisher 1921; the usual textbook computation)
    x = np.arange(50, dtype=float)
    rng = np.random.default_rng(0)
    noise = rng.normal(size=50)
    noise -= np.polyval(np.polyfit(x, noise, 1), x)  # orthogonal to x
    y = x / x.std() + noise / noise.std() * math.sqrt(3)  # r = 1/√(1+3) = 0.5 exactly
    result = length_bias(x, y)
    assert result.pearson.r == pytest.approx(0.5, abs=1e-12)
    assert result.pearson.ci == pytest.approx((0.257488, 0.683256), abs=1e-6)
    assert result.flagged and result.basis == "pearson"  # no reference: the raw r is what is read
    assert result.verdict == "uncertain"  # 0.5 is over 0.3, but its interval reaches below 0.3


def test_simulated_judges_with_a_known_truth_are_flagged_only_when_length_driven() -> None:
    rng = np.random.default_rng(2026)
    flags = {"fair": 0, "verbose": 0}
    raw_high_for_fair = 0
    for _ in range(200):
        for kind, effect in (("fair", 0.0), ("verbose", 0.5)):
            words, judge, experts = panel(rng, 60, length_effect=effect)
            result = length_bias(words, judge, experts)
            flags[kind] += result.flagged
            if kind == "fair" and abs(result.pearson.r) >= FLAG_AT:
                raw_high_for_fair += 1
    assert flags["verbose"] >= 190  # ≥ 95 % of length-driven judges flagged
    assert flags["fair"] <= 20  # ≤ 10 % of fair judges flagged …
    assert raw_high_for_fair >= 100  # … although the raw r alone would have flagged most of them


def test_the_length_normalised_score_removes_the_length_effect_and_keeps_the_mean() -> None:
    rng = np.random.default_rng(9)
    words, judge, experts = panel(rng, 400, length_effect=0.6)
    result = length_bias(words, judge, experts)
    assert result.flagged and result.slope_per_100_words > 0 and result.verdict == "fail"
    adjusted = length_normalised(words, judge, result)
    assert adjusted.mean() == pytest.approx(judge.mean(), abs=1e-12)
    assert abs(length_bias(words, adjusted, experts).partial.r) < 1e-9


def test_small_or_constant_input_is_undefined_not_an_error() -> None:
    result = length_bias([100, 200, 300], [1, 1, 1], [1, 2, 3])
    assert result.pearson.r is None and not result.flagged and "too few" in result.warning
    result = length_bias([100, 200, 300, 400, 500, 600, 700, 800, 900], [1, 2, 3, 4, 5, 6, 7, 8, 9.5],
                         [np.nan] * 9)
    assert result.partial is not None and result.partial.r is None and not result.flagged


def test_wilson_interval_matches_the_published_example() -> None:
    from stats.bias import wilson_interval

    # Newcombe (1998), Table I, example (a): 81 of 263 → Wilson 95 % interval 0.2553 to 0.3662
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(0, 0) is None


def test_position_bias_counts_reversals_and_first_position_preference() -> None:
    from stats.bias import position_bias

    always_first = position_bias([("A", "A")] * 40)
    assert always_first.reversal_rate == 1.0 and always_first.first_position_share == 1.0
    assert always_first.flagged and always_first.verdict == "fail"
    fair = position_bias([("A", "B")] * 30 + [("B", "A")] * 30 + [("tie", "tie")] * 10)
    assert fair.reversals == 0 and not fair.flagged and fair.verdict == "pass"
    assert fair.first_position_share == 0.5
    mixed = position_bias([("A", "B")] * 18 + [("A", "A"), ("tie", "B")])  # 2 of 20 reverse
    assert mixed.reversal_rate == 0.1 and mixed.flagged and mixed.verdict == "uncertain"
