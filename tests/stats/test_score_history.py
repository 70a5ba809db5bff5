"""Score history (stats/score_history.py): the change on shared cases against scipy's paired t interval, weights,
and chained equating with a known shift (the variance_budget issue's history half)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.score_history import Change, chain_equated, paired_change


def test_variance_budget_history_change_is_scipys_paired_t_interval_without_weights() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, 12)
    b = a + 0.05 + rng.normal(0, 0.03, 12)
    change = paired_change(a, b)
    reference = scipy_stats.ttest_rel(b, a).confidence_interval(0.95)
    assert (change.lower, change.upper) == pytest.approx((reference.low, reference.high), rel=1e-10)
    assert change.exceeds_interval


def test_variance_budget_history_weights_count_cases_like_the_leaderboard() -> None:
    change = paired_change([0.0, 0.0], [0.3, 0.6], [1.0, 2.0])
    assert change.estimate == pytest.approx((0.3 + 2 * 0.6) / 3)
    assert paired_change([0.5], [0.6]).lower is None and paired_change([], []).estimate is None
    with pytest.raises(ValueError, match="weights"):
        paired_change([0.1, 0.2], [0.1, 0.2], [1.0, 0.0])


def test_variance_budget_history_chain_adds_changes_and_widens_in_quadrature() -> None:
    first = Change(0.1, 0.01, 0.08, 0.12, 10)
    second = Change(-0.05, 0.01, -0.08, -0.02, 10)
    chained = chain_equated(0.5, 0.04, [first, second])
    assert [round(s, 6) for s, _ in chained] == [0.5, 0.6, 0.55]
    assert chained[2][1] == pytest.approx((0.04 ** 2 + 0.02 ** 2 + 0.03 ** 2) ** 0.5)
    broken = chain_equated(0.5, 0.04, [Change(None, None, None, None, 0), first])
    assert broken[1] == (None, None) and broken[2] == (None, None)
