"""Variance budget (stats/variance_budget.py): sums of squares against statsmodels' ANOVA table, a two-way design
against statsmodels' REML mixed model, the cases-only interval against scipy, and a small simulation with known
components (recovery of each share, coverage of the total interval). The heavy simulation is
benchmarks/variance_budget.py."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from stats.variance_budget import GROUPS, anova_sources, simulate_table, true_terms, variance_budget


def _long(y: np.ndarray) -> pd.DataFrame:
    idx = np.array(list(itertools.product(*[range(k) for k in y.shape])))
    return pd.DataFrame({"y": y.ravel(), "c": idx[:, 0], "p": idx[:, 1], "r": idx[:, 2], "j": idx[:, 3], "g": 1})


def test_variance_budget_sums_of_squares_match_statsmodels_anova() -> None:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    y = np.random.default_rng(11).normal(size=(4, 2, 2, 3))
    frame = _long(y)
    # Every term but the 4-way interaction, which is the residual (one observation per cell).
    formula = "y ~ (C(c) + C(p) + C(r) + C(j)) ** 3"
    table = anova_lm(smf.ols(formula, frame).fit(), typ=1)
    ss = {}
    for name, row in table.iterrows():
        # "C(c):C(p)" → {c, p}; the residual is the 4-way interaction c × p × r × j.
        letters = frozenset("cprj") if name == "Residual" else frozenset(part[2] for part in str(name).split(":"))
        ss[letters] = (row["sum_sq"], row["df"])
    ours = anova_sources(y)
    # Ours pools every term containing r (nested in c × p) into R(CP) (no j) and E (with j); do the same to theirs.
    pooled: dict[frozenset[str], list[float]] = {}
    for key, (s, df) in ss.items():
        if key == frozenset({"residual"}):
            key = frozenset("crpj")
        elif "r" in key:
            key = frozenset(set(key) | {"c", "p"})
        pooled.setdefault(key, [0.0, 0.0])
        pooled[key][0] += s
        pooled[key][1] += df
    assert set(pooled) == set(ours)
    for key, (s, df) in ours.items():
        assert s == pytest.approx(pooled[key][0], rel=1e-9), key
        assert df == pooled[key][1]


def test_variance_budget_two_way_design_matches_statsmodels_reml() -> None:
    # In a balanced design with every ANOVA estimate positive, REML's estimates equal ANOVA's (Searle, Casella &
    # McCulloch 1992, §6.8), and so does the variance of the intercept.
    import statsmodels.formula.api as smf

    y = simulate_table(np.random.default_rng(5), shape=(15, 1, 1, 5), sd={"C": 1.0, "J": 0.6, "E": 0.5})
    frame = _long(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ 1", frame, groups="g", vc_formula={"c": "0 + C(c)", "j": "0 + C(j)"}).fit(reml=True)
    budget = variance_budget(y)
    assert budget.components["C"] == pytest.approx(fit.vcomp[0], rel=1e-4)
    assert budget.components["J"] == pytest.approx(fit.vcomp[1], rel=1e-4)
    assert budget.components["CJ"] == pytest.approx(fit.scale, rel=1e-4)  # one judge result per case × run
    assert budget.total.se ** 2 == pytest.approx(fit.bse.iloc[0] ** 2, rel=1e-3)
    assert budget.components["P"] is None and budget.terms["route"] is None


def test_variance_budget_cases_only_interval_is_the_t_interval_of_case_means() -> None:
    y = simulate_table(np.random.default_rng(2), shape=(20, 2, 2, 2), sd={"C": 1.0, "P": 0.5, "E": 0.3})
    case_means = y.mean(axis=(1, 2, 3))
    low, high = scipy_stats.t.interval(0.95, 19, loc=case_means.mean(), scale=scipy_stats.sem(case_means))
    budget = variance_budget(y)
    assert (budget.cases_only.lower, budget.cases_only.upper) == pytest.approx((low, high), rel=1e-12)
    # The route effect is crossed with cases: case means share it, so the cases-only interval leaves it out.
    assert budget.total.se > budget.cases_only.se


def test_variance_budget_weights_give_the_weighted_mean_and_judge_error_moves_the_centre() -> None:
    y = simulate_table(np.random.default_rng(4), shape=(10, 1, 2, 2), sd={"C": 1.0, "E": 0.3})
    w = np.linspace(1, 3, 10)
    budget = variance_budget(y, case_weights=w, judge_error_var=0.01, judge_shift=0.2)
    assert budget.mean == pytest.approx(np.average(y.mean(axis=(1, 2, 3)), weights=w))
    assert budget.total.estimate == pytest.approx(budget.mean + 0.2)
    assert budget.terms["judge_error"] == 0.01
    assert sum(s for s in budget.shares.values() if s is not None) == pytest.approx(1.0)


def test_variance_budget_one_level_factors_are_not_estimable_and_say_so() -> None:
    y = simulate_table(np.random.default_rng(8), shape=(10, 1, 1, 1), sd={"C": 1.0})
    budget = variance_budget(y)
    assert budget.terms["route"] is None and budget.terms["judge_run"] is None and budget.terms["generation"] is None
    assert any("one provider route" in n for n in budget.notes)
    assert any("one judge run" in n for n in budget.notes)
    # With cases alone the total is today's cases-only figure (z vs t aside, both use n_c − 1 here).
    assert budget.total.se == pytest.approx(budget.cases_only.se)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"y": np.zeros((3, 2))}, "y:"),
    ({"y": np.zeros((1, 1, 1, 1))}, "y: at least 2 cases"),
    ({"y": np.full((3, 1, 1, 1), np.nan)}, "y: every cell"),
    ({"y": np.zeros((3, 1, 1, 1)), "case_weights": [1, 2]}, "case_weights"),
    ({"y": np.zeros((3, 1, 1, 1)), "judge_error_var": -1.0}, "judge_error_var"),
])
def test_variance_budget_refuses_bad_input_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        variance_budget(**kwargs)


def test_variance_budget_recovers_known_shares_and_covers() -> None:
    # A small version of benchmarks/variance_budget.py: the truth lives here, not in the code under test.
    shape = (40, 5, 2, 3)
    sd = {"C": 0.6, "P": 0.15, "CP": 0.2, "R(CP)": 0.6, "J": 0.1, "CJ": 0.2, "E": 0.5}
    judge_error_var = 0.001
    truth = true_terms(shape=shape, sd=sd, judge_error_var=judge_error_var)
    true_shares = np.array([truth[g] / sum(truth.values()) for g in GROUPS])
    rng = np.random.default_rng(20261126)
    shares, covered, covered_cases = [], 0, 0
    reps = 400
    for _ in range(reps):
        y = simulate_table(rng, shape=shape, sd=sd, mu=2.0)
        rectifier_error = rng.normal(0.0, math.sqrt(judge_error_var))  # the calibration's own sampling error
        budget = variance_budget(y, judge_error_var=judge_error_var, judge_shift=-rectifier_error)
        shares.append([budget.shares[g] for g in GROUPS])
        covered += budget.total.lower <= 2.0 <= budget.total.upper
        covered_cases += budget.cases_only.lower <= 2.0 <= budget.cases_only.upper
    assert np.max(np.abs(np.mean(shares, axis=0) - true_shares)) <= 0.05
    assert covered / reps >= 0.93
    assert covered_cases / reps < 0.90  # the cases-only interval is too narrow here: the budget matters
