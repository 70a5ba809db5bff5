"""Interval and ratio α of continuous ratings from per-unit sums, and their unit bootstrap.

Checked against the ``krippendorff`` package (point, leave-one-unit-out, and every bootstrap replicate recomputed
by the package from the same drawn units), against the definition written out pair by pair, and under a memory
cap at 1,000 units × 2 raters, where the coincidence form asks for 29.8 GiB.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from stats import alpha as alpha_module
from stats import intervals as intervals_module
from stats import reliability as reliability_module
from stats.alpha import krippendorff_alpha
from stats.alpha_continuous import alpha_of_weights, jackknife_alphas, resampled_alphas, unit_terms
from stats.intervals import agreement_interval, bootstrap_continuous_alpha

REPO = Path(__file__).resolve().parents[2]
LEVELS = ["interval", "ratio"]


def continuous(rng: np.random.Generator, raters: int, units: int, missing: float = 0.25) -> np.ndarray:
    """Positive continuous scores (a unit effect plus rater noise, on a log scale), with missing ratings."""
    data = np.exp(rng.normal(size=(1, units)) * 0.6 + rng.normal(scale=0.5, size=(raters, units)))
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
def test_point_and_jackknife_equal_the_package_on_random_data_with_missing_values(level: str) -> None:
    rng = np.random.default_rng(25)
    for trial in range(12):
        data = continuous(rng, int(rng.integers(2, 7)), int(rng.integers(4, 40)))
        if trial % 3 == 0:
            data = np.round(data, 1)  # ties, and for ratio some zeros
            data[0, 0] = 0.0
        terms = unit_terms(data, level)
        reference = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert alpha_of_weights(terms, np.ones((1, data.shape[1])))[0] == pytest.approx(reference, abs=1e-9)
        assert krippendorff_alpha(data, level).alpha == pytest.approx(reference, abs=1e-9)
        jack = jackknife_alphas(terms)
        for unit in (0, data.shape[1] // 2, data.shape[1] - 1):
            left_out = krippendorff.alpha(reliability_data=np.delete(data, unit, axis=1), level_of_measurement=level)
            assert jack[unit] == pytest.approx(left_out, abs=1e-9, nan_ok=True)


class _Refuse:
    @staticmethod
    def alpha(**_kwargs: object) -> float:
        raise AssertionError("the units × values × values coincidence form was used")


@pytest.mark.parametrize("level", LEVELS)
def test_many_distinct_values_take_the_value_path_and_equal_the_package(level: str, monkeypatch) -> None:
    # 110 units × 3 raters, a quarter missing: ~250 distinct values, 110 × 250² ≈ 7 M cells, above the 4 M cap.
    data = continuous(np.random.default_rng(3), 3, 110)
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    monkeypatch.setattr(alpha_module, "krippendorff", _Refuse)
    assert krippendorff_alpha(data, level).alpha == pytest.approx(reference, abs=1e-9)


def reference_replicates(data: np.ndarray, level: str, strata: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The unit bootstrap the slow way: draw unit columns per stratum, hand each resample to ``krippendorff.alpha``."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    draws = [m[rng.integers(0, m.size, size=(n_resamples, m.size))] for m in members]  # one chunk: same order
    out = []
    for b in range(n_resamples):
        columns = np.concatenate([d[b] for d in draws])
        try:
            out.append(krippendorff.alpha(reliability_data=data[:, columns], level_of_measurement=level))
        except ValueError:  # one value only
            out.append(np.nan)
    return np.array(out)


@pytest.mark.parametrize("level", LEVELS)
def test_every_bootstrap_replicate_equals_the_package_on_the_same_units(level: str) -> None:
    data = continuous(np.random.default_rng(8), 4, 30)
    strata = np.repeat([0, 1], 15)
    fast = resampled_alphas(unit_terms(data, level), strata, 60, np.random.default_rng(11))
    slow = reference_replicates(data, level, strata, 60, 11)
    np.testing.assert_allclose(fast, slow, atol=1e-9)


def test_alpha_interval_on_continuous_data_matches_the_reference_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    data = continuous(np.random.default_rng(9), 3, 40)
    monkeypatch.setattr(intervals_module, "MAX_CATEGORIES", 0)  # small data, the continuous path
    result = agreement_interval(data, level="interval", n_resamples=80, seed=4, confidence=0.9)
    slow = reference_replicates(data, "interval", np.zeros(40, dtype=np.int64), 80, 4)
    np.testing.assert_allclose(result.replicates, slow, atol=1e-9)
    assert (result.low, result.high) == pytest.approx(tuple(np.quantile(slow, [0.05, 0.95])), abs=1e-9)
    assert result.estimate == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


def test_interval_covers_the_known_alpha_of_a_large_population() -> None:
    # Units drawn from a population whose interval α is 0.5 (unit variance 1, rater noise variance 1): the 95 %
    # interval from 120 units should cover it in about 95 of 100 samples; 40 samples keep the test fast.
    rng = np.random.default_rng(2026)
    covered = 0
    for _ in range(40):
        data = rng.normal(size=(1, 120)) + rng.normal(size=(3, 120))
        result = bootstrap_continuous_alpha(data, "interval", stratum_codes=np.zeros(120, dtype=np.int64),
                                            n_resamples=300, rng=rng)
        assert result.percentile is not None and result.bca is not None
        covered += result.percentile[0] <= 0.5 <= result.percentile[1]
    assert covered >= 33  # P(fewer than 34 of 40 | coverage 0.95) < 0.5 %


def by_definition(pair: np.ndarray) -> float:
    """Interval α of two complete raters, pair by pair: 1 − (n − 1) Σ_u 2 (a − b)² / Σ_{i≠j} (x_i − x_j)²."""
    pooled = pair.ravel()
    expected = ((pooled[:, None] - pooled[None, :]) ** 2).sum()
    observed = (2.0 * (pair[0] - pair[1]) ** 2).sum()
    return 1.0 - (pooled.size - 1.0) * observed / expected


MEMORY_CAPPED = """
import json, sys
import numpy as np
from stats.alpha import krippendorff_alpha
from stats.intervals import agreement_interval
from stats.reliability import reliability_summary
rng = np.random.default_rng(1)
pair = rng.normal(size=(1, 1000)) + rng.normal(scale=0.8, size=(2, 1000))
five = rng.normal(size=(1, 1000)) + rng.normal(scale=0.8, size=(5, 1000))
boot = agreement_interval(five, level="interval", n_resamples=200, seed=1)
summary = reliability_summary(pair, level="interval", n_resamples=200, seed=1)
print(json.dumps({"alpha": krippendorff_alpha(pair, "interval").alpha, "boot": [boot.low, boot.high],
                  "summary": summary["krippendorff_alpha"], "ci": summary["alpha_ci"],
                  "entry": summary["intervals"]["krippendorff_alpha"]}))
"""


def test_1000_units_2_raters_of_continuous_values_run_in_1_5_gb() -> None:
    """Under a 1.5 GB address-space cap (the coincidence form asked for 29.8 GiB here, 186 GiB at 5 raters)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    done = subprocess.run([sys.executable, "-c", MEMORY_CAPPED], cwd=REPO, capture_output=True, text=True,
                          preexec_fn=cap, env={"OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    rng = np.random.default_rng(1)
    pair = rng.normal(size=(1, 1000)) + rng.normal(scale=0.8, size=(2, 1000))
    assert out["alpha"] == pytest.approx(by_definition(pair), abs=1e-9)
    assert out["summary"] == out["alpha"]
    low, high = out["ci"]
    assert low < out["alpha"] < high and high - low < 0.2
    assert out["entry"]["low"] == low and out["entry"]["method"] in ("percentile", "bca")
    assert out["boot"][0] < out["boot"][1]


@pytest.mark.parametrize("level", LEVELS)
def test_report_summary_of_continuous_scores_gives_alpha_an_interval(level: str, monkeypatch) -> None:
    monkeypatch.setattr(reliability_module, "MAX_CATEGORIES", 50)  # 60 units × 2 raters: ~110 values, continuous
    data = continuous(np.random.default_rng(4), 2, 60, missing=0.05)
    summary = reliability_module.reliability_summary(data, level=level, n_resamples=300, seed=2,
                                                     strata=["a", "b"] * 30)
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert summary["krippendorff_alpha"] == pytest.approx(reference, abs=1e-9)
    assert summary["percent_agreement"] is None  # values are not categories here
    entry = summary["intervals"]["krippendorff_alpha"]
    assert entry["low"] < summary["krippendorff_alpha"] < entry["high"]
    assert summary["alpha_ci"] == [entry["low"], entry["high"]]
    assert summary["bootstrap"]["n_resamples"] == 300 and summary["bootstrap"]["n_strata"] == 2
    assert 0.0 <= summary["alpha_below_min_probability"] <= 1.0


def test_report_summary_of_continuous_scores_at_the_ordinal_level_says_why_there_is_no_interval(monkeypatch) -> None:
    monkeypatch.setattr(reliability_module, "MAX_CATEGORIES", 50)
    data = continuous(np.random.default_rng(4), 2, 60, missing=0.05)
    summary = reliability_module.reliability_summary(data, level="ordinal", n_resamples=100, seed=2)
    assert summary["krippendorff_alpha"] is not None and summary["alpha_ci"] is None
    assert "interval level" in summary["intervals"]["krippendorff_alpha"]["reason"]


def test_alpha_interval_at_the_ordinal_level_on_continuous_data_gives_the_estimate_and_says_why_no_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(intervals_module, "MAX_CATEGORIES", 0)  # what 1,000 × 5 continuous values reach (186 GiB)
    data = continuous(np.random.default_rng(6), 3, 40)
    result = agreement_interval(data, level="ordinal", n_resamples=50, seed=1)
    assert result.estimate == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    assert result.low is None and any("interval level" in w for w in result.notes)


def test_ratio_terms_refuse_negative_values() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        unit_terms(np.array([[1.0, -2.0], [1.5, 3.0]]), "ratio")
