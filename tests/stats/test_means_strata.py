"""One set of stratified resamples for the whole and for each stratum (the calibrated leaderboard's cells)."""
from __future__ import annotations

import numpy as np

from stats.means import bootstrap_weighted_mean_ci, bootstrap_weighted_mean_ci_with_strata


def test_the_whole_is_the_stratified_bootstrap_and_each_stratum_gets_a_plain_bootstrap() -> None:
    rng = np.random.default_rng(2)
    values = np.concatenate([rng.normal(0.3, 0.1, 300), rng.normal(0.7, 0.2, 200)])
    weights = rng.choice([1.0, 1.5, 2.0, 3.0], size=500)
    strata = np.array(["a"] * 300 + ["b"] * 200)
    whole, per = bootstrap_weighted_mean_ci_with_strata(values, weights, strata, n_resamples=2000, seed=9)
    # the same random stream as the stratified bootstrap of the whole: the same interval, exactly
    assert whole == bootstrap_weighted_mean_ci(values, weights, strata, n_resamples=2000, seed=9)
    for name, rows in (("a", slice(0, 300)), ("b", slice(300, 500))):
        alone = bootstrap_weighted_mean_ci(values[rows], weights[rows], n_resamples=2000, seed=4)
        low, high = per[name]
        mean = np.average(values[rows], weights=weights[rows])
        assert low < mean < high
        # a plain bootstrap of the stratum with other random numbers: the same interval up to resampling noise
        assert abs((high - low) - (alone[1] - alone[0])) < 0.15 * (alone[1] - alone[0])


def test_empty_input_gives_nan_and_no_strata() -> None:
    whole, per = bootstrap_weighted_mean_ci_with_strata([], [], [], n_resamples=10)
    assert np.isnan(whole[0]) and per == {}
