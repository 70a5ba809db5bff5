"""Issue 32: a published interval always contains its estimate. On data where every unit disagrees in the same
regular way (rater 2 one category above rater 1, categories used equally), observed agreement is 0 in every
bootstrap resample and only chance agreement moves; balanced marginals make the estimate the extreme value of κ
and AC1, so every replicate lies on one side of it and the percentile interval excludes it. Such an interval is
replaced by words (stats.bootstrap.edge_reason); everywhere else the reported interval holds its estimate."""
from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from stats.bootstrap import edge_reason, interval_holds
from stats.intervals import agreement_interval
from stats.reliability import reliability_summary


def _shifted(n_units: int = 20, n_categories: int = 4) -> np.ndarray:
    """Rater 1 rates unit i as i mod q, rater 2 one category above: no unit agrees, every category used equally."""
    first = np.arange(n_units) % n_categories
    return np.vstack([first, (first + 1) % n_categories]).astype(float)


def _holds_or_says_why(summary: dict) -> list[str]:
    wrong = []
    for name, entry in summary["intervals"].items():
        value = summary.get(name) if name not in ("gwet_ac2_linear", "gwet_ac2_quadratic") else \
            summary["gwet_ac2"][name.rsplit("_", 1)[1]]
        if name.startswith("cohen_kappa_"):
            value = summary["cohen_kappa"][name.removeprefix("cohen_kappa_")]
        if entry is None or value is None or not isinstance(value, float | int):
            continue
        if entry["low"] is None:
            assert entry["reason"], name
        elif not interval_holds((entry["low"], entry["high"]), value):
            wrong.append(f"{name}: {value} outside [{entry['low']}, {entry['high']}] ({entry['method']})")
    return wrong


def test_artefact_check_shifted_ratings_estimates_match_the_references() -> None:
    data = _shifted()
    summary = reliability_summary(data, level="nominal", n_resamples=0, seed=0)
    table, _ = aggregate_raters(data.T.astype(int))
    assert summary["fleiss_kappa"] == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)
    # Gwet (2008): AC1 = (pa − pe) / (1 − pe), pe = Σ π_k (1 − π_k) / (q − 1); here pa = 0, π_k = ¼: pe = ¼, AC1 = −⅓.
    assert summary["gwet_ac1"] == pytest.approx(-1 / 3, abs=1e-12)
    assert summary["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)


def test_artefact_check_an_interval_that_would_exclude_its_estimate_is_replaced_by_words() -> None:
    summary = reliability_summary(_shifted(), level="nominal", n_resamples=1000, seed=1)
    # Why: ≈ 2.4 % of the resamples keep the marginals exactly balanced (a point mass at the estimate), every other
    # one lies on one side, so the percentile's 2.5 % end is interpolated past the estimate; BCa collapses onto it.
    for name in ("gwet_ac1", "fleiss_kappa"):
        entry = summary["intervals"][name]
        assert entry is not None and entry["low"] is None and "bootstrap replicates lie" in entry["reason"], name
    ac1 = summary["intervals"]["gwet_ac1"]
    assert ac1 is not None and ac1["low"] is None and ac1["high"] is None and ac1["method"] is None
    assert ac1["reason"].startswith("no interval: 976 of 1000 bootstrap replicates lie above the estimate "
                                    "(24 equal it), which sits at the edge")
    assert any(w.startswith("intervals: gwet_ac1: no interval") for w in summary["warnings"])
    assert _holds_or_says_why(summary) == []
    ones = [agreement_interval(_shifted(), "gwet_ac1", level="nominal", categories=[0, 1, 2, 3], n_resamples=1000,
                               seed=seed) for seed in range(12)]
    assert all(one.interval is None or interval_holds(one.interval, one.estimate) for one in ones)
    assert any(one.interval is None and any("lie above the estimate" in note for note in one.notes) for one in ones)

def test_artefact_check_edge_reason_counts_the_side_the_replicates_lie_on() -> None:
    assert edge_reason(np.array([0.1, 0.2, np.nan, 0.0]), 0.0).startswith(
        "no interval: 2 of 3 bootstrap replicates lie above the estimate (1 equal it),")
    assert edge_reason(np.array([-0.5, -0.4]), 0.0).startswith("no interval: all 2 bootstrap replicates lie below "
                                                              "the estimate, which")
    assert interval_holds((0.0, 1.0), 1.0 + 1e-12) and not interval_holds((0.0, 1.0), 1.01)
    assert not interval_holds(None, 0.5)


@settings(max_examples=20, deadline=None)
@given(n_units=st.integers(12, 30), n_raters=st.integers(2, 4), n_categories=st.integers(2, 4),
       shift=st.integers(0, 3), noise=st.floats(0.0, 0.6), seed=st.integers(0, 2**16))
def test_artefact_check_every_reported_interval_holds_its_estimate(
        n_units: int, n_raters: int, n_categories: int, shift: int, noise: float, seed: int) -> None:
    """Regular designs (each rater shifted by a multiple of `shift`) with random noise: never an excluded estimate."""
    rng = np.random.default_rng(seed)
    base = np.arange(n_units) % n_categories
    data = np.vstack([(base + shift * j) % n_categories for j in range(n_raters)]).astype(float)
    flip = rng.random(data.shape) < noise
    data[flip] = rng.integers(0, n_categories, int(flip.sum()))
    summary = reliability_summary(data, level="ordinal", n_resamples=200, seed=seed)
    assert _holds_or_says_why(summary) == []
