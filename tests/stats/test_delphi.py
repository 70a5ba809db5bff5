"""Delphi statistics against hand-worked examples."""
from decimal import Decimal

import numpy as np
import pytest

from stats.delphi import (
    kendall_tau,
    ranking,
    renormalise,
    round_summary,
    weight_sensitivity,
    weight_summary,
)


def test_quartiles_by_hand_type_7():
    # Sorted [10, 20, 30, 40]: positions (n-1)p = 0.75, 1.5, 2.25 → 17.5, 25, 32.5.
    s = weight_summary([40, 10, 30, 20])
    assert (s.q1, s.median, s.q3, s.iqr, s.mean) == (17.5, 25.0, 32.5, 15.0, 25.0)
    # within ±5 of 25: 20 and 30 (inclusive) → 2 of 4.
    assert s.share_within_5 == 0.5
    assert not s.converged


def test_convergence_is_strictly_below_the_threshold():
    # [20, 25, 25, 30]: Q1 = 23.75, Q3 = 26.25 → IQR 2.5.
    assert weight_summary([20, 25, 25, 30]).iqr == 2.5
    # [15, 20, 30, 35]: Q1 = 18.75, Q3 = 31.25 → IQR 12.5, not converged; [16, 20, 26, 30] → 19, 27, IQR 8.
    assert not weight_summary([15, 20, 30, 35]).converged
    assert weight_summary([16, 20, 26, 30]).converged
    # exactly 10 is not < 10: [10, 20, 30] → Q1 15, Q3 25.
    assert weight_summary([10, 20, 30]).iqr == 10 and not weight_summary([10, 20, 30]).converged


def test_stability_against_the_previous_round():
    first = weight_summary([10, 20, 30, 40])
    second = weight_summary([20, 22, 24, 26], previous=first)
    assert second.median_change == 23.0 - 25.0
    assert second.iqr_change == pytest.approx(3.0 - 15.0)


def test_round_convergence_and_attrition():
    round1 = round_summary([{"a": 10, "b": 90}, {"a": 40, "b": 60}, {"a": 25, "b": 75}], invited=5)
    assert round1.responded == 3 and round1.attrition == pytest.approx(0.4)
    assert round1.not_converged == ["a", "b"] and not round1.converged
    round2 = round_summary([{"a": 24, "b": 76}, {"a": 26, "b": 74}, {"a": 25, "b": 75}], invited=5, previous=round1)
    assert round2.converged and round2.not_converged == []
    assert round2.weights["a"].median_change == 0.0


def test_renormalise_sums_to_exactly_100_and_records_the_adjustment():
    result = renormalise({"a": 30, "b": 30, "c": 30})
    assert result.weights == {"a": Decimal("33.34"), "b": Decimal("33.33"), "c": Decimal("33.33")}
    assert sum(result.weights.values()) == Decimal("100")
    assert result.raw_sum == 90 and result.adjusted == {"a": Decimal("0.01")}
    medians = {"textual": 27.5, "hermeneutical": 21, "doctrinal": 22, "historical": 14, "apologetics": 9, "intertextual": 9.5}
    result = renormalise(medians)  # sums to 103 → scale 100/103
    assert sum(result.weights.values()) == Decimal("100")
    assert result.weights["textual"] == Decimal("26.70")  # 27.5 × 100 / 103 = 26.699…
    already = renormalise({"x": 60, "y": 40})
    assert already.weights == {"x": Decimal("60.00"), "y": Decimal("40.00")} and already.adjusted == {}
    with pytest.raises(ValueError):
        renormalise({"x": 0, "y": 0})


def test_ranking_and_kendall_tau_by_hand():
    assert list(ranking(np.array([0.2, 0.9, 0.5]))) == [2, 0, 1]
    # One discordant pair out of three: τ = (2 − 1) / 3.
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)


def test_sensitivity_counts_rank_changes():
    # Two models, two dimensions; model A is better on dim 0, B on dim 1. With weights 50/50,
    # A = .55, B = .45; moving 5 points from dim 0 to dim 1 (renormalised) flips nothing: 45/55 → A .51, B .49.
    scores = np.array([[0.9, 0.2], [0.3, 0.6]])
    stable = weight_sensitivity(scores, [50, 50], delta=5)
    assert stable.perturbations == 4 and stable.rank_changes == 0
    # Near tie: A − B ∝ .19·w0 − .18·w1 (A = .500, B = .495 at 50/50). Perturbations:
    # w0+5 → 10.45 − 9 > 0 keeps; w0−5 → 8.55 − 9 < 0 flips; w1+5 → 9.5 − 9.9 < 0 flips; w1−5 → keeps.
    close = weight_sensitivity(np.array([[0.60, 0.40], [0.41, 0.58]]), [50, 50], delta=5)
    assert [d["rank_changed"] for d in close.details] == [False, True, True, False]
    assert close.rank_changes == 2 and close.change_rate == 0.5
    assert close.min_tau == pytest.approx(-1.0)


def test_renormalise_breaks_exact_ties_by_key_order():
    # 40/120, 40/120, 30/120, 10/120 of 100 → 33.333…, 33.333…, 25, 8.333…: one spare hundredth, three-way tie
    # on the remainder; the first key in order gets it.
    result = renormalise({"a": 40, "b": 40, "c": 30, "d": 10})
    assert result.weights == {"a": Decimal("33.34"), "b": Decimal("33.33"), "c": Decimal("25.00"), "d": Decimal("8.33")}
    assert sum(result.weights.values()) == 100
