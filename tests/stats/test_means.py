"""The t interval of a mean, against scipy's independent implementation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.means import mean_t_interval


@pytest.mark.parametrize("values", [[1.0, 2.0, 3.0], [0.5, -0.25, 0.0, 1.5, 0.75], list(np.linspace(-1, 2, 30))])
def test_mean_t_interval_matches_scipy(values):
    mean, interval = mean_t_interval(values)
    low, high = scipy_stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=scipy_stats.sem(values))
    assert mean == pytest.approx(np.mean(values))
    assert interval == pytest.approx([low, high])


def test_mean_t_interval_edges():
    assert mean_t_interval([]) == (None, None)
    assert mean_t_interval([0.4]) == (0.4, None)
