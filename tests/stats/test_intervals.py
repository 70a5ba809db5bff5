"""One unit bootstrap for every coefficient: its arithmetic against the library coefficients, BCa against scipy,
named random streams, the summary's ``intervals`` object and the choice of method by simulated coverage."""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats

from stats.agreement import percent_agreement, within_one_agreement
from stats.alpha import krippendorff_alpha
from stats.bootstrap import bca_interval, named_seed, named_seed_sequence, percentile_interval
from stats.gwet import gwet_ac
from stats.interval_choice import choose_interval_method
from stats.intervals import (
    CoefficientFunctions,
    bootstrap_coefficients,
    jackknife_values,
    resample_pattern_weights,
    unit_patterns,
)
from stats.kappa import cohen_kappa, fleiss_kappa
from stats.longformat import parse_long_csv
from stats.matrix import resolve_categories
from stats.pairwise import pairwise_cohen_kappa
from stats.reliability import reliability_summary
from stats.report import irr_report_build
from tests.stats.reference_data import KRIPPENDORFF_2011

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _library(data: np.ndarray, cats: np.ndarray, level: str) -> dict[str, float]:
    """Every coefficient from the library functions (krippendorff, scikit-learn, scipy, stats.*), NaN if undefined."""

    def safe(compute):
        try:
            return float(compute())
        except ValueError:  # UndefinedCoefficientError is a ValueError
            return np.nan

    c = cats.tolist()
    out = {
        "krippendorff_alpha": safe(lambda: krippendorff_alpha(data, level, c).alpha),
        "percent_agreement": safe(lambda: percent_agreement(data, c)),
        "within_one_agreement": safe(lambda: within_one_agreement(data, c)),
        "fleiss_kappa": safe(lambda: fleiss_kappa(data, c)),
        "gwet_ac1": safe(lambda: gwet_ac(data, c, "identity")),
        "gwet_ac2_linear": safe(lambda: gwet_ac(data, c, "linear")),
        "gwet_ac2_quadratic": safe(lambda: gwet_ac(data, c, "quadratic")),
    }
    if data.shape[0] == 2:
        both = ~np.isnan(data).any(axis=0)
        a, b = data[0, both], data[1, both]
        integer = bool(np.all(np.mod(cats, 1) == 0))
        for kind, weights in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
            if integer:  # scikit-learn (stats.kappa) refuses non-integer labels; stats.pairwise is the other reference
                out[f"cohen_kappa_{kind}"] = safe(lambda w=weights: cohen_kappa(data[0], data[1], c, w))
            else:
                out[f"cohen_kappa_{kind}"] = float(pairwise_cohen_kappa(data, c, weights)[0, 1])
        constant = both.sum() < 2 or np.ptp(a) == 0 or np.ptp(b) == 0
        out["spearman_rho"] = np.nan if constant else float(scipy.stats.spearmanr(a, b).statistic)
        out["kendall_tau_b"] = np.nan if constant else float(scipy.stats.kendalltau(a, b).statistic)
    return out


def _random_panel(rng, n_raters, n_units, values, missing=0.15):
    truth = rng.integers(0, len(values), n_units)
    noise = rng.integers(-1, 2, size=(n_raters, n_units))
    data = np.asarray(values, dtype=float)[np.clip(truth + noise, 0, len(values) - 1)]
    data[rng.random(data.shape) < missing] = np.nan
    return data


def _assert_matches(ours: float, reference: float, label: str) -> None:
    if np.isnan(reference):
        assert np.isnan(ours), label
    else:
        assert ours == pytest.approx(reference, abs=1e-10), label


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("n_raters", [2, 3, 6])
@pytest.mark.parametrize("values", [[0, 1, 2, 3], [0.5, 1.5, 2.25, 3.0, 4.75]])
def test_point_estimates_equal_the_library_coefficients(level, n_raters, values):
    rng = np.random.default_rng(LEVELS.index(level) * 100 + n_raters * 10 + len(values))
    for _ in range(5):
        data = _random_panel(rng, n_raters, 40, values)
        cats = resolve_categories(data, values)
        patterns = unit_patterns(data, cats, np.zeros(40, dtype=np.int64), two_raters=n_raters == 2)
        ours = CoefficientFunctions(patterns, cats, level).evaluate(patterns.freq[np.newaxis, :])
        for name, reference in _library(data, cats, level).items():
            _assert_matches(float(ours[name][0]), reference, f"{name} {level}")


@pytest.mark.parametrize("level", LEVELS)
def test_continuous_values_take_the_sparse_path_and_still_match(level):
    # 2 raters × 150 units of continuous values: ~100 distinct values (> 40: sparse agreement and coincidences).
    rng = np.random.default_rng(7)
    truth = rng.uniform(1, 5, 150)
    data = np.round(np.vstack([truth + rng.normal(0, 0.3, 150), truth + rng.normal(0, 0.3, 150)]), 2)
    cats = resolve_categories(data, None)
    assert cats.size > 40
    patterns = unit_patterns(data, cats, np.zeros(150, dtype=np.int64), two_raters=True)
    ours = CoefficientFunctions(patterns, cats, level).evaluate(patterns.freq[np.newaxis, :])
    for name, reference in _library(data, cats, level).items():
        _assert_matches(float(ours[name][0]), reference, name)


@pytest.mark.parametrize("n_raters", [2, 4])
def test_every_replicate_equals_the_coefficient_of_the_resampled_units(n_raters):
    # The resampled weights, expanded back into an explicit raters × units matrix (each pattern's units repeated as
    # drawn), must give the library's value of every coefficient on that matrix.
    rng = np.random.default_rng(31)
    data = _random_panel(rng, n_raters, 30, [0, 1, 2, 3])
    cats = np.arange(4.0)
    strata = np.repeat([0, 1, 2], 10)
    patterns = unit_patterns(data, cats, strata, two_raters=n_raters == 2)
    functions = CoefficientFunctions(patterns, cats, "ordinal")
    weights = resample_pattern_weights(patterns, 15, rng)
    ours = functions.evaluate(weights)
    # one representative unit per pattern: same stratum and same ratings (or value counts) as the pattern
    keys = (np.column_stack([strata, data.T]) if n_raters == 2 else None)
    representative = []
    for g in range(patterns.freq.size):
        if n_raters == 2:
            target = np.concatenate([[patterns.stratum[g]], [np.nan if i < 0 else cats[i] for i in patterns.pair[g]]])
            match = [u for u in range(30) if np.array_equal(keys[u], target, equal_nan=True)]
        else:
            counts = np.stack([(data == c).sum(axis=0) for c in cats], axis=1)
            match = [u for u in range(30) if strata[u] == patterns.stratum[g] and (counts[u] == patterns.counts[g]).all()]
        representative.append(match[0])
    for row in range(len(weights)):
        columns = np.repeat(representative, weights[row].astype(int))
        assert columns.size == 30 and all((strata[columns] == s).sum() == 10 for s in range(3))
        for name, reference in _library(data[:, columns], cats, "ordinal").items():
            _assert_matches(float(ours[name][row]), reference, f"{name} replicate {row}")


def test_jackknife_values_are_the_coefficients_without_one_unit():
    rng = np.random.default_rng(4)
    data = _random_panel(rng, 2, 25, [0, 1, 2, 3], missing=0.1)
    cats = np.arange(4.0)
    patterns = unit_patterns(data, cats, np.zeros(25, dtype=np.int64), two_raters=True)
    jack = jackknife_values(CoefficientFunctions(patterns, cats, "ordinal"), patterns.freq)
    keys = np.where(np.isnan(data), -1, data).T
    for g in range(patterns.freq.size):
        target = np.array([-1 if i < 0 else cats[i] for i in patterns.pair[g]])
        unit = next(u for u in range(25) if np.array_equal(keys[u], target))
        reference = _library(np.delete(data, unit, axis=1), cats, "ordinal")
        for name, value in reference.items():
            _assert_matches(float(jack[name][g]), value, f"{name} without unit {unit}")


def test_bca_reproduces_scipy_bootstrap():
    # scipy.stats.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(12)) with
    # scipy 1.17.1 gave (2.732379304722319, 3.869579658577726); the percentile method (same rng)
    # (2.7141941466666673, 3.8578178400000005). x has six decimals, so no replicate ties the estimate and scipy's
    # exact comparison and our tolerant one count the same replicates below it (see the next test).
    x = np.array([2.347984, 1.102264, 5.029745, 3.101179, 3.177646, 5.225546, 3.545237, 3.98351, 2.946609, 3.422443,
                  2.826576, 3.239622, 5.038122, 2.463544, 1.779688])
    res = scipy.stats.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(12))
    jack = np.array([np.delete(x, i).mean() for i in range(x.size)])
    low, high = bca_interval(res.bootstrap_distribution, float(x.mean()), jack, 0.95)
    assert (low, high) == pytest.approx((2.732379304722319, 3.869579658577726), abs=1e-12)
    assert (low, high) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high), abs=1e-12)
    assert percentile_interval(res.bootstrap_distribution, 0.95) == pytest.approx((2.7141941466666673,
                                                                                  3.8578178400000005), abs=1e-12)
    # Grouped jackknife values (weights = how many units share a value) equal the expanded jackknife.
    values, counts = np.unique(jack, return_counts=True)
    assert bca_interval(res.bootstrap_distribution, float(x.mean()), values, 0.95, counts) == pytest.approx((low, high))


def test_bca_counts_a_replicate_equal_to_the_estimate_up_to_rounding_as_a_tie():
    # 0.1 + 0.2 is 0.30000000000000004: a replicate of 0.3 is the same value summed in another order. Counted as
    # a tie (half below), z0 is that of 0.3 exactly; an exact comparison would count it wholly below.
    jack = np.array([0.25, 0.3, 0.35, 0.28, 0.33])
    replicates = np.array([0.1, 0.2, 0.3, 0.3, 0.3, 0.4, 0.5, 0.3, 0.6, 0.25])
    rounded = bca_interval(replicates, 0.1 + 0.2, jack, 0.9)
    assert rounded == bca_interval(replicates, 0.3, jack, 0.9)
    assert rounded != bca_interval(replicates, 0.3 + 1e-6, jack, 0.9)  # a real difference still counts


def test_bca_is_none_when_every_replicate_lies_on_one_side():
    assert bca_interval(np.full(50, 2.0), 1.0, np.array([0.9, 1.1, 1.0]), 0.95) is None


def test_stratified_weights_keep_each_stratum_size_and_draw_uniformly():
    data = np.array([[0, 0, 1, 1, 2, 2, 3, 3, 0, 1], [0, 1, 1, 1, 2, 3, 3, 3, 0, 1]], dtype=float)
    strata = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    patterns = unit_patterns(data, np.arange(4.0), strata, two_raters=True)
    weights = resample_pattern_weights(patterns, 20_000, np.random.default_rng(0))
    for s, size in ((0, 6), (1, 4)):
        assert (weights[:, patterns.stratum == s].sum(axis=1) == size).all()
    # Each pattern is drawn freq / N_s × N_s = freq times on average (SE ≈ 0.01 with 20,000 replicates).
    assert weights.mean(axis=0) == pytest.approx(patterns.freq, abs=0.03)


def test_named_streams_depend_on_the_seed_and_the_name_only():
    assert named_seed(3, "dimension:textual") == named_seed(3, "dimension:textual")
    assert named_seed(3, "dimension:textual") != named_seed(3, "dimension:doctrinal")
    assert named_seed(3, "dimension:textual") != named_seed(4, "dimension:textual")
    assert named_seed(3, "x") < 2**53
    first = np.random.default_rng(named_seed_sequence(9, "g")).random(3)
    assert (first == np.random.default_rng(named_seed_sequence(9, "g")).random(3)).all()


GROUPS = {
    "textual": "u1,A,1\nu1,B,1\nu1,C,2\nu2,A,2\nu2,B,2\nu2,C,2\nu3,A,3\nu3,B,3\nu3,C,1\nu4,A,0\nu4,B,1\nu4,C,0\n"
               "u5,A,2\nu5,B,3\nu5,C,3\nu6,A,1\nu6,B,0\nu6,C,1\n",
    "doctrinal": "u1,A,0\nu1,B,0\nu2,A,1\nu2,B,2\nu3,A,3\nu3,B,3\nu4,A,2\nu4,B,2\nu5,A,1\nu5,B,0\n",
    "historical": "u1,A,2\nu1,B,3\nu2,A,0\nu2,B,0\nu3,A,1\nu3,B,1\nu4,A,3\nu4,B,2\n",
}


def _grouped_csv(names):
    lines = ["unit,rater,value,dimension"]
    for name in names:
        lines += [f"{row},{name}" for row in GROUPS[name].strip().splitlines()]
    return "\n".join(lines) + "\n"


def test_adding_removing_or_reordering_groups_never_changes_another_groups_intervals():
    def intervals(names):
        ratings = parse_long_csv(_grouped_csv(names).splitlines(), source="t.csv", group_by="dimension")
        report = irr_report_build(ratings, n_resamples=300, seed=5, group_by="dimension").to_json()
        return {key: (group["alpha_ci"], group["intervals"]) for key, group in report["groups"].items()}

    full = intervals(["textual", "doctrinal", "historical"])
    assert intervals(["historical", "doctrinal", "textual"]) == full
    assert intervals(["historical"])["historical"] == full["historical"]
    assert intervals(["doctrinal", "textual"])["textual"] == full["textual"]
    # and the streams differ between groups: the same data under two names get different replicates
    renamed = _grouped_csv(["textual"]).replace(",textual", ",other")
    text = _grouped_csv(["textual"]) + renamed.split("\n", 1)[1]
    ratings = parse_long_csv(text.splitlines(), source="t.csv", group_by="dimension")
    both = irr_report_build(ratings, n_resamples=300, seed=5, group_by="dimension").to_json()["groups"]
    assert both["textual"]["alpha_ci"] != both["other"]["alpha_ci"]


def test_summary_intervals_cover_every_defined_coefficient_and_serialise():
    summary = reliability_summary(KRIPPENDORFF_2011, level="ordinal", seed=1, n_resamples=500)
    intervals = summary["intervals"]
    assert set(intervals) == {"krippendorff_alpha", "percent_agreement", "within_one_agreement", "fleiss_kappa",
                              "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic", "icc_2_1", "icc_3_1"}
    for name, entry in intervals.items():
        if entry is None:  # ICC needs units every rater scored
            assert name.startswith("icc") and summary[name] is None
            continue
        # coverage and its basis where there is simulated evidence (not for ICC's F interval, nor below 12 units)
        assert set(entry) - {"coverage", "coverage_basis"} == {"low", "high", "method", "reliable", "reason"}, name
        assert ("coverage" in entry) == ("coverage_basis" in entry) == (entry["method"] != "F"
                                                                         and summary["n_pairable_units"] >= 12)
        assert entry["method"] in (("F",) if name.startswith("icc") else ("percentile", "bca"))
        assert entry["low"] <= entry["high"]
        assert entry["reliable"] or entry["reason"]
    # alpha_ci stays the percentile interval of the same replicates
    alpha_entry = intervals["krippendorff_alpha"]
    if alpha_entry["method"] == "percentile":
        assert summary["alpha_ci"] == [alpha_entry["low"], alpha_entry["high"]]
    json.dumps(summary, allow_nan=False)


def test_two_rater_summary_has_kappa_and_rank_intervals_and_nulls_follow_the_coefficients():
    rng = np.random.default_rng(2)
    pair = _random_panel(rng, 2, 60, [0, 1, 2, 3], missing=0.0)
    summary = reliability_summary(pair, categories=[0, 1, 2, 3], seed=3, n_resamples=400)
    both = pair
    assert summary["spearman_rho"] == pytest.approx(scipy.stats.spearmanr(both[0], both[1]).statistic)
    assert summary["kendall_tau_b"] == pytest.approx(scipy.stats.kendalltau(both[0], both[1]).statistic)
    for name in ("cohen_kappa_unweighted", "cohen_kappa_linear", "cohen_kappa_quadratic", "spearman_rho", "kendall_tau_b"):
        entry = summary["intervals"][name]
        assert entry["low"] < entry["high"], name

    constant = reliability_summary(np.full((2, 6), 2.0), categories=[0, 1, 2, 3], seed=0, n_resamples=200)
    assert constant["fleiss_kappa"] is None and constant["intervals"]["fleiss_kappa"] is None
    assert constant["spearman_rho"] is None and constant["intervals"]["spearman_rho"] is None
    assert constant["intervals"]["percent_agreement"]["low"] == 1.0  # defined: every pair agrees
    json.dumps(constant, allow_nan=False)


def test_bootstrap_off_gives_interval_entries_without_bounds():
    summary = reliability_summary(KRIPPENDORFF_2011, n_resamples=0)
    entry = summary["intervals"]["fleiss_kappa"]
    assert entry == {"low": None, "high": None, "method": None, "reliable": False,
                     "reason": "bootstrap turned off (0 resamples)"}


def test_small_skewed_panels_are_marked_unreliable_with_the_simulated_coverage():
    choice = choose_interval_method("fleiss_kappa", n_units=12, ratings_per_unit=3, top_share=0.7)
    assert not choice.reliable
    assert choice.reason is not None and choice.reason.startswith(
        "12 pairable units × 3.0 ratings, 0% missing, 70% of ratings in one category: simulated coverage 0.")
    large = choose_interval_method("krippendorff_alpha", n_units=480, ratings_per_unit=4, top_share=0.36)
    assert large.reliable and large.reason is None and large.coverage >= 0.93


def test_engine_replicates_are_reproducible_with_a_seed():
    rng_data = np.random.default_rng(1)
    data = _random_panel(rng_data, 3, 50, [0, 1, 2, 3])
    first = bootstrap_coefficients(data, np.arange(4.0), "ordinal", stratum_codes=np.zeros(50, dtype=np.int64),
                                   n_resamples=200, rng=np.random.default_rng(8))
    second = bootstrap_coefficients(data, np.arange(4.0), "ordinal", stratum_codes=np.zeros(50, dtype=np.int64),
                                    n_resamples=200, rng=np.random.default_rng(8))
    assert {k: (v.percentile, v.bca) for k, v in first.items()} == {k: (v.percentile, v.bca) for k, v in second.items()}


@pytest.mark.parametrize("n_raters", [2, 4])
def test_bootstrapping_alpha_alone_gives_the_bits_of_the_full_bootstrap(n_raters):
    """The report's validation cells ask for α only; the replicates, intervals and the summary's α entries must be
    those of the full bootstrap (same weights, same sums), not merely close."""
    data = _random_panel(np.random.default_rng(11), n_raters, 70, [0, 1, 2, 3])
    codes = np.zeros(70, dtype=np.int64)
    full = bootstrap_coefficients(data, np.arange(4.0), "ordinal", stratum_codes=codes, n_resamples=300,
                                  rng=np.random.default_rng(5), two_raters=n_raters == 2)
    alone = bootstrap_coefficients(data, np.arange(4.0), "ordinal", stratum_codes=codes, n_resamples=300,
                                   rng=np.random.default_rng(5), two_raters=n_raters == 2,
                                   coefficients=("krippendorff_alpha",))
    assert set(alone) == {"krippendorff_alpha"} and len(full) > 5
    a, b = full["krippendorff_alpha"], alone["krippendorff_alpha"]
    assert np.array_equal(a.replicates, b.replicates, equal_nan=True)
    assert (a.estimate, a.percentile, a.bca) == (b.estimate, b.percentile, b.bca)
    summary = reliability_summary(data, categories=[0, 1, 2, 3], seed=9, n_resamples=300)
    only = reliability_summary(data, categories=[0, 1, 2, 3], seed=9, n_resamples=300,
                               interval_coefficients=("krippendorff_alpha",))
    assert set(only["intervals"]) == {"krippendorff_alpha", "icc_2_1", "icc_3_1"}
    assert only["intervals"]["krippendorff_alpha"] == summary["intervals"]["krippendorff_alpha"]
    for key in ("krippendorff_alpha", "alpha_ci", "alpha_below_min_probability", "bootstrap"):
        assert only[key] == summary[key], key
