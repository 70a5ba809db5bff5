"""ICC(2,1)/ICC(3,1) against Shrout & Fleiss (1979) and pingouin; rater bias and Bland–Altman against
simulations with known truth; the level-of-measurement warnings."""
from __future__ import annotations

import numpy as np
import pytest

from stats.diagnostics import bland_altman, rater_bias
from stats.icc import icc
from stats.matrix import UndefinedCoefficientError, level_warnings

# Shrout, P. E. & Fleiss, J. L. (1979) "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2), 420–428, Table 2: 6 targets (rows) × 4 judges (columns).
# Published (Table 4): ICC(2,1) = .29, ICC(3,1) = .71.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)

# The same data through pingouin 0.7.0 `intraclass_corr` (computed once on 2026-11-23 in a scratch venv,
# not a project dependency): ICC(A,1) 0.289764 CI95 [0.02, 0.76]; ICC(C,1) 0.714841 CI95 [0.34, 0.95]
# (pingouin rounds its intervals to two decimals; ICC(A,1) is Shrout & Fleiss's ICC(2,1), ICC(C,1) their ICC(3,1)).
PINGOUIN = {"icc_2_1": (0.289764, 0.02, 0.76), "icc_3_1": (0.714841, 0.34, 0.95)}

# Random continuous data (numpy default_rng(7), 15 units × 3 raters with offsets 0, 0.4, −0.2, rounded to 2
# decimals), raters × units, through pingouin 0.7.0: ICC(A,1) 0.5542476990747035 [0.24, 0.80];
# ICC(C,1) 0.6217582007559226 [0.33, 0.84].
RANDOM = [[0.45, 1.97, 2.18, 0.74, 4.11, 3.46, -1.1, 1.84, 2.73, 1.27, 1.15, 1.12, 2.63, 3.33, 0.1],
          [1.15, 2.8, 3.86, 2.25, 3.47, 1.82, -0.09, 1.21, 2.79, 2.16, 2.61, 3.39, 3.95, 3.95, 1.8],
          [-0.02, 1.67, 1.43, 1.52, 3.77, 2.1, -1.24, 2.15, -0.14, 1.72, 1.5, 0.93, 1.88, 3.3, 2.48]]
PINGOUIN_RANDOM = {"icc_2_1": (0.5542476990747035, 0.24, 0.80), "icc_3_1": (0.6217582007559226, 0.33, 0.84)}


def test_shrout_fleiss_published_values_and_pingouin_intervals() -> None:
    result = icc(SHROUT_FLEISS.T)  # raters × units
    assert round(result.icc_2_1.value, 2) == 0.29
    assert round(result.icc_3_1.value, 2) == 0.71
    for name, (value, low, high) in PINGOUIN.items():
        got = getattr(result, name)
        assert got.value == pytest.approx(value, abs=1e-6)
        assert round(got.low, 2) == low and round(got.high, 2) == high
        assert (got.n_units, got.n_raters, got.n_units_dropped) == (6, 4, 0)


def test_random_continuous_data_match_pingouin() -> None:
    result = icc(np.array(RANDOM))
    for name, (value, low, high) in PINGOUIN_RANDOM.items():
        got = getattr(result, name)
        assert got.value == pytest.approx(value, abs=1e-12)
        assert round(got.low, 2) == low and round(got.high, 2) == high


def test_icc_leaves_out_incomplete_units_and_says_so() -> None:
    data = np.vstack([SHROUT_FLEISS, [np.nan, 3, 4, 5]]).T
    result = icc(data)
    assert result.icc_3_1.n_units == 6 and result.icc_3_1.n_units_dropped == 1
    assert result.icc_3_1.value == pytest.approx(icc(SHROUT_FLEISS.T).icc_3_1.value)


def test_icc_recovers_a_known_intraclass_correlation() -> None:
    """Units with variance 1, rater noise variance 1, no rater offsets: ICC(2,1) = ICC(3,1) = 0.5 in the population."""
    rng = np.random.default_rng(11)
    true_units = rng.normal(size=4000)
    data = true_units[np.newaxis, :] + rng.normal(size=(5, 4000))
    result = icc(data)
    assert result.icc_2_1.value == pytest.approx(0.5, abs=0.03)
    assert result.icc_3_1.low < 0.5 < result.icc_3_1.high or abs(result.icc_3_1.value - 0.5) < 0.03


def test_rater_offsets_lower_icc2_but_not_icc3() -> None:
    rng = np.random.default_rng(3)
    units = rng.normal(size=300)
    data = units[np.newaxis, :] + rng.normal(scale=0.3, size=(3, 300)) + np.array([[0.0], [1.5], [-1.5]])
    result = icc(data)
    assert result.icc_3_1.value > 0.85
    assert result.icc_2_1.value < 0.45  # absolute agreement pays for the offsets


@pytest.mark.parametrize("data, message", [
    (np.array([[1.0, 2.0, 3.0]]), "two raters"),
    (np.array([[1.0, np.nan], [np.nan, 2.0]]), "two or more units"),
    (np.ones((3, 5)), "same"),
])
def test_icc_undefined_is_one_line(data: np.ndarray, message: str) -> None:
    with pytest.raises(UndefinedCoefficientError, match=message):
        icc(data)


def test_a_rater_scoring_higher_is_flagged_and_unbiased_raters_are_not() -> None:
    rng = np.random.default_rng(8)
    truth = rng.integers(0, 4, size=200).astype(float)
    data = np.clip(truth + rng.normal(scale=0.5, size=(5, 200)).round(), 0, 6)
    data[2] += 0.7  # one rater systematically 0.7 higher (known truth)
    data[rng.random(data.shape) < 0.2] = np.nan
    results = rater_bias(data, rater_labels=list("ABCDE"))
    by_rater = {r.rater: r for r in results}
    assert by_rater["C"].flagged and by_rater["C"].low > 0.5
    assert by_rater["C"].mean_difference == pytest.approx(0.7, abs=0.1)  # the others' mean excludes C
    assert not any(r.flagged for r in results if r.rater != "C")
    assert sum(by_rater["A"].shares.values()) == pytest.approx(1.0)


def test_rater_bias_hand_computed() -> None:
    data = np.array([[0, 1, 2, 3, 1], [0, 1, 2, 3, 1], [1, 2, 3, 4, 2]], float)
    results = rater_bias(data, categories=[0, 1, 2, 3, 4])
    assert [r.mean_difference for r in results] == [-0.5, -0.5, 1.0]
    assert [r.flagged for r in results] == [False, False, True]
    assert results[2].shares == {"0": 0.0, "1": 0.2, "2": 0.4, "3": 0.2, "4": 0.2}


def test_bias_with_a_wide_interval_is_not_flagged() -> None:
    data = np.array([[0, 3, 0, 3], [3, 0, 3, 0]], float) + np.array([[0.6], [0.0]])
    first = rater_bias(data)[0]
    assert first.mean_difference == pytest.approx(0.6)
    assert not first.flagged and first.low < 0 < first.high


def test_bland_altman_hand_computed() -> None:
    experts = np.array([[1, 2, 3, 0], [1, 3, 3, np.nan], [2, 2, 3, np.nan]], float)  # medians 1, 2, 3, 0
    judge = np.array([2, 2, 3, 1], float)  # differences 1, 0, 0, 1
    result = bland_altman(judge, experts)
    assert result.n_units == 4 and result.mean_difference == pytest.approx(0.5)
    sd = np.std([1, 0, 0, 1], ddof=1)
    assert result.sd == pytest.approx(sd)
    assert (result.lower_limit, result.upper_limit) == pytest.approx((0.5 - 1.96 * sd, 0.5 + 1.96 * sd))


def test_level_warnings() -> None:
    continuous = np.arange(24, dtype=float).reshape(2, 12)
    assert level_warnings(continuous, "interval") and "distinct values" in level_warnings(continuous, "interval")[0]
    assert len(level_warnings(continuous, "nominal")) == 2
    assert level_warnings(np.array([[0, 1, 2, 3], [3, 2, 1, 0]], float), "nominal") == []
