"""Krippendorff's α against Krippendorff (2011) and against its own coincidence-matrix arithmetic."""
from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from stats.alpha import (
    LEVELS,
    alpha_from_coincidences,
    coincidence_matrix,
    krippendorff_alpha,
    leave_one_rater_out,
    unit_coincidences,
)
from stats.matrix import value_counts
from tests.stats.reference_data import CAC_RAW4RATERS, KRIPPENDORFF_2011, KRIPPENDORFF_2011_ALPHA


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_reproduces_krippendorff_2011_at_every_level(level):
    # Krippendorff (2011), 4 observers × 12 units with missing data: .743 / .815 / .849 / .797.
    result = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert round(result.alpha, 3) == KRIPPENDORFF_2011_ALPHA[level]


def test_alpha_counts_the_unpairable_unit_instead_of_hiding_it():
    # Krippendorff (2011): unit 12 has a single value; 11 pairable units carry n.. = 40 values.
    result = krippendorff_alpha(KRIPPENDORFF_2011, "nominal")
    assert (result.n_units, result.n_pairable_units, result.n_unpairable_units) == (12, 11, 1)
    assert result.n_values_pairable == 40
    assert any("not pairable" in w for w in result.warnings)


def test_alpha_nominal_matches_irrcac_on_cac_raw4raters():
    # irrCAC README, krippen.alpha.raw(cac.raw4raters): 0.74342.
    assert krippendorff_alpha(CAC_RAW4RATERS, "nominal").alpha == pytest.approx(0.74342, abs=5e-6)


@pytest.mark.parametrize("level", LEVELS)
def test_coincidence_arithmetic_equals_the_krippendorff_package(level):
    rng = np.random.default_rng(7)
    data = rng.integers(0, 4, size=(5, 60)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    cats = np.arange(4.0)
    fast = alpha_from_coincidences(coincidence_matrix(value_counts(data, cats)), cats, level)
    if level == "ratio":
        cats = cats + 1.0  # the ratio metric needs positive values to be interesting
        data = data + 1.0
        fast = alpha_from_coincidences(coincidence_matrix(value_counts(data, cats)), cats, level)
    expected = krippendorff.alpha(reliability_data=data, value_domain=cats, level_of_measurement=level)
    assert float(fast) == pytest.approx(expected, abs=1e-12)


def test_unit_coincidences_weight_each_pair_by_one_over_m_minus_one():
    # Krippendorff (2011): a unit with values {1, 1, 2} contributes o_11 = 2/2, o_12 = o_21 = 2/2, o_22 = 0.
    per_unit = unit_coincidences(np.array([[2, 1], [1, 0]]))
    np.testing.assert_allclose(per_unit[0], [[1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(per_unit[1], np.zeros((2, 2)))


def test_alpha_is_none_with_a_reason_when_nobody_shares_a_unit():
    data = np.array([[1.0, np.nan], [np.nan, 2.0]])
    result = krippendorff_alpha(data, "nominal")
    assert result.alpha is None
    assert result.n_pairable_units == 0
    assert any("no unit has two or more ratings" in w for w in result.warnings)


def test_alpha_is_none_with_a_reason_when_every_rating_is_the_same():
    result = krippendorff_alpha(np.full((3, 4), 2.0), "ordinal", categories=[0, 1, 2, 3])
    assert result.alpha is None
    assert any("expected disagreement is 0" in w for w in result.warnings)


def test_alpha_rejects_a_value_outside_the_categories():
    with pytest.raises(ValueError, match="7 not among the categories"):
        krippendorff_alpha(np.array([[0.0, 1.0], [7.0, 1.0]]), "ordinal", categories=[0, 1, 2, 3])


def test_alpha_ignores_unused_categories():
    # δ² of an unused value never meets a coincidence, so naming the full 0–3 scale changes nothing.
    data = np.array([[1.0, 2.0, 2.0, 1.0], [1.0, 2.0, 1.0, 1.0]])
    for level in LEVELS:
        assert krippendorff_alpha(data, level, [0, 1, 2, 3]).alpha == pytest.approx(
            krippendorff_alpha(data, level).alpha
        )


def test_ratio_level_refuses_negative_values():
    with pytest.raises(ValueError, match="non-negative"):
        krippendorff_alpha(np.array([[-1.0, 1.0], [-1.0, 2.0]]), "ratio")


def test_leave_one_rater_out_flags_the_random_rater():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, 200).astype(float)
    noisy = rng.integers(0, 4, 200).astype(float)
    data = np.vstack([truth, truth, np.where(rng.random(200) < 0.1, noisy, truth), noisy])
    influence = leave_one_rater_out(data, "ordinal", rater_labels=["a", "b", "c", "random"])
    full = krippendorff_alpha(data, "ordinal").alpha
    by_rater = {r.rater: r for r in influence}
    assert max(influence, key=lambda r: r.change).rater == "random"
    assert by_rater["random"].alpha_without == pytest.approx(full + by_rater["random"].change)
    assert by_rater["random"].change > 0.2


def test_leave_one_rater_out_on_krippendorff_2011_matches_dropping_the_row():
    influence = leave_one_rater_out(KRIPPENDORFF_2011, "interval", rater_labels=list("ABCD"))
    without_c = krippendorff.alpha(reliability_data=np.delete(KRIPPENDORFF_2011, 2, axis=0), level_of_measurement="interval")
    assert influence[2].rater == "C"
    assert influence[2].alpha_without == pytest.approx(without_c)


@pytest.mark.parametrize("level", LEVELS)
def test_leave_one_rater_out_equals_the_package_on_each_matrix_without_the_row(level):
    rng = np.random.default_rng(11)
    checked = undefined = 0
    for _ in range(40):
        n_raters, n_units = int(rng.integers(2, 7)), int(rng.integers(1, 30))
        cats = np.arange(1.0, 5.0)
        data = rng.choice(cats[: int(rng.integers(1, 5))], size=(n_raters, n_units))
        data[rng.random(data.shape) < rng.uniform(0.0, 0.7)] = np.nan
        for influence, row in zip(leave_one_rater_out(data, level, cats), range(n_raters), strict=True):
            rest = np.delete(data, row, axis=0)
            expected = krippendorff_alpha(rest, level, cats).alpha  # None when undefined
            if expected is None:
                assert influence.alpha_without is None
                undefined += 1
            else:
                direct = krippendorff.alpha(reliability_data=rest, value_domain=cats, level_of_measurement=level)
                assert influence.alpha_without == pytest.approx(direct, abs=1e-12)
                checked += 1
    assert checked > 50 and undefined > 10
