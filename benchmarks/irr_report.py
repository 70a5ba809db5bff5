"""Benchmark: the full stats-level IRR report on 12,000 units × 5 raters × 4 sub-dimensions of 0–3 ratings.

Run from the repository root:  .venv/bin/python benchmarks/irr_report.py  [--seed N] [--naive-replicates N]

Prints, per sub-dimension, Krippendorff's α (ordinal) with a 1,000-resample percentile bootstrap CI
(stratified by difficulty), P(α < 0.667), percent and within-one agreement, Fleiss' κ, Gwet's AC1/AC2 and
leave-one-rater-out α; then the wall time of the whole report, and the speed of the bootstrap against the
naive approach (``krippendorff.alpha`` once per replicate on resampled data), both measured in this run:
the naive one on a few replicates, extrapolated per replicate.
"""
from __future__ import annotations

import time

_PROCESS_START = time.perf_counter()  # before the numpy / scikit-learn / scipy imports

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402

from stats.intervals import agreement_interval  # noqa: E402
from stats.reliability import reliability_summary  # noqa: E402

N_UNITS, N_RATERS, RESAMPLES = 12_000, 5, 1_000
SCALE = [0, 1, 2, 3]
# rater noise per textual sub-dimension: α from about .75 (clear criteria) down to about .55, around the .667 bar
SUB_DIMENSIONS = {
    "lexicalAccuracy": 0.38,
    "translationFidelity": 0.48,
    "linguisticReasoning": 0.58,
    "sourceHandling": 0.72,
}
DIFFICULTIES = np.array(["easy", "medium", "hard", "expert"])


def simulate(seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Return {sub-dimension: raters × units matrix of 0–3 ratings, 4 % missing} and each unit's difficulty."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, N_UNITS)  # a response's overall quality, shared by its sub-dimensions
    difficulty = rng.choice(DIFFICULTIES, size=N_UNITS, p=[0.3, 0.3, 0.25, 0.15])
    shift = {"easy": 0.35, "medium": 0.0, "hard": -0.3, "expert": -0.5}
    level = 1.5 + np.vectorize(shift.get)(difficulty)
    severity = rng.normal(0.0, 0.15, N_RATERS)  # lenient and strict raters
    data = {}
    for name, noise in SUB_DIMENSIONS.items():
        latent = 0.8 * quality + 0.45 * rng.normal(0.0, 1.0, N_UNITS)
        ratings = level + latent + severity[:, None] + rng.normal(0.0, noise, (N_RATERS, N_UNITS))
        matrix = np.clip(np.rint(ratings), 0, 3)
        matrix[rng.random(matrix.shape) < 0.04] = np.nan
        data[name] = matrix
    return data, difficulty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--naive-replicates", type=int, default=20)
    args = parser.parse_args()

    start = time.perf_counter()
    data, difficulty = simulate(args.seed)
    generated = time.perf_counter()
    print(f"IRR report: {N_UNITS:,} units × {N_RATERS} raters × {len(data)} sub-dimensions, 0–3, ordinal alpha, "
          f"{RESAMPLES:,} bootstrap resamples stratified by difficulty (seed {args.seed})")
    print(f"{'sub-dimension':<20} {'alpha':>6} {'95% CI':>16} {'P(<.667)':>8} {'agree':>6} {'±1':>6} "
          f"{'Fleiss':>6} {'AC1':>6} {'AC2 lin':>7} {'AC2 quad':>8}  worst rater (change)")
    streams = np.random.SeedSequence(args.seed).spawn(len(data))
    for (name, matrix), stream in zip(data.items(), streams, strict=True):
        s = reliability_summary(
            matrix, level="ordinal", categories=SCALE, rater_labels=[f"r{i + 1}" for i in range(N_RATERS)],
            n_resamples=RESAMPLES, strata=list(difficulty), seed=np.random.default_rng(stream),
        )
        low, high = s["alpha_ci"]
        worst = max(s["leave_one_rater_out"], key=lambda r: r["change"])
        print(f"{name:<20} {s['krippendorff_alpha']:6.3f} [{low:6.3f}, {high:6.3f}] "
              f"{s['alpha_below_min_probability']:8.3f} {s['percent_agreement']:6.3f} "
              f"{s['within_one_agreement']:6.3f} {s['fleiss_kappa']:6.3f} {s['gwet_ac1']:6.3f} "
              f"{s['gwet_ac2']['linear']:7.3f} {s['gwet_ac2']['quadratic']:8.3f}  "
              f"{worst['rater']} ({worst['change']:+.3f})")
    finished = time.perf_counter()
    print(f"wall time: {finished - start:.2f} s for data and the four reports ({generated - start:.2f} s "
          f"generating data); {finished - _PROCESS_START:.2f} s since the process started, imports included")

    # Speed: the same α bootstrap (unstratified, one sub-dimension) both ways, measured now.
    matrix = data["linguisticReasoning"]
    t0 = time.perf_counter()
    fast = agreement_interval(matrix, level="ordinal", categories=SCALE, n_resamples=RESAMPLES, seed=1)
    fast_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(2)
    t0 = time.perf_counter()
    naive = [
        krippendorff.alpha(
            reliability_data=matrix[:, rng.integers(0, N_UNITS, N_UNITS)], value_domain=SCALE,
            level_of_measurement="ordinal",
        )
        for _ in range(args.naive_replicates)
    ]
    naive_seconds = time.perf_counter() - t0
    fast_per, naive_per = fast_seconds / RESAMPLES, naive_seconds / args.naive_replicates
    print(f"bootstrap, this code: {RESAMPLES:,} replicates in {fast_seconds * 1000:.1f} ms "
          f"({fast_per * 1e6:.1f} µs per replicate, incl. the point estimate); "
          f"CI [{fast.low:.3f}, {fast.high:.3f}]")
    print(f"bootstrap, krippendorff.alpha per replicate: {args.naive_replicates} replicates in "
          f"{naive_seconds * 1000:.1f} ms ({naive_per * 1000:.2f} ms per replicate → "
          f"~{naive_per * RESAMPLES:.1f} s for {RESAMPLES:,}); replicate SD {np.std(naive):.4f} "
          f"vs {np.nanstd(fast.replicates):.4f}")
    print(f"speed-up: {naive_per / fast_per:,.0f}×")


if __name__ == "__main__":
    main()
