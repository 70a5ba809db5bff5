"""Seeded coverage checks: the bootstrap intervals keep the promise the coverage table says they keep.

The panels come from the latent-normal model of ``benchmarks/coverage.py`` (0–3 ratings, every rater alike),
whose population values are computed there from one 200,000-unit panel. Each check below runs one design;
the tolerances are stated with the binomial standard error of a coverage estimated from N data sets,
SE = √(p (1 − p) / N), so each check can fail.
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks.coverage import population_values, run_design
from stats.coverage_table import COVERAGE, SKEW_SHARES
from stats.interval_choice import choose_interval_method

SEED = 20261123


def test_intervals_cover_about_95_percent_in_a_typical_panel():
    # 5 raters × 100 units, balanced, no missing ratings: 250 data sets × 300 resamples (about 5 s on one core).
    # SE of a coverage near 0.95 from 250 data sets: 1.4 points; the band 0.905–0.99 is about ±3 SE around the
    # 0.93–0.96 the full table shows for this design (a percentile interval runs slightly under 0.95).
    truth = population_values(5, "balanced", 0.0, SEED)
    coverage = run_design(5, 100, "balanced", 0.0, truth, reps=250, resamples=300, rng=np.random.default_rng(SEED))
    for name in ("krippendorff_alpha", "percent_agreement", "fleiss_kappa", "gwet_ac1", "gwet_ac2_quadratic"):
        for method in ("percentile", "bca"):
            assert 0.905 <= coverage[name][method] <= 0.99, (name, method, coverage[name][method])


def test_small_skewed_panels_undercover_as_the_table_says():
    # 3 raters × 12 units, ~70 % of ratings in one category, 20 % missing: 300 data sets × 300 resamples, a new seed
    # (a replication of the table's row).
    # Within-one agreement is near 1 (0.986) and most small panels agree within one point everywhere, so the
    # interval collapses to [1, 1] and misses. The simulated coverage must be far below 0.93 and within 0.08
    # (≈ 3 SE of the difference of two 300-data-set estimates) of the table's figure, and the choice of method
    # must call these intervals unreliable.
    truth = population_values(3, "skewed", 0.2, SEED)
    coverage = run_design(3, 12, "skewed", 0.2, truth, reps=300, resamples=300, rng=np.random.default_rng(SEED + 1))
    table = COVERAGE["within_one_agreement"][(12, 3, "skewed", 0.2)]
    for method in ("percentile", "bca"):
        assert coverage["within_one_agreement"][method] < 0.8
        assert coverage["within_one_agreement"][method] == pytest.approx(table[method], abs=0.08)
    choice = choose_interval_method("within_one_agreement", n_units=10, ratings_per_unit=2.6, missing_share=0.2,
                                    top_share=SKEW_SHARES["skewed"])
    assert not choice.reliable and "fewer pairable units than the smallest simulated design" in (choice.reason or "")
    choice = choose_interval_method("within_one_agreement", n_units=12, ratings_per_unit=3, missing_share=0.0,
                                    top_share=SKEW_SHARES["skewed"])
    assert not choice.reliable and "simulated coverage 0." in (choice.reason or "")
