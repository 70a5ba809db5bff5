"""The trust flag of an interval comes from the simulated coverage estimated at the data's own design.

Issue 25, item 5: the flag used to be read off the nearest row of the coverage table, so 5 raters × 50 units
(which covers 0.94–0.95 in simulation) was always called unreliable because 5 × 30 sits at 0.92, and the missing
share and the degree of skew were ignored. The probe designs below are panels from the benchmark's latent-normal
model (``benchmarks.coverage.simulate``, every rater alike); their true coverage is the benchmark's
``--probe`` figure (2,000 data sets each, SE 0.5 points), quoted where a test depends on it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.coverage import SCALE, population_values, run_design, simulate
from stats.coverage_table import COVERAGE, SKEW_SHARES
from stats.interval_choice import (
    COVERAGE_TARGET,
    choose_interval_method,
    estimate_coverage,
    local_linear,
    pairable_units,
    ratings_per_pairable_unit,
    top_category_share,
)
from stats.reliability import reliability_summary


def alpha_flag(n_raters: int, n_units: int, skew: str, missing: float, seed: int) -> dict:
    """The α interval entry of one simulated panel of a design, as a report computes it."""
    data = simulate(np.random.default_rng(seed), n_raters, n_units, skew, missing)
    summary = reliability_summary(data, level="ordinal", categories=list(SCALE), n_resamples=200, seed=seed)
    return summary["intervals"]["krippendorff_alpha"] | {"n_pairable_units": summary["n_pairable_units"]}


def test_five_raters_by_fifty_complete_balanced_units_are_reliable():
    # Simulated coverage of α here: 0.941 (percentile) / 0.945 (BCa). The nearest table row (5 × 30) says 0.92, which
    # flagged every such panel unreliable; the estimate at 50 units lies between the 30- and 100-unit rows.
    for seed in (1, 2, 3):
        entry = alpha_flag(5, 50, "balanced", 0.0, seed)
        assert entry["reliable"], entry
        assert entry["coverage"] >= COVERAGE_TARGET
        assert entry["coverage_basis"].startswith(f"simulated coverage {entry['coverage']:.3f} (local fit over ≈ ")


def test_small_skewed_panels_are_unreliable_with_the_figure_used():
    # 3 raters × 12 units, ~70 % of ratings in one category: simulated coverage of α 0.82 / 0.84.
    entry = alpha_flag(3, 12, "skewed", 0.0, 4)
    assert not entry["reliable"]
    assert entry["coverage"] < COVERAGE_TARGET
    assert f"simulated coverage {entry['coverage']:.3f}" in entry["reason"]
    assert "12 pairable units × 3.0 ratings, 0% missing" in entry["reason"]


def test_three_raters_by_thirty_units_with_a_fifth_missing_get_the_coverage_a_fresh_simulation_finds():
    # Known truth, simulated here: 300 new data sets of the design (seed not used by the table), 1,000 resamples;
    # SE of a coverage near 0.94 from 300 data sets 1.4 points, so ±0.04 is about 3 SE. (The benchmark's --probe
    # with 2,000 data sets: 0.936 for both methods — at or above 0.93, so this design is reliable under the model;
    # the 0.910 came from 300 data sets, 1.9 SE below.)
    truth = population_values(3, "balanced", 0.2, 20261123)
    simulated = run_design(3, 30, "balanced", 0.2, {"krippendorff_alpha": truth["krippendorff_alpha"]}, reps=300,
                           resamples=1000, rng=np.random.default_rng(99))["krippendorff_alpha"]
    choice = choose_interval_method("krippendorff_alpha", n_units=round(pairable_units(30, 3, 0.2)),
                                    ratings_per_unit=ratings_per_pairable_unit(3, 0.2), missing_share=0.2,
                                    top_share=SKEW_SHARES["balanced"])
    assert choice.coverage == pytest.approx(simulated[choice.method], abs=0.04)
    assert choice.reliable == (choice.coverage >= COVERAGE_TARGET)
    assert choice.basis == f"simulated coverage {choice.coverage:.3f} (local fit over ≈ {choice.basis.split('≈ ')[1]}"


def test_the_missing_share_is_part_of_the_design():
    # The same 3 raters × 30 units complete and with 20 % of ratings missing are two designs: the missing ratings
    # cost pairable units and ratings per unit, and the estimate is read at each design's own coordinates.
    complete = estimate_coverage("krippendorff_alpha", n_units=30, ratings_per_unit=3.0, missing_share=0.0,
                                 top_share=SKEW_SHARES["balanced"])
    missing = estimate_coverage("krippendorff_alpha", n_units=round(pairable_units(30, 3, 0.2)),
                                ratings_per_unit=ratings_per_pairable_unit(3, 0.2), missing_share=0.2,
                                top_share=SKEW_SHARES["balanced"])
    row_complete = COVERAGE["krippendorff_alpha"][(30, 3, "balanced", 0.0)]
    row_missing = COVERAGE["krippendorff_alpha"][(30, 3, "balanced", 0.2)]
    for method in ("percentile", "bca"):
        assert complete.coverage[method] == pytest.approx(row_complete[method], abs=0.03)
        assert missing.coverage[method] == pytest.approx(row_missing[method], abs=0.03)


@pytest.mark.parametrize(("coefficient", "key"), [
    ("krippendorff_alpha", (100, 5, "balanced", 0.2)),
    ("krippendorff_alpha", (30, 3, "balanced", 0.2)),
    ("krippendorff_alpha", (100, 10, "skewed", 0.2)),
    ("fleiss_kappa", (100, 3, "balanced", 0.2)),
    ("gwet_ac1", (30, 5, "skewed", 0.2)),
    ("cohen_kappa_quadratic", (100, 2, "balanced", 0.2)),
])
def test_a_held_out_design_is_estimated_within_three_points_of_its_simulated_coverage(coefficient, key):
    # Known truth: the row's own simulated coverage, which the estimate does not see (the row is removed).
    table = COVERAGE[coefficient]
    units, raters, skew, missing = key
    rest = {k: v for k, v in table.items() if k != key}
    estimate = estimate_coverage(coefficient, n_units=round(pairable_units(units, raters, missing)),
                                 ratings_per_unit=ratings_per_pairable_unit(raters, missing), missing_share=missing,
                                 top_share=SKEW_SHARES[skew], table=rest)
    for method in ("percentile", "bca"):
        assert estimate.coverage[method] == pytest.approx(table[key][method], abs=0.03), method


def test_skew_between_the_simulated_classes_is_interpolated_between_them():
    common = {"n_units": 30, "ratings_per_unit": 3.0, "missing_share": 0.0}
    low = estimate_coverage("within_one_agreement", top_share=SKEW_SHARES["balanced"], **common).coverage["bca"]
    high = estimate_coverage("within_one_agreement", top_share=SKEW_SHARES["skewed"], **common).coverage["bca"]
    middle_share = (SKEW_SHARES["balanced"] + SKEW_SHARES["skewed"]) / 2
    middle = estimate_coverage("within_one_agreement", top_share=middle_share, **common).coverage["bca"]
    assert abs(high - low) > 0.1  # within-one agreement loses most of its coverage on skewed panels
    assert middle == pytest.approx((low + high) / 2, abs=1e-9)
    beyond = estimate_coverage("within_one_agreement", top_share=0.95, **common).coverage["bca"]
    assert beyond == pytest.approx(high, abs=1e-9)  # held at the most skewed simulated class


def test_designs_beyond_the_table_are_read_at_its_edge_and_say_so():
    choice = choose_interval_method("krippendorff_alpha", n_units=300, ratings_per_unit=7.5, missing_share=0.87,
                                    top_share=0.4)
    assert choice.coverage is not None and "87% missing read as 40%" in (choice.basis or "")
    few = choose_interval_method("krippendorff_alpha", n_units=8, ratings_per_unit=3, top_share=0.4)
    assert not few.reliable and few.coverage is None
    assert "fewer pairable units than the smallest simulated design (12 units)" in (few.reason or "")


def test_pairable_units_and_ratings_per_unit_match_a_simulation():
    rng = np.random.default_rng(7)
    present = rng.random((200_000, 3)) >= 0.2  # 3 raters, 20 % of ratings missing
    counts = present.sum(axis=1)
    pairable = counts >= 2
    assert pairable_units(200_000, 3, 0.2) == pytest.approx(pairable.sum(), rel=0.005)
    assert ratings_per_pairable_unit(3, 0.2) == pytest.approx(counts[pairable].mean(), rel=0.005)
    assert ratings_per_pairable_unit(5, 0.0) == 5.0 and pairable_units(30, 5, 0.0) == 30.0


def test_local_linear_reproduces_a_plane_and_counts_the_rows_it_rests_on():
    grid = np.array([[x, y, z] for x in range(4) for y in range(3) for z in range(3)], dtype=float)
    values = 0.9 + 0.01 * grid[:, 0] - 0.02 * grid[:, 1] + 0.005 * grid[:, 2]
    at = np.array([1.3, 0.7, 1.5])
    (estimate,), kish = local_linear(grid, values, at)
    assert estimate == pytest.approx(0.9 + 0.013 - 0.014 + 0.0075, abs=1e-12)
    assert 1 < kish < len(grid)
    one_axis = grid[grid[:, 1] == 0]  # a coordinate every row shares is left out of the fit
    assert local_linear(one_axis, values[grid[:, 1] == 0], np.array([1.3, 2.0, 1.5]))[0][0] == pytest.approx(
        0.9 + 0.013 + 0.0075, abs=1e-12)
    two = local_linear(grid, np.column_stack([values, 1 - values]), at)[0]  # two series, one weighting
    assert two == pytest.approx([estimate, 1 - estimate], abs=1e-12)


def test_top_category_share():
    assert top_category_share([[3, 0, 0], [2, 1, 0]]) == pytest.approx(5 / 6)
    assert top_category_share([[1, 1, 1], [1, 1, 1]]) == pytest.approx(1 / 3)
    assert top_category_share(np.zeros((2, 3))) == 0.0
    assert math.isclose(SKEW_SHARES["skewed"], 0.70, abs_tol=0.05) and SKEW_SHARES["balanced"] < 0.4
