"""Benchmark: build the calibrated leaderboard at production size — goal < 2 s.

Run from the repository root:
    .venv/bin/python benchmarks/calibrated_snapshot.py            # options: --repeat N (default 5)

12,000 judged responses (8 models × 1,500, 6 dimensions, 5 traditions, 4 difficulties) of which 1,000 are
expert-labelled with recorded inclusion probabilities; one model's judge inflated by 0.1. Times, median of
--repeat: the builder (`calibrated_leaderboard_build`: judge-only bootstraps with 1,000 resamples per cell,
stratified PPI++ per model × cell, shifts, gold-only sensitivity, rank sets, evidence meter) and the files
(inputs.csv, report.json, tables.csv, PDF, zip bundle). No database: the selector's reading is one query per
table (timed by the snapshot tests, not here). Last line:
    calibrated_snapshot: build_s=B files_s=F goal_s=2.0 ratio=R   (ratio = goal / (build + files); ≥ 1 meets it)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

GOAL_SECONDS = 2.0
DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
TRADITIONS = ["catholic", "orthodox", "reformed", "evangelical", "none"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]


def rows_build(seed: int = 0, models: int = 8, per_model: int = 1500, labelled: int = 1000) -> list:
    import numpy as np

    from calibration.calibrated.build import InputRow

    rng = np.random.default_rng(seed)
    share = labelled / (models * per_model)
    rows, rid = [], 0
    for m in range(models):
        for i in range(per_model):
            rid += 1
            truth = float(np.clip(0.4 + 0.04 * m + rng.normal(0, 0.15), 0, 1))
            judge = float(np.clip(truth + (0.1 if m == 3 else 0.0) + rng.normal(0, 0.1), 0, 1))
            is_labelled = rng.random() < share
            rows.append(InputRow(
                response_id=rid, model=f"vendor/model-{m}", family="gpt" if m == 3 else f"family{m}",
                dimension=DIMENSIONS[i % 6], tradition=TRADITIONS[i % 5], difficulty=DIFFICULTIES[i % 4],
                judge=round(judge, 6), expert=round(truth, 6) if is_labelled else None,
                expert_gold=round(truth, 6) if is_labelled and rng.random() < 0.3 else None,
                inclusion_probability=share if is_labelled else None, inclusion_basis="drawn" if is_labelled else "",
                n_raters=3 if is_labelled else 0))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import django

    django.setup()
    from calibration.calibrated.build import Options, calibrated_leaderboard_build
    from calibration.calibrated.checks import calibrated_check
    from calibration.calibrated.files import files_render, inputs_csv
    from evidence.models import Snapshot

    rows = rows_build()
    options = Options(seconds_per_item=300.0, judge_families=("gpt",))
    builds, renders, checks = [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        report = calibrated_leaderboard_build(rows, options)
        builds.append(time.perf_counter() - start)
        start = time.perf_counter()
        data = inputs_csv(rows)
        files = files_render(report=report, inputs=data, title="benchmark", version=1, input_hash="0" * 64,
                             context={"run": 1, "judge": "judge", "cycle": "cycle", "cycle_id": 1})
        renders.append(time.perf_counter() - start)
        start = time.perf_counter()
        problems = calibrated_check(Snapshot(kind=Snapshot.Kind.CALIBRATED), files)  # issue 32's artefact check
        checks.append(time.perf_counter() - start)
    build, render = statistics.median(builds), statistics.median(renders)
    labelled = sum(r.expert is not None for r in rows)
    print(f"{len(rows):,} judged responses, {labelled:,} expert-labelled, 8 models × 6 dimensions × 5 traditions")
    print(f"build   median {build:.3f} s (min {min(builds):.3f}, max {max(builds):.3f}) over {args.repeat}")
    print(f"files   median {render:.3f} s (min {min(renders):.3f}, max {max(renders):.3f})")
    print(f"statements: {len(report.statements)}; first: {report.statements[:1]}")
    check = statistics.median(checks)
    print(f"artefact check median {check:.3f} s ({len(problems)} problems): adds {check / (build + render):.1%} to "
          "build + files (goal ≤ 10 %)")
    print(f"calibrated_snapshot: build_s={build:.3f} files_s={render:.3f} goal_s={GOAL_SECONDS} "
          f"ratio={GOAL_SECONDS / (build + render):.2f}")


if __name__ == "__main__":
    main()
