"""A study's report at a realistic size: build, long CSV and PDF of a HANNA-sized study and a larger one.

HANNA (Chhun et al. 2022): 1,056 stories × 6 criteria × 3 human raters on 1–5; here with 3 LLM judges as raters
too and two rater groups. The larger one: 5,000 items × 6 dimensions × 5 humans + 3 judges. Everything a study
snapshot computes except the database read (`calibration.studies.report`, `.pdf`), 1,000 bootstrap resamples.
Goal (ours): a study snapshot of HANNA's size within 30 s on 2 cores, so the worker answers in the time a lead
waits on a page. Run: `python benchmarks/study_report.py [--resamples N]`.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import django  # noqa: E402

django.setup()

from calibration.studies.pdf import study_report_pdf  # noqa: E402
from calibration.studies.report import (  # noqa: E402
    DimensionInfo,
    StudyProvenance,
    StudyRow,
    study_ratings_csv,
    study_report_build,
    study_tables_csv,
)

GOAL_SECONDS = 30.0


def rows_for(items: int, dimensions: int, humans: int, judges: int, seed: int = 5) -> list[StudyRow]:
    rng = np.random.default_rng(seed)
    out = []
    for d in range(dimensions):
        truth = rng.normal(size=items)
        for h in range(humans):
            scores = np.clip(np.round(3 + truth + rng.normal(scale=0.9, size=items)), 1, 5)
            out += [StudyRow(f"story-{i}", f"criterion-{d}", f"human-{h}", "human", float(s), "A" if h % 2 else "B")
                    for i, s in enumerate(scores) if rng.random() > 0.05]
        for j in range(judges):
            scores = np.clip(np.round(3.3 + truth + rng.normal(scale=0.7 + 0.3 * j, size=items)), 1, 5)
            out += [StudyRow(f"story-{i}", f"criterion-{d}", f"judge-{j}", "judge", float(s)) for i, s in enumerate(scores)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    print(f"study report build, {args.resamples} resamples, load average {os.getloadavg()[0]:.1f}")
    for label, (items, dims, humans, judges) in (("HANNA-sized", (1056, 6, 3, 3)), ("large", (5000, 6, 5, 3))):
        rows = rows_for(items, dims, humans, judges)
        dimensions = [DimensionInfo(f"criterion-{d}", "ordinal", 1, 5) for d in range(dims)]
        started = time.perf_counter()
        ratings = study_ratings_csv(study="bench", rows=rows)
        report = study_report_build(rows, dimensions=dimensions, n_resamples=args.resamples, seed=1,
                                    meta=StudyProvenance(study="bench", study_id=1, source="synthetic"))
        built = time.perf_counter()
        tables = study_tables_csv(report)
        pdf = study_report_pdf(report, version=1, input_hash="0" * 64)
        done = time.perf_counter()
        total = done - started
        print(f"  {label:<12} {items:>5} items × {dims} dims × {humans} humans + {judges} judges = {len(rows):,} ratings: "
              f"build {built - started:5.1f} s, files {done - built:4.1f} s (ratings.csv {len(ratings) / 1e6:.1f} MB, "
              f"tables {len(tables) / 1e3:.0f} kB, PDF {len(pdf) / 1e3:.0f} kB), total {total:5.1f} s"
              + (f" — {total / GOAL_SECONDS:.2f} of the {GOAL_SECONDS:.0f} s goal" if label == "HANNA-sized" else ""))
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
