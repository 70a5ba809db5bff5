"""Interval α on continuous data: time and peak memory at 10,000 units × 10 raters (goal < 2 s, < 200 MB).

Continuous scores have (almost) as many distinct values as ratings. The coincidence form of α needs a
units × values table and values × values coincidences (1.8 GiB at 300 units × 3 raters before the change);
``stats.alpha`` computes such data from sums over value pairs within units instead (memory O(units × raters)).
Run: `python benchmarks/alpha_memory.py [--units N] [--raters K] [--level interval|ordinal|nominal]`.
Peak memory is tracemalloc's peak over the computation (numpy reports its array buffers to tracemalloc),
printed beside the process's peak RSS.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats.alpha import krippendorff_alpha  # noqa: E402

GOAL_SECONDS = 2.0
GOAL_MB = 200.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=10)
    parser.add_argument("--level", default="interval", choices=["interval", "ordinal", "nominal"])
    args = parser.parse_args()
    rng = np.random.default_rng(12)
    data = rng.normal(size=(1, args.units)) + rng.normal(scale=0.8, size=(args.raters, args.units))
    data[rng.random(data.shape) < 0.1] = np.nan  # 10 % missing
    krippendorff_alpha(data[:, :50], args.level)  # import and warm-up outside the measurement
    tracemalloc.start()
    start = time.perf_counter()
    result = krippendorff_alpha(data, args.level)
    elapsed = time.perf_counter() - start
    grown = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    distinct = np.unique(data[~np.isnan(data)]).size
    print(f"alpha_memory: {args.units} units × {args.raters} raters, {distinct} distinct values, level {args.level}")
    print(f"  alpha {result.alpha:.4f}  time {elapsed:.3f} s (goal < {GOAL_SECONDS:.0f} s, ratio {elapsed / GOAL_SECONDS:.2f})"
          f"  peak memory {grown:.1f} MB (goal < {GOAL_MB:.0f} MB, ratio {grown / GOAL_MB:.2f}); "
          f"process peak RSS {peak_rss_mb():.0f} MB")
    if elapsed >= GOAL_SECONDS or grown >= GOAL_MB:
        print("  GOAL MISSED")


if __name__ == "__main__":
    main()
