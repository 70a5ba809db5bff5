"""Expert-calibrated leaderboard with a known truth: coverage, width and active allocation of expert labels (issue 22).

A benchmark the size of production: 8 models × 500 cases per dimension × 6 dimensions (3,000 cases, 24,000
responses), 4 traditions, 4 difficulties, ordinal 0–3 sub-dimension scores, composite = Σ raw/3 × sub-dimension
weight (rubric v1.0, SPEC.md), a model's score = the difficulty-weighted mean of its composites (Easy 1.0,
Medium 1.5, Hard 2.0, Expert 3.0). Every repetition draws new responses:

- latent quality per response × sub-dimension: 1.5 + model ability + case effect − difficulty shift + model ×
  tradition effect + response and sub-dimension noise (0–3 scale);
- a panel of 3 experts scores a labelled response, each round(latent + N(0, 0.5)) clipped to 0–3; the label Y is
  the composite of the panel's mean sub-scores. The known **truth** of a response is the expectation of that
  label (Σ_t Φ((latent − t)/0.5) over the thresholds 0.5, 1.5, 2.5 per sub-dimension); a model's true score is
  the difficulty-weighted mean of its responses' truths;
- the judge scores every response: round(latent + model bias + N(0, σ_dim · f_stratum)) clipped to 0–3; one
  model family (the judge's own, 2 models) is inflated by 0.3 points of 3 (10 %), other models get small biases;
  σ_dim differs by dimension, f_stratum by difficulty in the "varying" design only.

Per model, the calibrated score is ``stats.ppi.ppi_stratified_mean`` over the 4 difficulty strata (W_h = the
stratum's share of difficulty weight; λ power-tuned per stratum; every judged response in Yhat_unlabeled),
from 1,000 expert-labelled responses in all (125 per model), drawn per model and stratum without replacement:

- proportional: n_h ∝ N_h (``neyman_allocation`` with every sd 0, its documented fallback), at least 2;
- active: Neyman n_h ∝ N_h · d_h · sd_h (d_h the difficulty weight), sd_h = √Var(Y − λŶ) per difficulty from a
  previous cycle of 300 proportionally drawn labels (pooled over models, centred per model), at least 2.

Designs: "uniform" (judge correlation ≈ 0.86, the same error in every stratum), "varying" (≈ 0.87, error growing
with difficulty, the strata), "moderate" (≈ 0.73, near the goal's 0.7), "weak" (≈ 0.57, coverage only).
Figures per design: coverage of the calibrated 95 % intervals (both allocations), coverage of the judge-only
normal interval (difficulty-weighted mean of the judge's composites, se of a weighted mean over responses: a
normal stand-in for the judge leaderboard's case bootstrap), the mean ratio of the calibrated interval's width to the
experts-only interval's (same labels, same strata, λ = 0), and the label savings of active over proportional at
equal width: active runs at 70 % and 100 % of the budget, its mean width is interpolated in log–log to the
proportional width at 100 %, savings = 1 − that budget share.

The last line, ``calibrated: coverage=C judge_only_coverage=J width_vs_experts_only=W active_savings=S``:
C = the lowest calibrated coverage over every design and both allocations; J = the judge-only coverage pooled
over designs; W = the largest width ratio among designs whose judge correlates ≥ 0.7 with the truth; S = the
savings on the design whose judge error differs across strata ("varying").

Issue 31 (anytime-valid intervals, ``stats/anytime.py``), after the ``calibrated:`` line:

- cells = model × dimension (difficulty-weighted truth, composites on 0–1), budgets of 5, 10, 20 and 40 labels per
  cell, uniform draws (without replacement) and active draws (π ∝ (0.25 + ŷ(1 − ŷ)) × difficulty weight, drawn
  with replacement in proportion to π), on the "uniform" and "moderate" judges: the coverage of ``mean_cs``
  (horizon = the budget, valid for 200 looks) against the truth, beside issue 22's fixed-n PPI++ on the same labels;
- width at 100 labels per model over the fixed-n PPI++ normal interval (and the betting method's, and the textbook
  normal mixture's ratio);
- a monitored design: two models labelled one response each at a time, a look after every pair, stop at the first
  verdict (separated / equivalent within ±0.05) or at 200 looks; equal truth with a judge over-scoring a by 0.3 of 3
  (false "separated"), and a true gap of 0.1 (labels to a verdict, against the fixed-n labels planned for the same
  power, power clipped to 0.5–0.99).

The last line, ``anytime: coverage_min=C peeking_error=E width_vs_fixed_n=W labels_to_verdict_vs_fixed_n=L``:
C = the lowest cell coverage over budgets, draws and judges; E = false separations of equal models (independent
samples); W = the mean width ratio at 100 labels; L = mean labels to a verdict (independent samples) over the
fixed-n plan. Goals: C ≥ 0.94, E ≤ 0.05, W ≤ 1.35, L ≤ 0.80.
Run: ``python benchmarks/calibrated_leaderboard.py [--quick] [--reps N] [--seed S] [--anytime-only]``.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats
from scipy.special import ndtr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.calibrated.sequences import CellData, as_estimate, mean_estimate  # noqa: E402
from stats.anytime import (  # noqa: E402
    LabelledSample,
    difference_cs_path,
    labels_to_verdict,
    mean_cs,
)
from stats.ppi import Stratum, neyman_allocation, ppi_mean, ppi_stratified_mean  # noqa: E402

# Rubric v1.0 (SPEC.md): the four sub-dimension weights of each dimension, in order.
SUB_WEIGHTS = {
    "textual": (35, 35, 20, 10),
    "hermeneutical": (35, 25, 25, 15),
    "doctrinal": (35, 35, 20, 10),
    "historical": (40, 30, 20, 10),
    "apologetics": (35, 30, 25, 10),
    "intertextual": (40, 30, 20, 10),
}
DIMENSIONS = tuple(SUB_WEIGHTS)
TRADITIONS = ("catholic", "orthodox", "reformed", "evangelical")
DIFFICULTIES = ("easy", "medium", "hard", "expert")
DIFFICULTY_WEIGHT = np.array([1.0, 1.5, 2.0, 3.0])
DIFFICULTY_SHARE = np.array([0.30, 0.35, 0.25, 0.10])
DIFFICULTY_SHIFT = np.array([0.35, 0.0, -0.35, -0.7])
MODELS = 8
FAMILIES = np.array([0, 0, 1, 1, 2, 2, 3, 3])  # family 0 is the judge's own: inflated by 10 %
ABILITY = np.array([0.35, 0.05, 0.30, -0.10, 0.15, -0.25, 0.0, -0.40])
MODEL_BIAS = np.array([0.30, 0.30, 0.05, -0.04, 0.0, 0.06, -0.05, 0.02])
RATERS = 3
RATER_SD = 0.5
THRESHOLDS = np.array([0.5, 1.5, 2.5])
BUDGET = 1000
PILOT = 300
FLOOR = 2
BUDGET_SHARES = (0.7, 1.0)
ALPHA = 0.05
Z = float(scipy_stats.norm.ppf(1 - ALPHA / 2))  # 1.959963984540054, the two-sided normal quantile at ALPHA
# E[round(q + e) clipped to 0–3] = Σ_t Φ((q − t)/RATER_SD) as a table: linear interpolation on a step of 0.002 is
# within 1e-6 of a point of the exact value and 10× faster than the normal CDF per repetition.
GRID_LOW, GRID_STEP, GRID_POINTS = -4.0, 0.002, 5501
EXPECTED_SCORE = ndtr((GRID_LOW + GRID_STEP * np.arange(GRID_POINTS)[:, None] - THRESHOLDS) / RATER_SD).sum(axis=1)


def expected_score(latent: np.ndarray) -> np.ndarray:
    """The table above, linearly interpolated on its uniform grid (clamped at its ends, where it is flat)."""
    position = np.clip((latent - GRID_LOW) / GRID_STEP, 0, GRID_POINTS - 1.000001)
    index = position.astype(np.int64)
    fraction = position - index
    return EXPECTED_SCORE[index] * (1 - fraction) + EXPECTED_SCORE[index + 1] * fraction


@dataclass(frozen=True)
class Design:
    name: str
    judge_sd: tuple[float, ...]  # per dimension
    stratum_factor: tuple[float, ...]  # per difficulty
    note: str


DESIGNS = (
    Design("uniform", (0.60, 0.70, 0.65, 0.55, 0.80, 0.85), (1.0, 1.0, 1.0, 1.0),
           "judge error the same in every stratum, per-dimension noise"),
    Design("varying", (0.60, 0.70, 0.65, 0.55, 0.80, 0.85), (0.3, 0.5, 1.4, 2.2),
           "judge error grows with difficulty (the strata)"),
    Design("moderate", (1.05, 1.2, 1.15, 1.0, 1.3, 1.35), (1.0, 1.0, 1.0, 1.0),
           "a judge near the correlation goal (≈ 0.7)"),
    Design("weak", (1.6, 1.8, 1.7, 1.5, 2.0, 2.1), (1.0, 1.0, 1.0, 1.0),
           "a mediocre judge (correlation < 0.7): coverage only"),
)


@dataclass(frozen=True)
class Benchmark:
    """The fixed benchmark: case facets and the index of every (model, difficulty) stratum."""

    dimension: np.ndarray  # per case
    tradition: np.ndarray
    difficulty: np.ndarray
    sub_weight: np.ndarray  # per case × 4, summing to 100
    groups: list[list[np.ndarray]]  # [model][difficulty] → response indices
    response_case: np.ndarray
    response_model: np.ndarray
    weight: np.ndarray  # difficulty weight per response


def benchmark_build(rng: np.random.Generator, cases_per_dimension: int) -> Benchmark:
    n_cases = cases_per_dimension * len(DIMENSIONS)
    dimension = np.repeat(np.arange(len(DIMENSIONS)), cases_per_dimension)
    tradition = rng.integers(0, len(TRADITIONS), n_cases)
    difficulty = rng.choice(len(DIFFICULTIES), n_cases, p=DIFFICULTY_SHARE)
    sub_weight = np.array([SUB_WEIGHTS[DIMENSIONS[d]] for d in dimension], dtype=float)
    response_case = np.tile(np.arange(n_cases), MODELS)
    response_model = np.repeat(np.arange(MODELS), n_cases)
    groups = [[np.flatnonzero((response_model == m) & (difficulty[response_case] == h))
               for h in range(len(DIFFICULTIES))] for m in range(MODELS)]
    return Benchmark(dimension, tradition, difficulty, sub_weight, groups, response_case, response_model,
                     DIFFICULTY_WEIGHT[difficulty[response_case]])


@dataclass
class Draw:
    truth: np.ndarray  # expected panel composite per response
    judge: np.ndarray  # judge composite per response
    label: np.ndarray  # the panel's composite per response (used only where drawn)
    order: list[list[np.ndarray]]  # [model][difficulty] → the stratum's responses in random draw order
    pilot_order: list[list[np.ndarray]]


@dataclass
class Responses:
    """One repetition's responses: latent sub-scores, composite weights, the known truth and the judge's composite."""

    latent: np.ndarray  # per response × 4 sub-dimensions (0–3 scale)
    weights: np.ndarray  # per response × 4: sub-dimension weight / 3 (composite on 0–100)
    truth: np.ndarray
    judge: np.ndarray


def responses_draw(rng: np.random.Generator, bench: Benchmark, design: Design) -> Responses:
    """New responses and judge scores for every response (the first half of ``draw_repetition``, same RNG order)."""
    n_cases = bench.dimension.size
    case_effect = rng.normal(0, 0.45, n_cases)
    tradition_effect = rng.normal(0, 0.15, (MODELS, len(TRADITIONS)))
    case = bench.response_case
    model = bench.response_model
    mean = (1.5 + ABILITY[model] + case_effect[case] + DIFFICULTY_SHIFT[bench.difficulty[case]]
            + tradition_effect[model, bench.tradition[case]] + rng.normal(0, 0.35, case.size))
    latent = mean[:, None] + rng.normal(0, 0.3, (case.size, 4))
    weights = bench.sub_weight[case] / 3.0
    # Truth: E[round(latent + e) clipped to 0–3] = Σ_t P(latent + e > t), e ~ N(0, RATER_SD).
    expected = expected_score(latent)
    truth = (expected * weights).sum(axis=1)
    judge_sd = (np.asarray(design.judge_sd)[bench.dimension[case]]
                * np.asarray(design.stratum_factor)[bench.difficulty[case]])
    judge_raw = np.clip(np.rint(latent + MODEL_BIAS[model][:, None] + rng.normal(size=latent.shape)
                                * judge_sd[:, None]), 0, 3)
    judge = (judge_raw * weights).sum(axis=1)
    return Responses(latent, weights, truth, judge)


def panel_label(rng: np.random.Generator, latent: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The panel's composite for these responses: each of RATERS experts scores round(latent + N(0, RATER_SD))."""
    panel = np.clip(np.rint(latent[:, :, None] + rng.normal(0, RATER_SD, (latent.shape[0], 4, RATERS))), 0, 3)
    return (panel.mean(axis=2) * weights).sum(axis=1)


def draw_repetition(rng: np.random.Generator, bench: Benchmark, design: Design, per_model: int,
                    pilot: list[dict[int, int]]) -> Draw:
    """New responses and judge scores for every response; panel scores for those the allocations can draw.

    A response's panel label is NaN unless a draw of ``per_model`` labels per model, or the ``pilot`` allocation,
    can reach it in its stratum's draw order.
    """
    world = responses_draw(rng, bench, design)
    order = [[rng.permutation(g) for g in per_model] for per_model in bench.groups]
    pilot_order = [[rng.permutation(g) for g in per_model] for per_model in bench.groups]
    # The panel scores only the responses a draw can reach: no allocation of `per_model` labels puts more than
    # `per_model` in one stratum, and the pilot's allocation is fixed.
    labelled = np.concatenate([np.concatenate([order[m][h][:per_model], pilot_order[m][h][: pilot[m][h]]])
                               for m in range(MODELS) for h in range(len(DIFFICULTIES))])
    labelled = np.unique(labelled)
    label = np.full(world.truth.size, np.nan)
    label[labelled] = panel_label(rng, world.latent[labelled], world.weights[labelled])
    return Draw(world.truth, world.judge, label, order, pilot_order)


def true_scores(bench: Benchmark, draw: Draw) -> np.ndarray:
    return np.array([np.average(draw.truth[bench.response_model == m], weights=bench.weight[bench.response_model == m])
                     for m in range(MODELS)])


def judge_only(bench: Benchmark, draw: Draw) -> tuple[np.ndarray, np.ndarray]:
    """Difficulty-weighted mean of the judge's composites per model, with the normal se of a weighted mean."""
    estimates, ses = [], []
    for m in range(MODELS):
        mask = bench.response_model == m
        x, w = draw.judge[mask], bench.weight[mask]
        estimate = float(np.sum(w * x) / np.sum(w))
        estimates.append(estimate)
        ses.append(math.sqrt(float(np.sum(w**2 * (x - estimate) ** 2))) / float(np.sum(w)))
    return np.array(estimates), np.array(ses)


def allocations(bench: Benchmark, per_model: int, sds: np.ndarray | None) -> list[dict[int, int]]:
    """Per model, labels per difficulty stratum: proportional (sds None) or Neyman by d_h · sd_h."""
    result = []
    for m in range(MODELS):
        sizes = {h: int(bench.groups[m][h].size) for h in range(len(DIFFICULTIES))}
        scores = ({h: 0.0 for h in sizes} if sds is None
                  else {h: float(DIFFICULTY_WEIGHT[h] * sds[h]) for h in sizes})
        result.append(neyman_allocation(sizes, scores, per_model, floor=FLOOR))
    return result


def model_strata(bench: Benchmark, draw: Draw, m: int, alloc: dict[int, int]) -> list[Stratum]:
    strata = []
    for h in range(len(DIFFICULTIES)):
        members = bench.groups[m][h]
        drawn = draw.order[m][h][: alloc[h]]
        strata.append(Stratum(key=DIFFICULTIES[h], Y=draw.label[drawn], Yhat=draw.judge[drawn],
                              Yhat_unlabeled=draw.judge[members],
                              size=float(members.size * DIFFICULTY_WEIGHT[h])))
    return strata


def pilot_sds(bench: Benchmark, draw: Draw, alloc: list[dict[int, int]]) -> np.ndarray:
    """sd of Y − λŶ per difficulty from a previous proportional cycle, pooled over models (centred per model)."""
    sds = np.zeros(len(DIFFICULTIES))
    for h in range(len(DIFFICULTIES)):
        picks = [draw.pilot_order[m][h][: alloc[m][h]] for m in range(MODELS)]
        every = np.concatenate(picks)
        judged = np.concatenate([bench.groups[m][h] for m in range(MODELS)])
        lam = ppi_mean(draw.label[every], draw.judge[every], draw.judge[judged]).lam
        residuals = [draw.label[p] - lam * draw.judge[p] for p in picks]
        centred = np.concatenate([r - r.mean() for r in residuals])
        sds[h] = math.sqrt(float(np.sum(centred**2)) / max(1, centred.size - MODELS))
    return sds


@dataclass
class Tally:
    covered: int = 0
    covered_active: int = 0
    judge_covered: int = 0
    intervals: int = 0
    width_ratio: float = 0.0
    active_width: np.ndarray = field(default_factory=lambda: np.zeros(len(BUDGET_SHARES)))  # by share, summed
    proportional_width: float = 0.0
    corr: float = 0.0
    reps: int = 0


def run_design(design: Design, bench: Benchmark, reps: int, seed: int) -> Tally:
    rng = np.random.default_rng([seed, DESIGNS.index(design)])
    tally = Tally()
    per_model = BUDGET // MODELS
    proportional = allocations(bench, per_model, None)
    pilot = allocations(bench, PILOT // MODELS, None)
    for _ in range(reps):
        draw = draw_repetition(rng, bench, design, per_model, pilot)
        truth = true_scores(bench, draw)
        tally.corr += float(np.corrcoef(draw.judge, draw.truth)[0, 1])
        judge_estimate, judge_se = judge_only(bench, draw)
        tally.judge_covered += int(np.sum(np.abs(judge_estimate - truth) <= Z * judge_se))
        sds = pilot_sds(bench, draw, pilot)
        active = {share: allocations(bench, round(per_model * share), sds) for share in BUDGET_SHARES}
        for m in range(MODELS):
            strata = model_strata(bench, draw, m, proportional[m])
            calibrated = ppi_stratified_mean(strata, alpha=ALPHA)
            experts = ppi_stratified_mean(strata, alpha=ALPHA, lam=0.0)
            assert calibrated.estimate is not None and calibrated.lower is not None and calibrated.upper is not None
            assert experts.lower is not None and experts.upper is not None
            tally.covered += int(calibrated.lower <= truth[m] <= calibrated.upper)
            width = calibrated.upper - calibrated.lower
            tally.proportional_width += width
            tally.width_ratio += width / (experts.upper - experts.lower)
            for i, share in enumerate(BUDGET_SHARES):
                result = ppi_stratified_mean(model_strata(bench, draw, m, active[share][m]), alpha=ALPHA)
                assert result.lower is not None and result.upper is not None
                tally.active_width[i] += result.upper - result.lower
                if share == 1.0:
                    tally.covered_active += int(result.lower <= truth[m] <= result.upper)
            tally.intervals += 1
        tally.reps += 1
    return tally


def savings(tally: Tally) -> float:
    """1 − the budget share at which active's mean width equals proportional's at the full budget (log–log)."""
    target = math.log(tally.proportional_width)
    x = np.log(np.asarray(BUDGET_SHARES))
    y = np.log(tally.active_width)
    # width falls with the budget: find where y crosses target; outside the grid, extend with slope −1/2
    if target >= y[0]:
        share = math.exp(x[0] - 2 * (target - y[0]))
    elif target <= y[-1]:
        share = math.exp(x[-1] - 2 * (target - y[-1]))
    else:
        share = math.exp(float(np.interp(-target, -y, x)))
    return 1.0 - share


# ---------------------------------------------------------------------------------------------------------------
# Issue 31: anytime-valid intervals, verdicts under continuous monitoring (stats/anytime.py)
#
# The cells and the width go through the calibrated builder's own cell code (calibration.calibrated.sequences:
# CellData → mean_estimate → as_estimate, with the builder's horizon (the planned draw, Σπ) and no maximum of labels, the Hájek estimate
# of Σπ and the outward rounding), so the benchmark measures what the page shows; only reading rows into arrays
# (the builder's _Group) is skipped. The monitored pairs call stats.anytime's difference sequences, as the
# builder's pairs do.

ANYTIME_BUDGETS = (5, 10, 20, 40)  # labels per model × dimension cell
ANYTIME_MAX_LABELS = 200  # the designs' maximum looks: every sequence is valid for every look up to here
ANYTIME_WIDTH_N = 100  # labels per model at which the width is compared with fixed-n PPI++
ANYTIME_GAP = 0.1  # the true gap (of 1) for the labels-to-verdict figure
ANYTIME_MARGIN = 0.05  # the equivalence margin (the board's default)
MONITOR_MODEL = 6  # ability 0.0: the model whose cases the monitored pairs reuse


@dataclass
class AnytimeTally:
    """Coverage of the cell intervals by (draw, budget). The intervals are running intersections (each inside
    the one before), so covering after the last label means covering after every label: optional stopping
    anywhere up to the budget is covered by the same figure."""

    covered: dict[tuple[str, int], int] = field(default_factory=dict)
    fixed_covered: dict[tuple[str, int], int] = field(default_factory=dict)
    width: dict[tuple[str, int], float] = field(default_factory=dict)
    cells: dict[tuple[str, int], int] = field(default_factory=dict)

    def add(self, key: tuple[str, int], hit: bool, fixed_hit: bool, width: float) -> None:
        for table, value in ((self.covered, hit), (self.fixed_covered, fixed_hit), (self.cells, 1)):
            table[key] = table.get(key, 0) + int(value)
        self.width[key] = self.width.get(key, 0.0) + width


def active_pi(judge: np.ndarray, difficulty_weight: np.ndarray) -> np.ndarray:
    """An active draw's inclusion probabilities: higher where the judge is least sure (mid-scale) and on hard cases.

    Zrnic & Candès' rule π ∝ √(expected residual variance), with a proxy: 0.25 + ŷ(1 − ŷ) times the difficulty
    weight, scaled to (0, 1]; only ratios matter. Ranges over about 1:8.
    """
    score = (0.25 + judge * (1 - judge)) * difficulty_weight
    return score / score.max()


def anytime_cells(rng: np.random.Generator, bench: Benchmark, design: Design, tally: AnytimeTally) -> None:
    """One repetition: every model × dimension cell, each budget, uniform (without replacement) and active draws.

    The cell's truth is the difficulty-weighted mean of its responses' truths (composite / 100). Uniform draws
    are without replacement (as a cycle draws); active draws are with replacement in proportion to π, the design
    the IPW pseudo-outcomes assume (each draw a new panel label).
    """
    world = responses_draw(rng, bench, design)
    truth, judge = world.truth / 100, world.judge / 100
    case = bench.response_case
    for m in range(MODELS):
        for d in range(len(DIMENSIONS)):
            members = np.flatnonzero((bench.response_model == m) & (bench.dimension[case] == d))
            w_all = bench.weight[members]
            cell_truth = float(np.average(truth[members], weights=w_all))
            pi_all = active_pi(judge[members], w_all)
            biggest = max(ANYTIME_BUDGETS)
            picks = {"uniform": rng.permutation(members.size)[:biggest],
                     "active": rng.choice(members.size, biggest, p=pi_all / pi_all.sum())}
            for draw, pick in picks.items():
                items = members[pick]
                y = panel_label(rng, world.latent[items], world.weights[items]) / 100
                pi = pi_all[pick] if draw == "active" else None
                for budget in ANYTIME_BUDGETS:
                    k = slice(0, budget)
                    # the draw's inclusion probabilities as a cycle records them: budget / N (uniform), or the
                    # active π scaled to an expected draw of `budget` labels (only ratios matter to the weights;
                    # the board reads its horizon, the planned draw, off Σπ)
                    probability = (np.full(budget, budget / members.size) if pi is None
                                   else np.minimum(pi[k] * budget / pi_all.sum(), 1.0))
                    lower, upper = board_cell(y[k], judge[items][k], judge[members], w_all[pick][k], w_all,
                                              probability)
                    hit = lower <= cell_truth <= upper  # running intersection: covered now = covered at every look
                    # the fixed-n PPI++ interval on the same labels (issue 22's estimator, λ tuned), for context
                    fixed_w = w_all[pick][k] / (pi[k] if pi is not None else 1.0)
                    fixed = ppi_mean(y[k], judge[items][k], judge[members], w=fixed_w, w_unlabeled=w_all) \
                        if budget >= 2 else None
                    fixed_hit = fixed is not None and fixed.lower <= cell_truth <= fixed.upper
                    tally.add((draw, budget), hit, fixed_hit, float(upper - lower))


@dataclass
class Pair:
    """Two models' responses to the same cases: truths, judges and latents (for panel labels)."""

    truth: tuple[np.ndarray, np.ndarray]
    judge: tuple[np.ndarray, np.ndarray]
    latent: tuple[np.ndarray, np.ndarray]
    weights: np.ndarray


def judged(rng: np.random.Generator, bench: Benchmark, design: Design, latent: np.ndarray, members: np.ndarray,
           bias: float) -> np.ndarray:
    """The judge's composite (0–1) of these responses with an extra bias (points of 0–3)."""
    sd = np.asarray(design.judge_sd)[bench.dimension[bench.response_case[members]]]
    raw = np.clip(np.rint(latent + bias + rng.normal(size=latent.shape) * sd[:, None]), 0, 3)
    return (raw * bench.sub_weight[bench.response_case[members]] / 3.0).sum(axis=1) / 100


def model_latent(rng: np.random.Generator, bench: Benchmark, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One model's responses only (the latent model of ``responses_draw``): (response indices, latent, weights)."""
    members = np.flatnonzero(bench.response_model == m)
    case = bench.response_case[members]
    case_effect = rng.normal(0, 0.45, bench.dimension.size)
    tradition_effect = rng.normal(0, 0.15, len(TRADITIONS))
    mean = (1.5 + ABILITY[m] + case_effect[case] + DIFFICULTY_SHIFT[bench.difficulty[case]]
            + tradition_effect[bench.tradition[case]] + rng.normal(0, 0.35, case.size))
    latent = mean[:, None] + rng.normal(0, 0.3, (case.size, 4))
    return members, latent, bench.sub_weight[case] / 3.0


def pair_draw(rng: np.random.Generator, bench: Benchmark, design: Design, gap: float) -> Pair:
    """Model a and b on one model's cases: equal truth (gap 0, the judge over-scores a by 0.3 of 3) or a true
    gap ≈ ``gap`` of 1 (b's latent shifted down until the truths differ by it; judge unbiased)."""
    members, latent_a, weights = model_latent(rng, bench, MONITOR_MODEL)

    def truth_of(latent: np.ndarray) -> np.ndarray:
        return (expected_score(latent) * weights).sum(axis=1) / 100

    truth_a = truth_of(latent_a)
    if gap == 0:
        latent_b = latent_a
        bias_a = 0.3
    else:
        low, high = 0.0, 1.5  # shift of b's latent: bisection on the mean truth gap (to ~1e-4 of the shift)
        for _ in range(14):
            mid = (low + high) / 2
            low, high = (mid, high) if truth_a.mean() - truth_of(latent_a - mid).mean() < gap else (low, mid)
        latent_b = latent_a - (low + high) / 2
        bias_a = 0.0
    return Pair((truth_a, truth_of(latent_b)),
                (judged(rng, bench, design, latent_a, members, bias_a), judged(rng, bench, design, latent_b, members, 0.0)),
                (latent_a, latent_b), weights)


def monitored(rng: np.random.Generator, pair: Pair, *, paired: bool, horizon: int) -> tuple[int | None, str, float]:
    """Label both models one response at a time (uniform, without replacement), look after every pair, stop at
    the first verdict. Returns (looks to the verdict or None, the verdict, the pair's true gap)."""
    size = pair.truth[0].size
    pick_a = rng.permutation(size)[:ANYTIME_MAX_LABELS]
    pick_b = pick_a if paired else rng.permutation(size)[:ANYTIME_MAX_LABELS]
    samples = []
    for side, pick in ((0, pick_a), (1, pick_b)):
        y = panel_label(rng, pair.latent[side][pick], pair.weights[pick]) / 100
        samples.append(LabelledSample(y, pair.judge[side][pick], pair.judge[side]))
    lower, upper = difference_cs_path(samples[0], samples[1], paired=paired, horizon=horizon,
                                      max_labels=ANYTIME_MAX_LABELS)
    true_gap = float(pair.truth[0].mean() - pair.truth[1].mean())
    separated = (lower > 0) | (upper < 0)
    equivalent = (lower > -ANYTIME_MARGIN) & (upper < ANYTIME_MARGIN)
    stop = np.flatnonzero(separated | equivalent)
    if not stop.size:
        return None, "continue", true_gap
    t = int(stop[0])
    return t + 1, ("separated" if separated[t] else "equivalent"), true_gap


def step_sd(rng: np.random.Generator, pair: Pair, *, paired: bool) -> float:
    """sd of one step of the difference with the population's optimal λ (what a pilot would estimate)."""
    residuals = []
    for side in (0, 1):
        y = panel_label(rng, pair.latent[side], pair.weights) / 100
        yhat = pair.judge[side]
        lam = float(np.clip(np.cov(y, yhat)[0, 1] / np.var(yhat, ddof=1), 0, 1))
        residuals.append(y - lam * yhat)
    if paired:
        return float(np.std(residuals[0] - residuals[1], ddof=1))
    return math.sqrt(float(np.var(residuals[0], ddof=1) + np.var(residuals[1], ddof=1)))


def anytime_width(rng: np.random.Generator, bench: Benchmark, design: Design) -> tuple[float, float, float]:
    """Widths at 100 labels per model (uniform, no weights): anytime boundary, betting, fixed-n PPI++ (tuned λ)."""
    members, latent, weights = model_latent(rng, bench, MONITOR_MODEL)
    judge = judged(rng, bench, design, latent, members, float(MODEL_BIAS[MONITOR_MODEL]))
    pick = rng.permutation(members.size)[:ANYTIME_WIDTH_N]
    y = panel_label(rng, latent[pick], weights[pick]) / 100
    lower, upper = board_cell(y, judge[pick], judge, np.ones(y.size), np.ones(judge.size),
                              np.full(y.size, ANYTIME_WIDTH_N / judge.size))  # a draw planned at 100 labels
    betting = mean_cs(y, judge[pick], judge, method="betting", horizon=ANYTIME_WIDTH_N)
    fixed = ppi_mean(y, judge[pick], judge)
    return upper - lower, betting.width, fixed.upper - fixed.lower


def board_cell(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, w: np.ndarray, w_u: np.ndarray,
               pi: np.ndarray) -> tuple[float, float]:
    """The calibrated builder's interval of one cell (labels in arrival order) as the page stores it: its horizon
    the planned draw (Σπ), no maximum of labels."""
    n = y.size
    data = CellData(y=y, yhat=yhat, w=w, pi=pi, case=np.full(n, -1),
                    arrival=np.arange(n, dtype=float), panel_var=np.full(n, np.nan), yhat_u=yhat_u, w_u=w_u,
                    case_u=np.full(yhat_u.size, -1))
    block = as_estimate(mean_estimate(data, alpha=ALPHA), alpha=ALPHA, covered=1.0, skipped=[])
    if block.lower is None or block.upper is None:
        return 0.0, 1.0  # no interval: the page shows the whole scale
    return block.lower, block.upper


def normal_mixture_ratio(n: int, alpha: float) -> float:
    """The textbook two-sided normal-mixture sequence tuned at n (Howard et al. 2021 eq. 14) over z at n."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / n
    half = math.sqrt(2 * (n * rho2 + 1) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha))
    return half * math.sqrt(n) / float(scipy_stats.norm.ppf(1 - alpha / 2))


def run_anytime(bench: Benchmark, *, cell_reps: int, monitor_reps: int, seed: int) -> str:
    """Every issue-31 figure; returns the last line."""
    started = time.perf_counter()
    design = DESIGNS[0]  # "uniform" judge error (corr ≈ 0.86); the cells also run on "moderate" (≈ 0.73)
    print()
    print(f"anytime (issue 31): cells = model × dimension, budgets {ANYTIME_BUDGETS} labels, {cell_reps} repetitions "
          f"per judge design × {MODELS * len(DIMENSIONS)} cells; every sequence valid for {ANYTIME_MAX_LABELS} looks")
    print(f"{'judge':9} {'draw':8} {'budget':>6} {'cover':>6} {'fixed-n PPI++':>13} {'width':>6}  "
          "(cover: at every look up to the budget; fixed-n: issue 22's interval on the same labels)")
    coverages = []
    for j, cell_design in enumerate((DESIGNS[0], DESIGNS[2])):
        rng = np.random.default_rng([seed, 31, j])
        tally = AnytimeTally()
        for _ in range(cell_reps):
            anytime_cells(rng, bench, cell_design, tally)
        for key in sorted(tally.cells, key=lambda k: (k[0] != "uniform", k[1])):
            cells = tally.cells[key]
            coverage = tally.covered[key] / cells
            coverages.append(coverage)
            print(f"{cell_design.name:9} {key[0]:8} {key[1]:6d} {coverage:6.3f} "
                  f"{tally.fixed_covered[key] / cells:13.3f} {tally.width[key] / cells:6.3f}", flush=True)
    rng = np.random.default_rng([seed, 31, 9])
    widths = np.array([anytime_width(rng, bench, design) for _ in range(max(monitor_reps // 4, 50))])
    w = float(widths[:, 0].mean() / widths[:, 2].mean())
    w_betting = float(widths[:, 1].mean() / widths[:, 2].mean())
    print(f"width at {ANYTIME_WIDTH_N} labels over fixed-n PPI++: boundary {w:.3f}, betting (distribution-free) "
          f"{w_betting:.3f}, textbook normal mixture tuned at {ANYTIME_WIDTH_N} {normal_mixture_ratio(ANYTIME_WIDTH_N, ALPHA):.3f}")
    results: dict[tuple[float, bool], dict[str, float]] = {}
    for gap in (0.0, ANYTIME_GAP):
        for paired in (False, True):
            rng = np.random.default_rng([seed, 31, 10 + int(gap * 10), int(paired)])
            sd = float(np.mean([step_sd(rng, pair_draw(rng, bench, design, ANYTIME_GAP), paired=paired)
                                for _ in range(5)]))
            horizon = max(2, min(ANYTIME_MAX_LABELS, math.ceil(((Z + 0.8416) * sd / ANYTIME_GAP) ** 2)))
            looks, verdicts, gaps = [], [], []
            for _ in range(monitor_reps):
                steps, verdict, true_gap = monitored(rng, pair_draw(rng, bench, design, gap), paired=paired,
                                                     horizon=horizon)
                looks.append(steps if steps is not None else ANYTIME_MAX_LABELS)
                verdicts.append(verdict)
                gaps.append(true_gap)
            separated = float(np.mean([v == "separated" for v in verdicts]))
            power = min(max(separated, 0.5), 0.99)
            planned = ((Z + float(scipy_stats.norm.isf(1 - power))) * sd / ANYTIME_GAP) ** 2
            forecast = labels_to_verdict(gap=ANYTIME_GAP, sd=sd, horizon=horizon, max_labels=ANYTIME_MAX_LABELS)
            results[(gap, paired)] = {"separated": separated, "looks": float(np.mean(looks)), "planned": planned,
                                      "power": separated, "sd": sd, "gap": float(np.mean(gaps)), "horizon": horizon,
                                      "forecast": float(forecast.labels or math.nan),
                                      "median": float(np.median(looks))}
    for (gap, paired), r in results.items():
        kind = "paired" if paired else "independent"
        if gap == 0:
            print(f"equal models ({kind}), judge over-scores a by 0.3 of 3, a look after every label up to "
                  f"{ANYTIME_MAX_LABELS}: false 'separated' {r['separated']:.3f}")
        else:
            print(f"gap {r['gap']:.3f} ({kind}): separated {r['separated']:.3f} within {ANYTIME_MAX_LABELS} looks, "
                  f"mean labels to a verdict {r['looks']:.1f} (median {r['median']:.0f}, forecast {r['forecast']:.0f}); "
                  f"fixed-n plan at that power {r['planned']:.1f} (step sd {r['sd']:.3f}, horizon {r['horizon']:.0f})")
    c = min(coverages)
    e = results[(0.0, False)]["separated"]
    independent = results[(ANYTIME_GAP, False)]
    ell = independent["looks"] / independent["planned"]
    print(f"goals: C ≥ 0.94 ({'met' if c >= 0.94 else 'NOT met'}); E ≤ 0.05 ({'met' if e <= 0.05 else 'NOT met'}); "
          f"W ≤ 1.35 ({'met' if w <= 1.35 else 'NOT met'}); L ≤ 0.80 ({'met' if ell <= 0.80 else 'NOT met'})")
    print(f"anytime wall time {time.perf_counter() - started:.1f} s")
    return f"anytime: coverage_min={c:.3f} peeking_error={e:.3f} width_vs_fixed_n={w:.3f} labels_to_verdict_vs_fixed_n={ell:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced run (fewer repetitions, 250 cases each)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per design (quick 300, full 1,000)")
    parser.add_argument("--cases-per-dimension", type=int, default=None, help="quick 250, full 500")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--anytime-only", action="store_true", help="only the issue-31 part (its line is last either way)")
    parser.add_argument("--anytime-reps", type=int, default=None, help="cell repetitions per judge design (quick 40, full 200)")
    args = parser.parse_args()
    reps = args.reps or (300 if args.quick else 1000)
    cases = args.cases_per_dimension or (250 if args.quick else 500)
    started = time.perf_counter()
    bench = benchmark_build(np.random.default_rng(args.seed), cases)
    cell_reps = args.anytime_reps or (40 if args.quick else 200)
    monitor_reps = 400 if args.quick else 1000
    if args.anytime_only:
        print(run_anytime(bench, cell_reps=cell_reps, monitor_reps=monitor_reps, seed=args.seed))
        return
    print(f"calibrated leaderboard: {MODELS} models × {cases} cases × {len(DIMENSIONS)} dimensions "
          f"({bench.response_case.size:,} responses), {len(TRADITIONS)} traditions, {reps} repetitions per design, "
          f"{BUDGET} expert labels ({BUDGET // MODELS} per model, 4 difficulty strata), {RATERS}-expert panel, "
          f"pilot {PILOT}")
    print(f"{'design':9} {'corr':>5} {'cover':>6} {'active':>6} {'judge':>6} {'width/experts':>13} "
          f"{'savings':>8}  note")
    results = {}
    judge_covered = judge_total = 0
    for design in DESIGNS:
        tally = run_design(design, bench, reps, args.seed)
        corr = tally.corr / tally.reps
        coverage = tally.covered / tally.intervals
        coverage_active = tally.covered_active / tally.intervals
        judge_coverage = tally.judge_covered / tally.intervals
        ratio = tally.width_ratio / tally.intervals
        saved = savings(tally)
        results[design.name] = (corr, coverage, coverage_active, ratio, saved)
        judge_covered += tally.judge_covered
        judge_total += tally.intervals
        print(f"{design.name:9} {corr:5.2f} {coverage:6.3f} {coverage_active:6.3f} {judge_coverage:6.3f} "
              f"{ratio:13.3f} {saved:8.3f}  {design.note}", flush=True)
    c = min(min(r[1], r[2]) for r in results.values())
    j = judge_covered / judge_total
    strong = [r[3] for r in results.values() if r[0] >= 0.7]
    w = max(strong) if strong else float("nan")
    s = results["varying"][4]
    print(f"goals: C ≥ 0.93 on every design ({'met' if c >= 0.93 else 'NOT met'}); W ≤ 0.80 where corr ≥ 0.7 "
          f"({'met' if w <= 0.80 else 'NOT met'}); S ≥ 0.20 where error varies ({'met' if s >= 0.20 else 'NOT met'}); "
          f"active ≥ −0.05 where it does not: {results['uniform'][4]:.3f} "
          f"({'met' if results['uniform'][4] >= -0.05 else 'NOT met'})")
    print(f"wall time {time.perf_counter() - started:.1f} s")
    print(f"calibrated: coverage={c:.3f} judge_only_coverage={j:.3f} width_vs_experts_only={w:.3f} active_savings={s:.3f}")
    print(run_anytime(bench, cell_reps=cell_reps, monitor_reps=monitor_reps, seed=args.seed))


if __name__ == "__main__":
    main()
