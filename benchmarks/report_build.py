"""Benchmark: build the calibration report of the demo cycle and of a 60-rater synthetic cycle.

Run from the repository root:
    .venv/bin/python benchmarks/report_build.py              # options: --repeat N, --resamples N, --no-demo

1. The demo cycle: a throwaway SQLite database gets the whole demo (cases, responses, the offline judge
   run, experts, panels, the cycle, scores and gold decisions); then reading the rows and
   `calibration_report_build` with 1,000 resamples — what a snapshot computes — is timed. Goal: < 1 s.
2. The synthetic cycle of `tests/calibration/synthetic.py`: 6 dimensions × 8 traditions × 7 items,
   60 raters in 8 panels (9,280 ratings on 1,344 units), 1,000 resamples. Goal: < 5 s on 2 cores.
3. The old path measured in the same run: every group's pairwise κ with one scikit-learn call per
   rater pair (`stats.kappa.cohen_kappa`, as `pairwise_kappas` did before) against the confusion
   tensor of `stats.pairwise`, on the very matrices the build passes; both must give the same numbers.
   Then the whole synthetic build once more with the per-pair path swapped in.

Times are wall-clock medians of --repeat runs, with the process CPU time beside them (numpy's BLAS may
use both cores, so CPU can exceed wall time). The demo set-up uses the test settings (fast password
hashing); nothing timed hashes a password.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks.kit import demo_load, django_setup, throwaway_database  # noqa: E402
from calibration.reports.schema import PairwiseKappa  # noqa: E402


def per_pair_kappas(data: np.ndarray, raters: list[str]) -> list[PairwiseKappa]:
    """The old `pairwise_kappas`: one scikit-learn call per pair of raters (kept here as the reference)."""
    from stats.kappa import cohen_kappa
    from stats.matrix import UndefinedCoefficientError

    pairs: list[PairwiseKappa] = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            both = ~np.isnan(data[i]) & ~np.isnan(data[j])
            n = int(both.sum())
            if n < 2:
                continue
            try:
                kappa: float | None = cohen_kappa(data[i], data[j], [0, 1, 2, 3], "quadratic")
            except UndefinedCoefficientError:
                kappa = None
            pairs.append(PairwiseKappa(raters=[raters[i], raters[j]], n_units=n, quadratic_kappa=kappa,
                                       exact_agreement=float(np.mean(data[i][both] == data[j][both]))))
    return pairs


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Median wall time, median CPU time and the last result of `repeat` calls."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--no-demo", action="store_true", help="skip the demo cycle (no database needed)")
    args = parser.parse_args()

    database = throwaway_database(None, prefix="report-bench")
    django_setup(database)
    try:
        run(args)
    finally:
        from django.db import connection

        connection.close()
        database.drop()


def run(args: argparse.Namespace) -> None:
    """The timings; the database is the throwaway SQLite file set up by main."""
    from calibration.cycles.ratings import judge_run_for_cycle, report_inputs
    from calibration.reports import build
    from tests.calibration.synthetic import synthetic_cycle

    def cycle_report(*, cycle, n_resamples):
        """Read the cycle's rows, then build: what a snapshot computes (before rendering its files)."""
        run = judge_run_for_cycle(cycle=cycle)
        inputs = report_inputs(cycle=cycle, run=run)
        report = build.calibration_report_build(inputs.ratings, judge=inputs.judge, gold=inputs.gold,
                                                units=inputs.units, n_resamples=n_resamples, seed=20260101)
        return report, inputs, run

    print(f"calibration report build, {args.resamples:,} bootstrap resamples, median of {args.repeat} runs "
          f"(wall; process CPU in brackets)")
    if not args.no_demo:
        cycle = demo_load()
        wall, cpu, (report, inputs, _) = timed(lambda: cycle_report(cycle=cycle, n_resamples=args.resamples),
                                               args.repeat)
        print(f"demo cycle            {len(inputs.units):>5} units {len(inputs.ratings):>6} ratings "
              f"{report.n_experts:>3} experts {len(report.groups):>3} groups   "
              f"{wall:6.2f} s [{cpu:5.2f} s]   goal < 1 s: ratio {wall / 1.0:.2f}")

    synthetic = synthetic_cycle()
    wall, cpu, report = timed(lambda: synthetic.report(n_resamples=args.resamples), args.repeat)
    print(f"synthetic 60 raters   {len(synthetic.units):>5} units {len(synthetic.ratings):>6} ratings "
          f"{report.n_experts:>3} experts {len(report.groups):>3} groups   "
          f"{wall:6.2f} s [{cpu:5.2f} s]   goal < 5 s: ratio {wall / 5.0:.2f}")

    # The matrices the build hands to pairwise_kappas, recorded during one build.
    recorded: list[tuple[np.ndarray, list[str]]] = []
    tensor_path = build.pairwise_kappas

    def recording(data: np.ndarray, raters: list[str]) -> list[PairwiseKappa]:
        recorded.append((data, raters))
        return tensor_path(data, raters)

    build.pairwise_kappas = recording
    try:
        synthetic.report(n_resamples=0)
    finally:
        build.pairwise_kappas = tensor_path
    n_pairs = sum(len(tensor_path(d, r)) for d, r in recorded)
    with threadpool_limits(limits=1, user_api="blas"):  # as inside calibration_report_build
        old_wall, old_cpu, old = timed(lambda: [per_pair_kappas(d, r) for d, r in recorded], 1)
        new_wall, new_cpu, new = timed(lambda: [tensor_path(d, r) for d, r in recorded], args.repeat)
    kappas = [(a.quadratic_kappa, b.quadratic_kappa) for old_group, new_group in zip(old, new, strict=True)
              for a, b in zip(old_group, new_group, strict=True)]
    differences = [abs(a - b) for a, b in kappas if a is not None and b is not None]
    same_pairs = all((a is None) == (b is None) for a, b in kappas) and all(
                     [(a.raters, a.n_units, a.exact_agreement) for a in og]
                     == [(b.raters, b.n_units, b.exact_agreement) for b in ng]
                     for og, ng in zip(old, new, strict=True))
    print(f"pairwise κ, {len(recorded)} groups, {n_pairs:,} pairs with ≥ 2 common units:")
    print(f"  one scikit-learn call per pair   {old_wall:6.2f} s [{old_cpu:5.2f} s]")
    print(f"  one confusion tensor per group   {new_wall:6.3f} s [{new_cpu:5.3f} s]   "
          f"speed-up {old_wall / new_wall:,.0f}×; same pairs, counts and agreement: {same_pairs}; "
          f"max |Δκ| {max(differences):.1e}")

    build.pairwise_kappas = per_pair_kappas
    try:
        old_build, old_build_cpu, _ = timed(lambda: synthetic.report(n_resamples=args.resamples), 1)
    finally:
        build.pairwise_kappas = tensor_path
    print(f"synthetic build with the per-pair path swapped in   {old_build:6.2f} s [{old_build_cpu:5.2f} s]   "
          f"(this build is {old_build / wall:.1f}× faster)")


if __name__ == "__main__":
    main()
