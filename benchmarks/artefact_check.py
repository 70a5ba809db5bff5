"""Benchmark: the artefact checker on generated study reports — failures count and the check's cost.

Run from the repository root:
    .venv/bin/python benchmarks/artefact_check.py --quick     # 20 studies; without --quick: 200 (issue 32's goal)

Each generated study (random items, human raters, judges, scale, level, noise, regular shifts between raters,
rater groups) goes through the real builder (`study_report_build`, 200 resamples) and renderers
(`study_files_render`: JSON, CSV, PDF, ratings.csv, bundle with README.txt), then through the kind's check
(`study_check`). No database. Prints every failure, then one line:
    artefact_check: kind=study artefacts=N failures=F compute_s=C check_s=K ratio=R   (ratio = check / compute;
    issue 32's goal ≤ 0.10)
`--resamples` sets the bootstrap size (default 200; a study snapshot uses 1,000 by default).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


@dataclass(frozen=True)
class StudyDesign:
    """One generated study: sizes, scale, level, how noisy and how regular its raters are."""

    n_items: int
    n_humans: int
    n_judges: int
    n_categories: int
    level: str
    noise: float
    shift: int  # rater j rates (truth + shift · j) mod q before noise: 0 agrees, 1 disagrees regularly
    groups: bool
    seed: int


def study_design_random(seed: int) -> StudyDesign:
    """A random design (the benchmark's; the property test draws its own with hypothesis)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return StudyDesign(n_items=int(rng.integers(3, 41)), n_humans=int(rng.integers(2, 6)),
                       n_judges=int(rng.integers(0, 3)), n_categories=int(rng.integers(2, 6)),
                       level=str(rng.choice(["nominal", "ordinal", "interval"])), noise=float(rng.uniform(0, 0.6)),
                       shift=int(rng.choice([0, 0, 1, 2])), groups=bool(rng.random() < 0.4), seed=seed)


def study_rows_generate(design: StudyDesign) -> list:
    """The study's long rows (`StudyRow`s) for a design, on a 1…q scale."""
    import numpy as np

    from calibration.studies.report import StudyRow

    rng = np.random.default_rng(design.seed)
    q = design.n_categories
    truth = rng.integers(0, q, design.n_items)
    rows = []
    for item in range(design.n_items):
        for j in range(design.n_humans):
            value = (truth[item] + design.shift * j) % q if rng.random() >= design.noise else rng.integers(0, q)
            group = ("A" if j % 2 else "B") if design.groups else ""
            rows.append(StudyRow(f"it-{item}", "fluency", f"h{j}", "human", float(value + 1), group))
        for j in range(design.n_judges):
            value = truth[item] if rng.random() >= design.noise else rng.integers(0, q)
            rows.append(StudyRow(f"it-{item}", "fluency", f"judge-{j}", "judge", float(value + 1)))
    return rows


def study_artefact(design: StudyDesign, *, n_resamples: int = 200) -> tuple[dict[str, bytes], float]:
    """Every file of a study snapshot for a design, through the real builder and renderers; and the seconds taken."""
    from calibration.studies.report import (
        DimensionInfo,
        StudyDimensionMeta,
        StudyProvenance,
        study_ratings_csv,
        study_report_build,
    )
    from calibration.studies.snapshots import study_files_render
    from evidence.models import Snapshot

    started = time.perf_counter()
    rows = study_rows_generate(design)
    dimension = DimensionInfo("fluency", design.level, 1.0, float(design.n_categories))
    ratings = study_ratings_csv(study=f"generated-{design.seed}", rows=rows)
    input_hash = hashlib.sha256(ratings).hexdigest()
    meta = StudyProvenance(study=f"generated-{design.seed}", study_id=design.seed, source="generated",
                           dimensions=[StudyDimensionMeta("fluency", design.level, 1.0, float(design.n_categories))])
    report = study_report_build(rows, dimensions=[dimension], n_resamples=n_resamples, seed=design.seed, meta=meta)
    files = study_files_render(report=report, ratings=ratings, snapshot=Snapshot(version=1, subject=str(design.seed)),
                               input_hash=input_hash)
    return files, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 studies instead of 200")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    import django

    django.setup()
    from calibration.studies.checks import study_check
    from evidence.models import Snapshot

    count = args.count or (20 if args.quick else 200)
    failures = 0
    compute_s = check_s = 0.0
    for seed in range(count):
        design = study_design_random(seed)
        files, seconds = study_artefact(design, n_resamples=args.resamples)
        compute_s += seconds
        started = time.perf_counter()
        problems = study_check(Snapshot(kind=Snapshot.Kind.STUDY_REPORT), files)
        check_s += time.perf_counter() - started
        if problems:
            failures += 1
            print(f"FAIL {design}: {[str(p) for p in problems][:3]}")
    print(f"artefact_check: kind=study artefacts={count} failures={failures} compute_s={compute_s:.2f} "
          f"check_s={check_s:.2f} ratio={check_s / compute_s:.3f}")


if __name__ == "__main__":
    main()
