"""Rater effects with a known truth: severities, flags, test–retest intervals and the fit time (issue 34).

Each replication simulates 12 experts × 300 responses × 4 sub-dimensions (0–3) from the many-facet graded model
(response quality θ ~ N(0, 1); severities ~ N(0, 0.4²); step difficulties ≈ −1.5, 0, 1.5 shifted per
sub-dimension). Every expert scores every response, in their own shuffled order over six weeks. Expert 0 is
careless (half of their scores uniformly random); experts 1 and 2 drift (their severity rises linearly by 1 logit
across their queue). 5 % of each expert's responses (15) are re-served at the end, blind, and re-scored (five independent re-serve
samples per expert, for a steadier coverage figure); the re-scorings are left out of the fit (never counted twice).

Printed: the correlation of estimated with true severities (mean over replications; true severity of a drifting
expert = the mean over their queue), the flags' detection rate (careless → "erratic", drifting → "drift") and
false-alarm rate (any erratic/muted/drift flag on the other 9 experts), how often severe/lenient flags fall on
experts whose true |severity| < 0.25, the coverage of the 95 % test–retest intervals (exact agreement and
quadratic κ) for the 9 stable experts against the population value, and the fit time of 60 experts × 5,000
responses × 4 sub-dimensions, fully crossed (1.2 M ratings; goal < 10 s).

Run: ``python benchmarks/rater_effects.py [--quick] [--reps N] [--seed S]``. The last line is
``raters: severity_r=R flag_recall=P false_alarm=F retest_coverage=C`` (C: exact agreement's interval).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.kit import repetitions_args  # noqa: E402
from stats.raters import facets_fit, rater_data, rater_drift, rater_flags, test_retest  # noqa: E402

EXPERTS, ITEMS, SUBS, K = 12, 300, 4, 4
SEVERITY_SD = 0.4
CARELESS, DRIFTING = (0,), (1, 2)
DRIFT_LOGITS = 1.0
CARELESS_SHARE = 0.5
RETEST_SHARE = 0.05
RETEST_DRAWS = 5  # re-serve samples per expert and replication (the fit never sees them)
WEEKS = 6
GOALS = {"severity_r": 0.95, "flag_recall": 0.9, "false_alarm": 0.05, "retest_coverage": 0.93}


def _scores(rng: np.random.Generator, eta: np.ndarray, steps: np.ndarray) -> np.ndarray:
    star = expit(eta[:, None] - steps)
    return (rng.random(eta.size)[:, None] < star).sum(axis=1)


def _population_retest(severity: float, steps: np.ndarray) -> tuple[float, float]:
    """Exact agreement and quadratic κ of two independent scorings by one stable expert, θ ~ N(0, 1)."""
    nodes = np.linspace(-6, 6, 241)
    w = np.exp(-0.5 * nodes**2)
    w /= w.sum()
    star = expit(nodes[:, None, None] - severity - steps[None, :, :])  # (T, D, K-1)
    probs = np.concatenate([np.ones(star.shape[:2] + (1,)), star], 2) - np.concatenate(
        [star, np.zeros(star.shape[:2] + (1,))], 2)
    c = np.arange(K)
    weight = w[:, None] / steps.shape[0]  # (T, D): the cell's weight in the pooled table
    exact = float((weight * (probs**2).sum(axis=2)).sum())
    mean_c = (probs * c).sum(axis=2)
    var_c = (probs * c**2).sum(axis=2) - mean_c**2
    total_mean = (weight * mean_c).sum()
    total_var = (weight * ((probs * c**2).sum(axis=2))).sum() - total_mean**2
    kappa = float(1.0 - (weight * var_c).sum() / total_var)
    return exact, kappa


def replication(rng: np.random.Generator) -> dict[str, object]:
    severity = rng.normal(0, SEVERITY_SD, EXPERTS)
    theta = rng.normal(0, 1, ITEMS)
    steps = np.array([-1.5, 0.0, 1.5])[None, :] + rng.normal(0, 0.3, (SUBS, 1))
    rows = []
    retest_rows = []
    true_mean = severity.copy()
    for e in range(EXPERTS):
        order = rng.permutation(ITEMS)
        position = np.empty(ITEMS)
        position[order] = np.arange(ITEMS) / ITEMS  # 0..1 through the queue
        sev_t = severity[e] + (DRIFT_LOGITS * (position - 0.5) if e in DRIFTING else 0.0)
        true_mean[e] = float(np.mean(sev_t))
        item = np.repeat(np.arange(ITEMS), SUBS)
        sub = np.tile(np.arange(SUBS), ITEMS)
        eta = theta[item] - np.repeat(np.broadcast_to(sev_t, (ITEMS,)), SUBS)
        score = _scores(rng, eta, steps[sub])
        if e in CARELESS:
            random = rng.random(score.size) < CARELESS_SHARE
            score[random] = rng.integers(0, K, random.sum())
        week = np.minimum((np.repeat(position, SUBS) * WEEKS).astype(int), WEEKS - 1)
        rows.append((item, np.full(item.size, e), sub, score, week))
        sev_end = severity[e] + (DRIFT_LOGITS * 0.5 if e in DRIFTING else 0.0)
        draws = []
        for _ in range(RETEST_DRAWS):  # independent re-serve samples: more intervals for the coverage figure
            again = rng.choice(ITEMS, int(round(RETEST_SHARE * ITEMS)), replace=False)
            r_item = np.repeat(again, SUBS)
            r_sub = np.tile(np.arange(SUBS), again.size)
            first = score.reshape(ITEMS, SUBS)[again].ravel()
            second = _scores(rng, theta[r_item] - sev_end, steps[r_sub])
            if e in CARELESS:
                random = rng.random(second.size) < CARELESS_SHARE
                second[random] = rng.integers(0, K, random.sum())
            draws.append((first, second, r_item))
        retest_rows.append(draws)
    item, rater, sub, score, week = (np.concatenate(x) for x in zip(*rows, strict=True))
    data = rater_data(item, rater, sub, score, categories=K)
    fit = facets_fit(data)
    est = np.empty(EXPERTS)
    est[np.array(data.raters, dtype=int)] = fit.severity
    drift = rater_drift(data, fit, week)
    flags = rater_flags(fit, drift)
    codes_by_expert: dict[int, set[str]] = {int(r): {f.code for f in fl} for r, fl in zip(data.raters, flags, strict=True)}
    cover_exact, cover_kappa = [], []
    for e in range(EXPERTS):
        if e in CARELESS or e in DRIFTING:
            continue
        exact, kappa = _population_retest(severity[e], steps)
        for first, second, r_item in retest_rows[e]:
            result = test_retest(first, second, r_item, categories=K)
            if result.exact_interval is not None:
                cover_exact.append(result.exact_interval[0] <= exact <= result.exact_interval[1])
            if result.kappa_interval is not None:
                cover_kappa.append(result.kappa_interval[0] <= kappa <= result.kappa_interval[1])
    return {"r": float(np.corrcoef(est, true_mean)[0, 1]), "codes": codes_by_expert, "true": severity,
            "cover_exact": cover_exact, "cover_kappa": cover_kappa}


def fit_time(rng: np.random.Generator, experts: int, items: int) -> tuple[float, float, float, int, float]:
    severity = rng.normal(0, SEVERITY_SD, experts)
    theta = rng.normal(0, 1, items)
    steps = np.array([-1.5, 0.0, 1.5])[None, :] + rng.normal(0, 0.3, (SUBS, 1))
    item, rater, sub = (a.ravel() for a in np.meshgrid(np.arange(items), np.arange(experts), np.arange(SUBS),
                                                        indexing="ij"))
    score = _scores(rng, theta[item] - severity[rater], steps[sub])
    start, cpu = time.perf_counter(), time.process_time()
    data = rater_data(item, rater, sub, score, categories=K)
    fit = facets_fit(data)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    est = np.empty(experts)
    est[np.array(data.raters, dtype=int)] = fit.severity
    return seconds, cpu, float(np.corrcoef(est, severity)[0, 1]), data.n, float(os.getloadavg()[0])


def main() -> None:
    reps, args = repetitions_args(__doc__, quick=10, full=50, seed=20261128)
    print(f"rater effects: {reps} replications of {EXPERTS} experts × {ITEMS} responses × {SUBS} sub-dimensions, "
          f"severity sd {SEVERITY_SD}, careless {CARELESS} ({CARELESS_SHARE:.0%} random), drifting {DRIFTING} "
          f"(+{DRIFT_LOGITS} logit over the queue), re-served {RETEST_SHARE:.0%} ({RETEST_DRAWS} samples per expert)")
    seeds = np.random.SeedSequence(args.seed).spawn(reps + 1)
    rs, hits, aberrant, alarms, normal, sev_fp, sev_small = [], 0, 0, 0, 0, 0, 0
    cover_exact: list[bool] = []
    cover_kappa: list[bool] = []
    start = time.perf_counter()
    for i in range(reps):
        out = replication(np.random.default_rng(seeds[i]))
        rs.append(out["r"])
        codes: dict[int, set[str]] = out["codes"]  # type: ignore[assignment]
        true = out["true"]
        for e, got in codes.items():
            if e in CARELESS:
                aberrant += 1
                hits += "erratic" in got
            elif e in DRIFTING:
                aberrant += 1
                hits += "drift" in got
            else:
                normal += 1
                alarms += bool(got & {"erratic", "muted", "drift"})
                if abs(true[e]) < 0.25:  # type: ignore[index]
                    sev_small += 1
                    sev_fp += bool(got & {"severe", "lenient"})
        cover_exact += out["cover_exact"]  # type: ignore[arg-type]
        cover_kappa += out["cover_kappa"]  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    r = float(np.mean(rs))
    recall = hits / aberrant
    false_alarm = alarms / normal
    coverage = float(np.mean(cover_exact))
    print(f"  severity r: mean {r:.3f}, min {min(rs):.3f} (goal ≥ {GOALS['severity_r']}, ratio {r / GOALS['severity_r']:.2f})")
    print(f"  flags: detected {hits}/{aberrant} aberrant experts = {recall:.3f} (goal ≥ {GOALS['flag_recall']}); "
          f"false alarms {alarms}/{normal} normal experts = {false_alarm:.3f} (goal ≤ {GOALS['false_alarm']})")
    print(f"  severe/lenient flags on experts with true |severity| < 0.25: {sev_fp}/{sev_small}")
    print(f"  test–retest 95 % intervals, stable experts: exact agreement covers {coverage:.3f} "
          f"({len(cover_exact)} intervals), quadratic κ covers {np.mean(cover_kappa):.3f} ({len(cover_kappa)}) "
          f"(goal ≥ {GOALS['retest_coverage']})")
    print(f"  {reps} replications in {elapsed:.1f} s")
    seconds, cpu, big_r, n, load = fit_time(np.random.default_rng(seeds[reps]), 60, 5000)
    print(f"  fit time, 60 experts × 5,000 responses × {SUBS} sub-dimensions ({n:,} ratings, fully crossed): "
          f"{seconds:.2f} s wall, {cpu:.2f} s CPU (goal < 10 s, ratio {seconds / 10:.2f}; load average {load:.1f} on "
          f"{os.cpu_count()} cores), "
          f"severity r {big_r:.3f}")
    print(f"raters: severity_r={r:.3f} flag_recall={recall:.3f} false_alarm={false_alarm:.3f} "
          f"retest_coverage={coverage:.3f}")


if __name__ == "__main__":
    main()
