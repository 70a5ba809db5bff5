"""α on continuous data: time and peak memory of the point estimate and of the bootstrap interval.

Continuous scores have (almost) as many distinct values as ratings. The coincidence form of α needs a units ×
values × values array (29.8 GiB at 1,000 units × 2 raters; 186 GiB for the bootstrap at 1,000 × 5); ``stats``
computes interval and ratio α, and their unit bootstrap, from per-unit sums instead (``stats.alpha_continuous``).

Cases (each in a fresh process, so one case's memory does not count in the next):
* ``point``: ``krippendorff_alpha`` at 10,000 units × 10 raters (goal < 2 s, < 200 MB);
* ``summary``: ``reliability_summary`` (what ``manage.py irr`` and the reports run) with 1,000 resamples;
* ``bootstrap``: ``stats.intervals.agreement_interval`` (α) with 1,000 resamples;
* ``irr``: ``manage.py irr FILE --level interval`` on a 1,000 × 2 CSV, end to end (the issue's acceptance);
at 1,000 × 2 and 10,000 × 10, goal < 10 s and < 500 MB each.
Run: ``python benchmarks/alpha_memory.py`` (all), or ``--units N --raters K --level L --case C`` for one.
Time is judged on CPU seconds (process time; for ``irr`` the child's user + system time), printed beside wall
time and the load average: on a shared machine wall time mostly measures the other processes.
Peak memory is tracemalloc's peak over the computation (numpy reports its array buffers to tracemalloc), printed
beside the process's peak RSS (which includes the interpreter and imported libraries, ~100 MB).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOALS = {"point": (2.0, 200.0), "summary": (10.0, 500.0), "bootstrap": (10.0, 500.0), "irr": (10.0, 500.0)}
SUITE = [
    ("point", 10_000, 10, "interval"),
    ("summary", 1_000, 2, "interval"),
    ("summary", 10_000, 10, "interval"),
    ("bootstrap", 1_000, 2, "interval"),
    ("bootstrap", 10_000, 10, "interval"),
    ("irr", 1_000, 2, "interval"),
    ("summary", 1_000, 2, "ratio"),
    ("bootstrap", 1_000, 5, "ratio"),
]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def continuous_data(units: int, raters: int, level: str) -> np.ndarray:
    rng = np.random.default_rng(12)
    data = rng.normal(size=(1, units)) + rng.normal(scale=0.8, size=(raters, units))
    if level == "ratio":
        data = np.exp(data)  # a true zero, positive values
    data[rng.random(data.shape) < 0.1] = np.nan  # 10 % missing
    return data


def run_case(case: str, units: int, raters: int, level: str) -> None:
    """Measure one case in this process and print one line."""
    data = continuous_data(units, raters, level)
    distinct = np.unique(data[~np.isnan(data)]).size
    if case == "irr":
        measure_irr(data, units, raters, level, distinct)
        return
    from stats.alpha import krippendorff_alpha
    from stats.intervals import agreement_interval
    from stats.reliability import reliability_summary

    def compute(matrix: np.ndarray) -> tuple[float | None, list[float] | None]:
        if case == "point":
            return krippendorff_alpha(matrix, level).alpha, None  # type: ignore[arg-type]
        if case == "bootstrap":
            result = agreement_interval(matrix, level=level, n_resamples=1000, seed=1)  # type: ignore[arg-type]
            return result.estimate, None if result.interval is None else list(result.interval)
        summary = reliability_summary(matrix, level=level, n_resamples=1000, seed=1)  # type: ignore[arg-type]
        return summary["krippendorff_alpha"], summary["alpha_ci"]

    compute(data[:, :50])  # imports and warm-up outside the measurement
    tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    alpha, ci = compute(data)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    grown = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    report(case, units, raters, level, distinct, alpha, ci, cpu, elapsed, grown,
           f"process peak RSS {peak_rss_mb():.0f} MB")


def measure_irr(data: np.ndarray, units: int, raters: int, level: str, distinct: int) -> None:
    """``manage.py irr`` in a child process: wall time and the child's peak RSS (the whole process)."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "continuous.csv"
        rows = [f"u{u},r{r},{float(data[r, u])!r}\n" for r in range(raters) for u in range(units)
                if not np.isnan(data[r, u])]
        path.write_text("unit,rater,value\n" + "".join(rows))
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "manage.py", "irr", str(path), "--level", level, "--seed", "1",
                               "--format", "json"], cwd=REPO, capture_output=True, text=True, check=True,
                              env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
        elapsed = time.perf_counter() - start
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(done.stdout)
    report("irr", units, raters, level, distinct, out["krippendorff_alpha"], out["alpha_ci"],
           child.ru_utime + child.ru_stime, elapsed, child.ru_maxrss / 1024.0,
           "whole process incl. Django start-up, peak RSS")


def report(case: str, units: int, raters: int, level: str, distinct: int, alpha: float | None,
           ci: list[float] | None, cpu: float, wall: float, memory_mb: float, memory_note: str) -> None:
    goal_s, goal_mb = GOALS[case]
    load = os.getloadavg()[0]
    interval = "no interval" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"
    shown = "undefined" if alpha is None else f"{alpha:.4f}"
    print(f"alpha_memory {case:9s} {units:>6} units × {raters:>2} raters, {distinct:>6} distinct, {level:8s} "
          f"alpha {shown} {interval}  CPU {cpu:.2f} s (goal < {goal_s:.0f} s, ratio {cpu / goal_s:.2f}; wall {wall:.2f} s "
          f"at load {load:.1f} on {os.cpu_count()} cores)  "
          f"peak {memory_mb:.1f} MB (goal < {goal_mb:.0f} MB, ratio {memory_mb / goal_mb:.2f}; {memory_note})"
          + ("  GOAL MISSED" if cpu >= goal_s or memory_mb >= goal_mb or ci is None and case != "point" else ""),
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--case", choices=sorted(GOALS))
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=10)
    parser.add_argument("--level", default="interval", choices=["interval", "ratio", "ordinal", "nominal"])
    args = parser.parse_args()
    if args.case:
        run_case(args.case, args.units, args.raters, args.level)
        return
    for case, units, raters, level in SUITE:  # one process per case: independent peak memory
        subprocess.run([sys.executable, __file__, "--case", case, "--units", str(units), "--raters", str(raters),
                        "--level", level], check=True)


if __name__ == "__main__":
    main()
