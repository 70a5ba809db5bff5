"""α from value pairs within units (the memory-lean path for continuous data) against the coincidence path and
the ``krippendorff`` package, on the published example and on random data at every level."""
from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from stats import alpha as alpha_module
from stats.alpha import alpha_from_values, krippendorff_alpha
from tests.stats.reference_data import KRIPPENDORFF_2011, KRIPPENDORFF_2011_ALPHA

LEVELS = ["nominal", "ordinal", "interval", "ratio"]


@pytest.mark.parametrize("level", LEVELS)
def test_published_example_at_every_level(level: str) -> None:
    data = np.array(KRIPPENDORFF_2011, dtype=float)
    assert alpha_from_values(data, level).alpha == pytest.approx(KRIPPENDORFF_2011_ALPHA[level], abs=5e-4)
    assert alpha_from_values(data, level).n_pairable_units == krippendorff_alpha(data, level).n_pairable_units


@pytest.mark.parametrize("level", LEVELS)
def test_random_data_agree_with_the_package(level: str) -> None:
    rng = np.random.default_rng(2026)
    checked = 0
    for trial in range(60):
        raters, units = int(rng.integers(2, 8)), int(rng.integers(3, 60))
        data = rng.integers(0, int(rng.integers(2, 9)), size=(raters, units)).astype(float)
        if trial % 2:
            data = data * 0.37 + rng.integers(0, 3, size=data.shape) * 0.5  # non-integer, many distinct values
        data[rng.random(data.shape) < 0.3] = np.nan
        lean = alpha_from_values(data, level).alpha
        try:
            reference = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:  # the package refuses data with one value only
            assert lean is None
            continue
        if not np.isfinite(reference):
            assert lean is None
            continue
        assert lean == pytest.approx(reference, abs=1e-10)
        checked += 1
    assert checked > 40


def test_large_continuous_data_take_the_lean_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Continuous data above the size threshold never build the units × values count table."""
    rng = np.random.default_rng(5)
    data = rng.normal(size=(4, 150)) + rng.normal(size=(1, 150))
    monkeypatch.setattr(alpha_module, "_COUNT_CELLS", 1_000)  # 600 distinct values × 150 units is above it

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("value_counts built for continuous data")

    monkeypatch.setattr(alpha_module, "value_counts", refuse)
    small = krippendorff_alpha(data, "interval").alpha
    assert small == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=1e-10)
    assert small > 0.3  # a shared unit effect of variance 1 against rater noise of variance 1: α ≈ 0.5
