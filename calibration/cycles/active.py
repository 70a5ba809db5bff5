"""Active allocation of expert effort (issue 22 item 5): pure functions over plain data, no Django.

The `active` draw strategy puts the new random places of a dimension where they shrink the calibrated
score's uncertainty most (Zrnic & Candès, "Active statistical inference", ICML 2024; Neyman 1934):

- **between strata** (difficulty × tradition × model within a dimension) by Neyman allocation,
  n_h ∝ N_h · S_h, where S_h is the residual standard deviation sd(Y − λŶ) of the stratum's
  already-labelled responses (Y the expert truth, Ŷ the judge's composite, both in [0, 1]);
- **within a stratum** by the judge's own uncertainty u_i (run-to-run spread over a repeat series, or the
  primary/secondary judges' disagreement), with unequal-probability systematic sampling whose
  first-order inclusion probabilities π_i = n_h·w_i / Σw are exact (capped at 1, iteratively), and
  w_i ≥ `UNCERTAINTY_FLOOR_SHARE` × the stratum's mean uncertainty, so every eligible response keeps
  π_i > 0 and an inverse-probability-weighted estimate stays unbiased.

`residual_sd_table` falls back for a stratum with fewer than 2 labels to the model's residual SD within
the dimension, then to the dimension's, then to `DEFAULT_RESIDUAL_SD`; the level used is recorded.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

# A residual SD of 0.2 on the [0, 1] composite scale: a judge off by about half a rubric point (of 3) on average.
DEFAULT_RESIDUAL_SD = 0.2
# Within a stratum no response weighs less than a quarter of the stratum's mean judge uncertainty.
UNCERTAINTY_FLOOR_SHARE = 0.25
MIN_LABELS = 2

StratumKey = tuple[str, str, str]  # (difficulty, tradition, model) within a dimension


@dataclass(frozen=True)
class Labelled:
    """A response with an expert truth and a judge composite, with the facets it is stratified by."""

    dimension: str
    difficulty: str
    tradition: str
    model: str
    truth: float
    judge: float


@dataclass
class ResidualTable:
    """Residual SDs sd(Y − λŶ) by stratum, by (dimension, model) and by dimension, with λ per dimension."""

    lambdas: dict[str, float] = field(default_factory=dict)
    strata: dict[tuple[str, str, str, str], tuple[float, int]] = field(default_factory=dict)
    models: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)
    dimensions: dict[str, tuple[float, int]] = field(default_factory=dict)
    default: float = DEFAULT_RESIDUAL_SD

    def sd(self, dimension: str, key: StratumKey) -> tuple[float, str]:
        """(S_h, the level it came from: "stratum", "model", "dimension" or "default")."""
        difficulty, tradition, model = key
        if (found := self.strata.get((dimension, difficulty, tradition, model))) is not None:
            return found[0], "stratum"
        if (found := self.models.get((dimension, model))) is not None:
            return found[0], "model"
        if (found := self.dimensions.get(dimension)) is not None:
            return found[0], "dimension"
        return self.default, "default"

    @property
    def labels(self) -> int:
        return sum(n for _, n in self.dimensions.values())


def power_lambda(truth: Sequence[float], judge: Sequence[float]) -> float:
    """PPI++'s power-tuning λ = Cov(Y, Ŷ) / Var(Ŷ), clipped to [0, 1] (Angelopoulos, Duchi & Zrnic 2023, eq. 5,
    with the n/N term dropped: the unlabelled set is much larger). A constant judge gives 0; < 2 labels give 1.
    Example: Y = Ŷ → 1; Y = 2Ŷ → clipped to 1; Y independent of Ŷ → about 0."""
    if len(truth) < MIN_LABELS:
        return 1.0
    y, yhat = np.asarray(truth, dtype=float), np.asarray(judge, dtype=float)
    var = float(np.var(yhat, ddof=1))
    if var <= 0:
        return 0.0
    cov = float(np.cov(y, yhat, ddof=1)[0, 1])
    return min(1.0, max(0.0, cov / var))


def residual_sd_table(labelled: Iterable[Labelled], *, default: float = DEFAULT_RESIDUAL_SD) -> ResidualTable:
    """Residual SDs sd(Y − λŶ) (ddof 1, λ tuned per dimension) at the three levels; a group needs ≥ 2 labels."""
    by_dimension: dict[str, list[Labelled]] = defaultdict(list)
    for row in labelled:
        by_dimension[row.dimension].append(row)
    table = ResidualTable(default=default)
    for dimension, rows in by_dimension.items():
        lam = power_lambda([r.truth for r in rows], [r.judge for r in rows])
        table.lambdas[dimension] = lam
        strata: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
        models: dict[tuple[str, str], list[float]] = defaultdict(list)
        residuals = []
        for r in rows:
            e = r.truth - lam * r.judge
            strata[(dimension, r.difficulty, r.tradition, r.model)].append(e)
            models[(dimension, r.model)].append(e)
            residuals.append(e)
        for target, groups in ((table.strata, strata), (table.models, models)):
            for key, values in groups.items():
                if len(values) >= MIN_LABELS:
                    target[key] = (float(np.std(values, ddof=1)), len(values))  # type: ignore[index]
        if len(residuals) >= MIN_LABELS:
            table.dimensions[dimension] = (float(np.std(residuals, ddof=1)), len(residuals))
    return table


def pps_probabilities(weights: Sequence[float], n: int) -> list[float]:
    """Inclusion probabilities proportional to size for a fixed sample of n: π_i = n·w_i/Σw, capped at 1.

    Capping is iterative: responses whose π would reach 1 are taken for certain and the rest share the places
    left (Särndal, Swensson & Wretman, Model Assisted Survey Sampling, §3.6). Σπ = n exactly (up to rounding);
    every weight must be > 0. Example: weights (1, 1, 2), n = 2 → (0.5, 0.5, 1.0).
    """
    if any(w <= 0 for w in weights):
        raise ValueError("pps_probabilities: every weight must be > 0")
    size = len(weights)
    if n >= size:
        return [1.0] * size
    if n <= 0:
        return [0.0] * size
    pi = [0.0] * size
    remaining = list(range(size))
    k = n
    while True:
        total = sum(weights[i] for i in remaining)
        capped = [i for i in remaining if k * weights[i] >= total]
        if not capped:
            for i in remaining:
                pi[i] = k * weights[i] / total
            return pi
        for i in capped:
            pi[i] = 1.0
        remaining = [i for i in remaining if i not in set(capped)]
        k -= len(capped)
        if k <= 0 or not remaining:
            return pi


def systematic_pps(ids: Sequence[int], pi: Sequence[float], rng: random.Random) -> list[int]:
    """Systematic sampling with unequal probabilities, in a random order (Madow 1949): each id is drawn with
    probability exactly π_i and the sample has exactly Σπ ids. Lay the π_i end to end in a shuffled order and take
    the ids whose segment holds one of the points start, start + 1, … with start uniform on [0, 1)."""
    order = list(range(len(ids)))
    rng.shuffle(order)
    start = rng.random()
    chosen: list[int] = []
    cumulative = 0.0
    for index in order:
        low = cumulative
        cumulative += pi[index]
        if math.ceil(cumulative - start) > math.ceil(low - start):
            chosen.append(ids[index])
    return sorted(chosen)


def uncertainty_weights(ids: Sequence[int], uncertainty: Mapping[int, float]) -> list[float] | None:
    """Within-stratum weights from the judge's uncertainty, floored at a share of the stratum's mean; a response
    without a measure gets the mean. None when nothing in the stratum has a positive measure (sample uniformly)."""
    known = [uncertainty[i] for i in ids if i in uncertainty]
    mean = float(np.mean(known)) if known else 0.0
    if mean <= 0:
        return None
    floor = UNCERTAINTY_FLOOR_SHARE * mean
    return [max(uncertainty.get(i, mean), floor) for i in ids]


@dataclass(frozen=True)
class ActiveDesign:
    """What the active strategy knows: residual SDs per stratum and the judge's uncertainty per response."""

    residuals: ResidualTable = field(default_factory=ResidualTable)
    uncertainty: Mapping[int, float] = field(default_factory=dict)
    uncertainty_source: str = ""  # e.g. "run-to-run spread over 3 runs", "" when none
