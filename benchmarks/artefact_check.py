"""Benchmark: the artefact checker on generated study reports and calibrated boards — failures and the check's cost.

Run from the repository root:
    .venv/bin/python benchmarks/artefact_check.py --quick     # 20 of each kind; without --quick: 200 (issue 32's goal)
    # options: --kinds study,calibrated  --count N  --resamples N (default 200)

Each generated study (random items, human raters, judges, scale, level, noise, regular shifts between raters,
rater groups) goes through the real builder (`study_report_build`, 200 resamples) and renderers
(`study_files_render`: JSON, CSV, PDF, ratings.csv, bundle with README.txt), then through the kind's check
(`study_check`: report.json, tables.csv, the PDF's text, README.txt). Each generated judge run (2–5 models, 6–80
judged responses each, 5–60 % expert-labelled; `benchmarks/calibrated_snapshot.py`'s rows) goes through the
calibrated builder and renderers and `calibrated_check`. No database. Prints every failure, then per kind:
    artefact_check: kind=K artefacts=N failures=F compute_s=C check_s=K ratio=R   (ratio = check / compute;
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


@dataclass(frozen=True)
class BoardDesign:
    """One generated judge run for the calibrated board: models, judged responses per model, labelled share."""

    models: int
    per_model: int
    labelled: float
    seed: int


def board_design_random(seed: int) -> BoardDesign:
    """A random judge run (the benchmark's; the property test draws its own with hypothesis)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return BoardDesign(models=int(rng.integers(2, 6)), per_model=int(rng.integers(6, 80)),
                       labelled=float(rng.uniform(0.05, 0.6)), seed=seed)


def board_artefact(design: BoardDesign, *, n_resamples: int = 200) -> tuple[dict[str, bytes], float]:
    """Every file of a calibrated board for a generated judge run (`benchmarks/calibrated_snapshot.py`'s rows at a
    random size), through the real builder and renderers; and the seconds taken."""
    from benchmarks.calibrated_snapshot import rows_build
    from calibration.calibrated.build import Options, calibrated_leaderboard_build
    from calibration.calibrated.files import files_render, inputs_csv

    started = time.perf_counter()
    rows = rows_build(seed=design.seed, models=design.models, per_model=design.per_model,
                      labelled=max(1, int(design.labelled * design.models * design.per_model)))
    report = calibrated_leaderboard_build(rows, Options(n_resamples=n_resamples, seed=design.seed,
                                                        judge_families=("gpt",)))
    files = files_render(report=report, inputs=inputs_csv(rows), title="generated", version=1, input_hash="0" * 64,
                         context={"run": 1, "judge": "judge", "cycle": "cycle", "cycle_id": 1})
    return files, time.perf_counter() - started


def _run(kind: str, count: int, n_resamples: int) -> None:
    from calibration.calibrated.checks import calibrated_check
    from calibration.studies.checks import study_check
    from evidence.models import Snapshot

    failures = 0
    compute_s = check_s = 0.0
    for seed in range(count):
        design: StudyDesign | BoardDesign
        if kind == "study":
            design = study = study_design_random(seed)
            files, seconds = study_artefact(study, n_resamples=n_resamples)
            check = study_check
        else:
            design = board = board_design_random(seed)
            files, seconds = board_artefact(board, n_resamples=n_resamples)
            check = calibrated_check
        compute_s += seconds
        started = time.perf_counter()
        problems = check(Snapshot(), files)
        check_s += time.perf_counter() - started
        if problems:
            failures += 1
            print(f"FAIL {design}: {[str(p) for p in problems][:3]}")
    print(f"artefact_check: kind={kind} artefacts={count} failures={failures} compute_s={compute_s:.2f} "
          f"check_s={check_s:.2f} ratio={check_s / compute_s:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 studies instead of 200")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--kinds", default="study,calibrated", help="study, calibrated or both (comma-separated)")
    args = parser.parse_args()
    import django

    django.setup()
    count = args.count or (20 if args.quick else 200)
    for kind in args.kinds.split(","):
        _run(kind.strip(), count, args.resamples)

if __name__ == "__main__":
    main()
