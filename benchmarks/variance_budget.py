"""Variance budget with known components: share recovery and coverage of the total interval (issue 26 item 3).

Each repetition draws a table of scores from the random-effects model of ``stats/variance_budget.py``
(case × provider route × generation repetition nested in case × route × judge run, every component normal with the
standard deviations below) plus an independent judge-error draw for the expert calibration's correction (a
rectifier with known variance; the budget is told that variance and the drawn shift, as the calibrated leaderboard
tells it PPI's). The true mean is 2.0. Per design it prints the true share of each budget line, the mean estimated
share over repetitions and its largest error, the median per-repetition absolute error (how far one table's budget
can be from the truth), the coverage of the 95 % total interval and of today's cases-only interval, and the mean
width ratio total ÷ cases-only.

Designs: "main" (100 cases, 6 routes, 3 repetitions, 4 judge runs: every line present), "minimal" (40 cases, 2
routes, 2 repetitions, 2 judge runs: the smallest design with every line estimable), "case-heavy" (300 cases, 3
routes, 2 repetitions, 2 judge runs, case variance dominant — where today's interval is nearly right).

The last line, ``variance_budget: share_err_max=E coverage=C cases_only_coverage=K``: E = the largest error of a
mean share on "main"; C = the lowest total-interval coverage over all designs; K = the cases-only coverage on "main".
Run: ``python benchmarks/variance_budget.py [--quick] [--reps N] [--seed S]``.
"""
from __future__ import annotations

import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from benchmarks.kit import repetitions_args  # noqa: E402
from stats.variance_budget import GROUPS, simulate_table, true_terms, variance_budget  # noqa: E402

MU = 2.0
DESIGNS: dict[str, tuple[tuple[int, int, int, int], dict[str, float], float]] = {
    "main": ((100, 6, 3, 4),
             {"C": 0.6, "P": 0.12, "CP": 0.2, "R(CP)": 0.6, "J": 0.08, "CJ": 0.2, "PJ": 0.05, "E": 0.5}, 0.0006),
    "minimal": ((40, 2, 2, 2),
                {"C": 0.6, "P": 0.1, "CP": 0.2, "R(CP)": 0.5, "J": 0.06, "CJ": 0.2, "E": 0.4}, 0.0005),
    "case-heavy": ((300, 3, 2, 2),
                   {"C": 0.8, "P": 0.03, "CP": 0.2, "R(CP)": 0.5, "J": 0.02, "CJ": 0.15, "E": 0.4}, 0.0002),
}


def run_design(name: str, reps: int, rng: np.random.Generator) -> dict[str, float]:
    shape, sd, judge_error_var = DESIGNS[name]
    truth = true_terms(shape=shape, sd=sd, judge_error_var=judge_error_var)
    true_shares = np.array([truth[g] / sum(truth.values()) for g in GROUPS])
    shares = np.empty((reps, len(GROUPS)))
    covered = covered_cases = 0
    ratios = np.empty(reps)
    start = time.perf_counter()
    for i in range(reps):
        y = simulate_table(rng, shape=shape, sd=sd, mu=MU)
        rectifier_error = rng.normal(0.0, math.sqrt(judge_error_var))
        budget = variance_budget(y, judge_error_var=judge_error_var, judge_shift=-rectifier_error)
        shares[i] = [budget.shares[g] or 0.0 for g in GROUPS]
        covered += budget.total.lower <= MU <= budget.total.upper
        covered_cases += budget.cases_only.lower <= MU <= budget.cases_only.upper
        ratios[i] = budget.width_ratio or math.nan
    seconds = time.perf_counter() - start
    mean_shares = shares.mean(axis=0)
    errors = np.abs(mean_shares - true_shares)
    median_rep_err = np.median(np.abs(shares - true_shares), axis=0)
    print(f"\n{name}: cases × routes × repetitions × judge runs = {' × '.join(map(str, shape))}, {reps} repetitions, "
          f"{seconds / reps * 1000:.1f} ms per budget")
    print(f"  {'line':<12} {'true':>6} {'mean est':>9} {'error':>6} {'median |err| per table':>23}")
    for k, group in enumerate(GROUPS):
        print(f"  {group:<12} {true_shares[k]:6.3f} {mean_shares[k]:9.3f} {errors[k]:6.3f} {median_rep_err[k]:23.3f}")
    coverage = covered / reps
    cases_coverage = covered_cases / reps
    print(f"  coverage: total {coverage:.3f}, cases-only {cases_coverage:.3f}; "
          f"width total ÷ cases-only {np.nanmean(ratios):.2f}")
    return {"share_err_max": float(errors.max()), "coverage": coverage, "cases_only_coverage": cases_coverage}


def main() -> None:
    reps, args = repetitions_args(__doc__, quick=500, full=2000, seed=20261126)  # per design
    rng = np.random.default_rng(args.seed)
    results = {name: run_design(name, reps, rng) for name in DESIGNS}
    print(f"\nvariance_budget: share_err_max={results['main']['share_err_max']:.3f} "
          f"coverage={min(r['coverage'] for r in results.values()):.3f} "
          f"cases_only_coverage={results['main']['cases_only_coverage']:.3f}")


if __name__ == "__main__":
    main()
