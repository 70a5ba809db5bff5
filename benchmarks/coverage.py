"""Benchmark: how often the 95 % bootstrap intervals cover the true value, per coefficient × method × design.

Run from the repository root:
    .venv/bin/python benchmarks/coverage.py                 # quick: 4 designs, 200 data sets, 400 resamples
    .venv/bin/python benchmarks/coverage.py --full          # every design, 300 data sets, 1,000 resamples
    .venv/bin/python benchmarks/coverage.py --full --write stats/coverage_table.py   # regenerate the table
    .venv/bin/python benchmarks/coverage.py --markdown      # the committed table as Markdown (docs/statistics.md)
    .venv/bin/python benchmarks/coverage.py --loo           # leave-one-design-out error of the coverage estimate
    .venv/bin/python benchmarks/coverage.py --probe         # the issue-25 probe designs: estimate vs simulation
    # options: --reps N, --resamples N, --seed N

Known-truth panels (a latent-normal thresholded model): unit u has a true score T_u ~ N(0, 0.8²); rater i
reports clip(round(c + T_u + e_iu), 0, 3) with e_iu ~ N(0, 0.5²) — every rater alike, so every coefficient
has one population value — and each rating is missing with probability p. Marginals: balanced (c = 1.5:
shares ≈ .14/.36/.36/.14) or skewed (c = 3.0: about 70 % of ratings are 3). The population value of each
coefficient for a design (raters, skew, missing share) is its value on one simulated panel of 200,000
units (Monte Carlo SE ≈ 0.002), computed once per design family.

Designs: 2, 3, 5, 10 and 30 raters × 12, 30, 100 and 500 units × balanced / skewed × 0 % / 20 % / 40 %
missing (--full); the quick mode runs four of them. For every data set the unit bootstrap of
``stats.intervals.bootstrap_coefficients`` gives the percentile and the BCa interval of every coefficient
(ordinal α, exact and within-one agreement, Fleiss' κ, AC1, AC2 linear/quadratic; for two raters Cohen's κ
unweighted/linear/quadratic, Spearman's ρ, Kendall's τ-b). Coverage = share of data sets whose interval
contains the population value, among data sets where the interval exists (the share without one is
printed as "undef"). With 300 data sets the binomial SE of a coverage near 0.95 is 1.3 points.

``--write PATH`` writes ``stats/coverage_table.py``: per coefficient and design (units, raters, skew, missing
share) the coverage per method, and the share of ratings in the most common category of each marginal class —
what ``stats.interval_choice`` interpolates to pick a method or mark an interval unreliable.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from stats.intervals import (  # noqa: E402
    MANY_RATER_COEFFICIENTS,
    TWO_RATER_COEFFICIENTS,
    CoefficientFunctions,
    bootstrap_coefficients,
    unit_patterns,
)

SD_TRUE, SD_NOISE = 0.8, 0.5
CENTRES = {"balanced": 1.5, "skewed": 3.0}
SCALE = np.arange(4.0)
LEVEL: Literal["ordinal"] = "ordinal"
RATERS = (2, 3, 5, 10, 30)
UNITS = (12, 30, 100, 500)
MISSING = (0.0, 0.2, 0.4)
QUICK_DESIGNS = ((3, 12, "skewed", 0.0), (2, 30, "balanced", 0.0), (5, 30, "balanced", 0.2), (10, 100, "balanced", 0.0))
TRUTH_UNITS = 200_000


def simulate(rng: np.random.Generator, n_raters: int, n_units: int, skew: str, missing: float) -> np.ndarray:
    """Return a raters × units matrix of 0–3 ratings from the latent-normal model (np.nan = missing)."""
    truth = rng.normal(0.0, SD_TRUE, n_units)
    noise = rng.normal(0.0, SD_NOISE, (n_raters, n_units))
    data = np.clip(np.rint(CENTRES[skew] + truth + noise), 0, 3)
    if missing:
        data[rng.random(data.shape) < missing] = np.nan
    return data


def top_category_share(skew: str, seed: int) -> float:
    """The share of ratings in the most common category of a marginal class (200,000 simulated ratings × 5)."""
    data = simulate(np.random.default_rng([seed, len(skew)]), 5, TRUTH_UNITS // 5, skew, 0.0)
    return float(np.bincount(data.astype(np.int64).ravel(), minlength=len(SCALE)).max() / data.size)


def coefficient_names(n_raters: int) -> tuple[str, ...]:
    return MANY_RATER_COEFFICIENTS + (TWO_RATER_COEFFICIENTS if n_raters == 2 else ())


def population_values(n_raters: int, skew: str, missing: float, seed: int) -> dict[str, float]:
    """Every coefficient on one 200,000-unit panel of the design: the population value up to ≈ 0.002."""
    rng = np.random.default_rng([seed, n_raters, int(missing * 100), len(skew)])
    values: dict[str, list[float]] = {}
    step = 50_000 if n_raters <= 10 else 20_000
    # Large panels are simulated in slices; each slice's coefficient is itself a consistent estimate, and the
    # slices are averaged (equal sizes), which keeps 30 raters × 200,000 units within memory.
    for _ in range(TRUTH_UNITS // step):
        data = simulate(rng, n_raters, step, skew, missing)
        patterns = unit_patterns(data, SCALE, np.zeros(step, dtype=np.int64), two_raters=n_raters == 2)
        functions = CoefficientFunctions(patterns, SCALE, LEVEL)
        point = functions.evaluate(patterns.freq[np.newaxis, :])
        for name in coefficient_names(n_raters):
            values.setdefault(name, []).append(float(point[name][0]))
    return {name: float(np.mean(v)) for name, v in values.items()}


def run_design(
    n_raters: int, n_units: int, skew: str, missing: float, truth: dict[str, float], reps: int, resamples: int,
    rng: np.random.Generator,
) -> dict[str, dict[str, float]]:
    """Coverage of both methods for every coefficient on ``reps`` simulated data sets of one design."""
    hits = {name: {"percentile": 0, "bca": 0} for name in truth}
    defined = {name: {"percentile": 0, "bca": 0} for name in truth}
    for _ in range(reps):
        data = simulate(rng, n_raters, n_units, skew, missing)
        results = bootstrap_coefficients(
            data, SCALE, LEVEL, stratum_codes=np.zeros(n_units, dtype=np.int64), n_resamples=resamples, rng=rng,
            two_raters=n_raters == 2,
        )
        for name, value in truth.items():
            result = results[name]
            for method, interval in (("percentile", result.percentile), ("bca", result.bca)):
                if interval is None:
                    continue
                defined[name][method] += 1
                hits[name][method] += interval[0] <= value <= interval[1]
    return {
        name: {
            "percentile": hits[name]["percentile"] / max(defined[name]["percentile"], 1),
            "bca": hits[name]["bca"] / max(defined[name]["bca"], 1),
            "undefined": 1.0 - defined[name]["percentile"] / reps,
        }
        for name in truth
    }


def write_table(path: Path, rows: list[dict[str, object]], args: argparse.Namespace, seconds: float) -> None:
    """Write the coverage module: per coefficient and (units, raters, skew, missing share), each method's coverage."""
    table: dict[str, dict[tuple[int, int, str, float], dict[str, float]]] = {}
    for row in rows:
        key = (int(row["units"]), int(row["raters"]), str(row["skew"]), float(row["missing"]))  # type: ignore[call-overload, arg-type]
        table.setdefault(str(row["coefficient"]), {})[key] = {m: float(row[m]) for m in ("percentile", "bca")}  # type: ignore[arg-type]
    shares = {skew: top_category_share(skew, args.seed) for skew in CENTRES}
    lines = [
        '"""Simulated coverage of the 95 % unit-bootstrap intervals, per coefficient × design × method (generated).',
        "",
        "Produced by ``benchmarks/coverage.py --full --write stats/coverage_table.py`` "
        f"({datetime.now(UTC):%Y-%m-%d}, {args.reps} data sets per design, {args.resamples} resamples, "
        f"seed {args.seed}, {seconds / 60:.0f} min on the 2-core development machine). Model: latent-normal",
        "thresholded 0–3 ratings, every rater alike, each rating missing with the design's probability (see the",
        "benchmark's docstring). A design is (units, raters, marginals, missing share); ``SKEW_SHARES`` is the share",
        f"of ratings in the most common category of each marginal class. Binomial SE of a coverage near 0.95 from "
        f"{args.reps} data sets: {100 * (0.95 * 0.05 / args.reps) ** 0.5:.1f} points.",
        "Do not edit by hand; regenerate.",
        '"""',
        "from __future__ import annotations",
        "",
        f"N_DATA_SETS = {args.reps}",
        f"N_RESAMPLES = {args.resamples}",
        "# marginal class → share of all ratings in its most common category",
        "SKEW_SHARES: dict[str, float] = {" + ", ".join(f"{k!r}: {v:.3f}" for k, v in shares.items()) + "}",
        "# coefficient → (units, raters, skew, missing share) → {method: coverage}",
        "COVERAGE: dict[str, dict[tuple[int, int, str, float], dict[str, float]]] = {",
    ]
    for name in sorted(table):
        lines.append(f"    {name!r}: {{")
        for key in sorted(table[name]):
            cov = table[name][key]
            lines.append(f"        {key!r}: {{\"percentile\": {cov['percentile']:.3f}, \"bca\": {cov['bca']:.3f}}},")
        lines.append("    },")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def markdown_table() -> str:
    """The committed coverage table (stats/coverage_table.py) as Markdown: one row per design, percentile / BCa."""
    from stats.coverage_table import COVERAGE

    names = [n for n in MANY_RATER_COEFFICIENTS + TWO_RATER_COEFFICIENTS if n in COVERAGE]
    short = {"krippendorff_alpha": "α ord.", "percent_agreement": "exact", "within_one_agreement": "±1",
             "fleiss_kappa": "Fleiss κ", "gwet_ac1": "AC1", "gwet_ac2_linear": "AC2 lin", "gwet_ac2_quadratic": "AC2 quad",
             "cohen_kappa_unweighted": "κ", "cohen_kappa_linear": "κ lin", "cohen_kappa_quadratic": "κ quad",
             "spearman_rho": "ρ", "kendall_tau_b": "τ-b"}
    designs = sorted({key for n in names for key in COVERAGE[n]}, key=lambda k: (k[2], k[3], k[1], k[0]))
    lines = ["| raters × units, marginals, missing | " + " | ".join(short[n] for n in names) + " |",
             "| --- | " + " | ".join("---" for _ in names) + " |"]
    for units, raters, skew, missing in designs:
        cells = []
        for n in names:
            cov = COVERAGE[n].get((units, raters, skew, missing))
            if cov is None:
                cells.append("")
                continue
            text = f"{cov['percentile']:.2f} / {cov['bca']:.2f}"
            cells.append(f"**{text}**" if max(cov.values()) < 0.93 else text)
        lines.append(f"| {raters} × {units}, {skew}, {missing:.0%} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def leave_one_out(bandwidths: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)) -> None:
    """Each committed row left out in turn and estimated from the others (stats.interval_choice): the error.

    Printed per bandwidth, over rows with ≥ 12 pairable units (the estimate's domain): the root mean square and
    the largest error, the share within ±0.03, and how often the 0.93 flag of the estimate agrees with the
    row's. The rows are themselves estimates (binomial SE ≈ 1 point), so the RMS error cannot go below it.
    """
    from stats.coverage_table import COVERAGE, N_DATA_SETS
    from stats.interval_choice import (
        COVERAGE_TARGET,
        SKEW_SHARES,
        estimate_coverage,
        pairable_units,
        ratings_per_pairable_unit,
    )

    print(f"leave-one-design-out estimate of the committed table ({N_DATA_SETS} data sets per row; binomial SE of "
          f"a row near 0.95: {(0.95 * 0.05 / N_DATA_SETS) ** 0.5:.4f})")
    print(f"{'bandwidth':>9} {'rows':>5} {'RMS':>7} {'max':>7} {'≤0.03':>6} {'flag agrees':>11}  (interior rows: RMS, ≤0.03)")
    for bandwidth in bandwidths:
        errors, interior, agree = [], [], 0
        for name, table in COVERAGE.items():
            units_seen = sorted({k[0] for k in table})
            raters_seen = sorted({k[1] for k in table})
            for key, cov in table.items():
                units, raters, skew, missing = key
                n = pairable_units(units, raters, missing)
                if n < 12:
                    continue
                rest = {k: v for k, v in table.items() if k != key}
                estimate = estimate_coverage(name, n_units=round(n), ratings_per_unit=ratings_per_pairable_unit(
                    raters, missing), missing_share=missing, top_share=SKEW_SHARES[skew], table=rest,
                    bandwidth=bandwidth)
                for method in ("percentile", "bca"):
                    error = estimate.coverage[method] - cov[method]
                    errors.append(error)
                    agree += (estimate.coverage[method] >= COVERAGE_TARGET) == (cov[method] >= COVERAGE_TARGET)
                    if units not in (units_seen[0], units_seen[-1]) and raters not in (raters_seen[0], raters_seen[-1]) \
                            and 0 < missing < 0.4 or (len(raters_seen) == 1 and units not in (units_seen[0], units_seen[-1])
                                                      and 0 < missing < 0.4):
                        interior.append(error)
        e, i = np.abs(errors), np.abs(interior)
        print(f"{bandwidth:>9.2f} {len(errors):>5} {np.sqrt(np.mean(e ** 2)):>7.4f} {e.max():>7.4f} "
              f"{np.mean(e <= 0.03):>6.1%} {agree / len(errors):>11.1%}  ({np.sqrt(np.mean(i ** 2)):.4f}, "
              f"{np.mean(i <= 0.03):.1%} of {len(i)})")


def probe(reps: int, resamples: int, seed: int) -> None:
    """The issue-25 probe designs (α): the estimated coverage and flag against a fresh simulation of each."""
    from stats.interval_choice import (
        SKEW_SHARES,
        choose_interval_method,
        pairable_units,
        ratings_per_pairable_unit,
    )

    print(f"probe designs, krippendorff_alpha: estimate from the table vs {reps} new data sets × {resamples} "
          f"resamples (SE ≈ {(0.95 * 0.05 / reps) ** 0.5:.3f})")
    for n_raters, n_units, skew, missing in ((5, 50, "balanced", 0.0), (3, 30, "balanced", 0.2), (3, 12, "skewed", 0.0)):
        truth = population_values(n_raters, skew, missing, seed)
        rng = np.random.default_rng([seed + 1, n_raters, n_units, len(skew), int(missing * 100)])
        simulated = run_design(n_raters, n_units, skew, missing, {"krippendorff_alpha": truth["krippendorff_alpha"]},
                               reps, resamples, rng)["krippendorff_alpha"]
        choice = choose_interval_method("krippendorff_alpha", n_units=round(pairable_units(n_units, n_raters, missing)),
                                        ratings_per_unit=ratings_per_pairable_unit(n_raters, missing),
                                        missing_share=missing, top_share=SKEW_SHARES[skew])
        print(f"  {n_raters} × {n_units} {skew} {missing:.0%} missing: estimate {choice.method} {choice.coverage:.3f} "
              f"→ {'reliable' if choice.reliable else 'NOT reliable'}; simulated percentile "
              f"{simulated['percentile']:.3f}, BCa {simulated['bca']:.3f}  [{choice.basis}]", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--full", action="store_true", help="every design (slow: tens of minutes)")
    parser.add_argument("--reps", type=int, default=None, help="data sets per design (200 quick, 300 full)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (400 quick, 1000 full)")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--write", type=Path, default=None, help="write the coverage table module here")
    parser.add_argument("--markdown", action="store_true", help="print the committed table as Markdown and stop")
    parser.add_argument("--loo", action="store_true", help="leave-one-design-out error of the coverage estimate")
    parser.add_argument("--probe", action="store_true", help="the probe designs: estimate vs a fresh simulation")
    args = parser.parse_args()
    if args.markdown:
        print(markdown_table())
        return
    if args.loo:
        leave_one_out()
        return
    if args.probe:
        probe(args.reps or 2000, args.resamples or 1000, args.seed)
        return
    args.reps = args.reps or (300 if args.full else 200)
    args.resamples = args.resamples or (1000 if args.full else 400)
    designs = (
        list(itertools.product(RATERS, UNITS, CENTRES, MISSING)) if args.full else list(QUICK_DESIGNS)
    )
    started = time.perf_counter()
    truths: dict[tuple[int, str, float], dict[str, float]] = {}
    rows: list[dict[str, object]] = []
    print(f"coverage of 95 % intervals: {len(designs)} designs × {args.reps} data sets × {args.resamples} resamples, "
          f"seed {args.seed}, ordinal alpha")
    print(f"{'raters':>6} {'units':>5} {'skew':<8} {'miss':>4}  {'coefficient':<22} {'true':>7} "
          f"{'percentile':>10} {'BCa':>6} {'undef':>6}")
    for n_raters, n_units, skew, missing in designs:
        family = (n_raters, skew, missing)
        if family not in truths:
            truths[family] = population_values(n_raters, skew, missing, args.seed)
        rng = np.random.default_rng([args.seed, n_raters, n_units, len(skew), int(missing * 100)])
        coverage = run_design(n_raters, n_units, skew, missing, truths[family], args.reps, args.resamples, rng)
        for name, cov in coverage.items():
            rows.append({"raters": n_raters, "units": n_units, "skew": skew, "missing": missing, "coefficient": name,
                         **cov})
            flag = "  both < 0.93" if max(cov["percentile"], cov["bca"]) < 0.93 else ""
            print(f"{n_raters:>6} {n_units:>5} {skew:<8} {missing:>4.0%}  {name:<22} {truths[family][name]:>7.3f} "
                  f"{cov['percentile']:>10.3f} {cov['bca']:>6.3f} {cov['undefined']:>6.1%}{flag}", flush=True)
    seconds = time.perf_counter() - started
    print(f"wall time {seconds:.1f} s")
    if args.write:
        write_table(args.write, rows, args, seconds)
        print(f"wrote {args.write}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):  # small products: BLAS threads only contend
        main()
