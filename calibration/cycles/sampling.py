"""Drawing a calibration set: stratified, proportional, seeded, with edge cases and a 25 % refresh.

Pure functions over plain data (no Django): `calibration.cycles.selectors` turns rows into `PoolItem`s,
`draw()` decides, `calibration.cycles.services.cycle_commit` stores. Methodology §6.1.3: at least 50 responses
per dimension, stratified by difficulty, tradition and model, random plus edge cases, 25 % new each cycle.

Within each dimension:
1. anchors of the previous cycle are kept; of its other items, ceil(refresh × n) are replaced and the
   rest kept (chosen with the seeded generator);
2. the remaining places are filled from responses never drawn before: first edge cases (a share of
   the new places), then stratified random draws with proportional allocation over the
   difficulty × tradition × model strata, rounded by the largest-remainder (Hamilton) method;
3. every random choice uses `random.Random(f"{seed}:{dimension}")` over inputs sorted by id, so the
   same seed and pool give the same draw, item for item.

Strategies for the stratified random places (step 2): `proportional` (n_h ∝ N_h, largest remainder) or
`active` (Neyman, n_h ∝ N_h·S_h with S_h the residual SD of the judge against the experts, and within a
stratum unequal probabilities by the judge's uncertainty: `calibration.cycles.active`).

Every drawn item carries its inclusion probability π — its probability of being in this draw *given what
was decided before it* (the previous cycle's items, the edge-case pick, the allocation), so that
Σ_{i in draw} y_i/π_i is an unbiased (Horvitz–Thompson) estimate of the total over the responses that
could be drawn (docs/active-allocation.md):
- anchors: 1 (kept for certain); other carried items: r/M, the r kept of the M previous non-anchor items of
  the dimension still in the pool (a uniformly random subset);
- random items: n_h/N_h (proportional, or active without judge uncertainty), or the exact systematic-PPS
  π_i (active), N_h being the stratum's eligible pool (never drawn last cycle, not taken as an edge case);
- edge cases: None — picked on purpose, not a random sample (the leaderboard leaves them out).
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from stats.apportion import largest_remainder
from stats.ppi import neyman_allocation

from .active import ActiveDesign, pps_probabilities, systematic_pps, uncertainty_weights

SOURCE_RANDOM = "random"
SOURCE_EDGE_LENGTH = "edge_length"
SOURCE_EDGE_JUDGE = "edge_judge"
SOURCE_CARRIED = "carried"

STRATEGY_PROPORTIONAL = "proportional"
STRATEGY_ACTIVE = "active"
STRATEGIES = (STRATEGY_PROPORTIONAL, STRATEGY_ACTIVE)

BASIS_DRAWN = "drawn"
BASIS_CARRIED = "carried"
BASIS_EDGE_CASE = "edge_case"


@dataclass(frozen=True)
class PoolItem:
    """A response that may be drawn, with the facets it is stratified by."""

    response_id: int
    dimension: str
    difficulty: str
    tradition: str  # tradition key, "" for tradition-neutral cases
    model: str
    word_count: int


@dataclass(frozen=True)
class PreviousItem:
    response_id: int
    is_anchor: bool


@dataclass(frozen=True)
class DrawParams:
    seed: int
    min_per_dimension: int = 50
    refresh_fraction: float = 0.25
    edge_fraction: float = 0.10
    length_tail: float = 0.05  # top and bottom 5 % of word count are length edge cases
    strategy: str = STRATEGY_PROPORTIONAL

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"DrawParams.strategy: {self.strategy!r} is not one of {', '.join(STRATEGIES)}")


@dataclass(frozen=True)
class DrawnItem:
    response_id: int
    source: str
    is_anchor: bool = False
    inclusion_probability: float | None = None  # None: not a random sample (edge cases)
    inclusion_basis: str = BASIS_DRAWN
    stratum: tuple[str, ...] = ()  # the design stratum, e.g. (dimension, difficulty, tradition, model)


@dataclass
class DimensionSummary:
    dimension: str
    pool: int
    minimum: int
    target: int
    drawn: int = 0
    anchors: int = 0
    kept: int = 0
    replaced: int = 0
    edge: int = 0
    random: int = 0
    below_minimum: bool = False
    uncovered: int = 0  # eligible responses in strata that got no random draw (inclusion probability 0)


@dataclass
class StratumRow:
    dimension: str
    difficulty: str
    tradition: str
    model: str
    pool: int
    drawn: int
    eligible: int = 0  # never drawn in the previous cycle and not taken as an edge case
    random: int = 0  # of `drawn`, the stratified random draws of this cycle
    sd: float | None = None  # active: the residual SD S_h used by the Neyman allocation
    sd_level: str = ""  # active: "stratum", "model", "dimension" or "default"


@dataclass
class DrawResult:
    items: list[DrawnItem] = field(default_factory=list)
    dimensions: list[DimensionSummary] = field(default_factory=list)
    strata: list[StratumRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strategy: str = STRATEGY_PROPORTIONAL

    @property
    def fingerprint(self) -> str:
        """A digest of the strategy and the drawn set with each item's inclusion probability: the commit step
        checks the pool (and, for the active strategy, the labels it learned from) did not change since the preview."""
        payload = [self.strategy, sorted(
            (i.response_id, i.source, i.is_anchor, i.inclusion_basis,
             None if i.inclusion_probability is None else round(i.inclusion_probability, 9)) for i in self.items)]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]

    def as_report(self) -> dict:
        """JSON-serialisable record kept on the cycle."""
        return {
            "strategy": self.strategy,
            "dimensions": [vars(d) for d in self.dimensions],
            "strata": [vars(s) for s in self.strata],
            "notes": list(self.notes),
            "fingerprint": self.fingerprint,
        }


def length_edge_ids(items: Sequence[PoolItem], tail: float) -> set[int]:
    """Responses in the bottom or top `tail` share of word count (at least one of each when any)."""
    if not items or tail <= 0:
        return set()
    ranked = sorted(items, key=lambda i: (i.word_count, i.response_id))
    n = max(1, math.ceil(tail * len(ranked)))
    return {i.response_id for i in ranked[:n]} | {i.response_id for i in ranked[-n:]}


def _ceil_fraction(fraction: float, n: int) -> int:
    return math.ceil(Fraction(str(fraction)) * n)


def _round_half_up(fraction: float, n: int) -> int:
    return math.floor(Fraction(str(fraction)) * n + Fraction(1, 2))


def draw(
    pool: Iterable[PoolItem],
    params: DrawParams,
    *,
    previous: Iterable[PreviousItem] = (),
    judge_edge_ids: Iterable[int] = (),
    dimensions: Sequence[str] | None = None,
    design: ActiveDesign | None = None,
) -> DrawResult:
    """Draw a calibration set from `pool`; see the module docstring for the rules. `design` feeds the active
    strategy (residual SDs, judge uncertainty); without it the active strategy uses the default SD everywhere."""
    by_dimension: dict[str, list[PoolItem]] = defaultdict(list)
    for item in sorted(pool, key=lambda i: i.response_id):
        by_dimension[item.dimension].append(item)
    previous = sorted(previous, key=lambda p: p.response_id)
    previous_ids = {p.response_id for p in previous}
    judge_edges = set(judge_edge_ids)
    result = DrawResult(strategy=params.strategy)
    if params.strategy == STRATEGY_ACTIVE:
        design = design or ActiveDesign()
        result.notes.append(_design_note(design))
    pooled_ids = {i.response_id for items in by_dimension.values() for i in items}
    gone = [p for p in previous if p.response_id not in pooled_ids]
    if gone:
        result.notes.append(
            f"{len(gone)} item(s) of the previous cycle are no longer in the pool (inactive case or deleted "
            f"response) and were dropped ({sum(p.is_anchor for p in gone)} of them anchors)."
        )
    for dimension in dimensions if dimensions is not None else sorted(by_dimension):
        _draw_dimension(dimension, by_dimension.get(dimension, []), params, previous, previous_ids,
                        judge_edges, result, design)
    return result


@dataclass
class _Carried:
    """What a dimension keeps of the previous cycle, and how many new draws it still needs."""

    anchors: list[PreviousItem]
    retained: list[PreviousItem]
    replaced: list[PreviousItem]
    fresh: list[PoolItem]
    target: int
    need: int
    drawn: list[DrawnItem]


def _carry_previous(dimension: str, items: list[PoolItem], params: DrawParams, previous: list[PreviousItem],
                    previous_ids: set[int], target: int, rng: random.Random, result: DrawResult) -> _Carried:
    """Keep the previous cycle's anchors and a seeded-random share of its other items still in the pool."""
    by_id = {i.response_id: i for i in items}
    prev_here = [p for p in previous if p.response_id in by_id]
    anchors = [p for p in prev_here if p.is_anchor]
    others = [p for p in prev_here if not p.is_anchor]
    n_replace = _ceil_fraction(params.refresh_fraction, len(others)) if others else 0
    shuffled_others = list(others)
    rng.shuffle(shuffled_others)
    retained, replaced = shuffled_others[: len(others) - n_replace], shuffled_others[len(others) - n_replace :]
    target = max(target, len(anchors))
    if len(anchors) + len(retained) > target:  # the previous set was larger than this target: shed non-anchors
        extra = len(anchors) + len(retained) - target
        replaced, retained = retained[len(retained) - extra :] + replaced, retained[: len(retained) - extra]
    need = target - len(anchors) - len(retained)

    fresh = [i for i in items if i.response_id not in previous_ids]
    if need > len(fresh):
        # Not enough never-drawn responses: take back some of the items meant to be replaced.
        back = need - len(fresh)
        retained += replaced[:back]
        replaced = replaced[back:]
        result.notes.append(
            f"{dimension}: only {len(fresh)} never-drawn response(s) left, so {back} previous item(s) were kept "
            f"beyond the {params.refresh_fraction:.0%} refresh."
        )
        need = len(fresh)

    # Conditional on the previous cycle, the kept non-anchors are a uniformly random subset of its non-anchors
    # still in the pool (a prefix of a seeded shuffle), so each was kept with probability len(retained)/len(others).
    keep = len(retained) / len(others) if others else 1.0
    drawn: list[DrawnItem] = [
        DrawnItem(p.response_id, SOURCE_CARRIED, True, 1.0, BASIS_CARRIED, (dimension, "anchor")) for p in anchors]
    drawn += [DrawnItem(p.response_id, SOURCE_CARRIED, False, keep, BASIS_CARRIED, (dimension, "carried"))
              for p in sorted(retained, key=lambda p: p.response_id)]
    return _Carried(anchors=anchors, retained=retained, replaced=replaced, fresh=fresh, target=target, need=need,
                    drawn=drawn)


def _edge_draws(dimension: str, items: list[PoolItem], fresh: list[PoolItem], need: int, params: DrawParams,
                judge_edges: set[int], rng: random.Random) -> list[DrawnItem]:
    """Edge cases among the never-drawn responses: picked on purpose, no inclusion probability."""
    length_edges = length_edge_ids(items, params.length_tail)
    candidates = sorted((length_edges | judge_edges) & {i.response_id for i in fresh})
    n_edge = min(_round_half_up(params.edge_fraction, need), len(candidates))
    edge_ids = sorted(rng.sample(candidates, n_edge)) if n_edge else []
    return [DrawnItem(rid, SOURCE_EDGE_JUDGE if rid in judge_edges else SOURCE_EDGE_LENGTH,
                      inclusion_basis=BASIS_EDGE_CASE, stratum=(dimension, "edge")) for rid in edge_ids]


@dataclass
class _RandomDraws:
    """The stratified random draws of a dimension, with the strata's sizes, SDs (active design) and quotas."""

    items: list[DrawnItem]
    sizes: dict[tuple[str, str, str], int]
    sds: dict[tuple[str, str, str], tuple[float, str]]
    quotas: dict[tuple[str, str, str], int]


def _random_draws(dimension: str, fresh: list[PoolItem], taken: set[int], places: int, params: DrawParams,
                  design: ActiveDesign | None, rng: random.Random) -> _RandomDraws:
    """Stratified random draws of `places` responses among the fresh ones not `taken` (proportional, or Neyman
    with uncertainty-weighted PPS under the active design)."""
    strata: dict[tuple[str, str, str], list[PoolItem]] = defaultdict(list)
    for item in fresh:
        if item.response_id not in taken:
            strata[(item.difficulty, item.tradition, item.model)].append(item)
    sizes = {key: len(members) for key, members in strata.items()}
    sds: dict[tuple[str, str, str], tuple[float, str]] = {}
    if params.strategy == STRATEGY_ACTIVE and design is not None:
        sds = {key: design.residuals.sd(dimension, key) for key in strata}
        quotas = _neyman(sizes, {key: sd for key, (sd, _) in sds.items()}, places)
    else:
        quotas = largest_remainder(sizes, places, rng)
    random_items: list[DrawnItem] = []
    for key in sorted(strata):
        members = strata[key]
        ids = [i.response_id for i in members]
        weights = (uncertainty_weights(ids, design.uncertainty)
                   if params.strategy == STRATEGY_ACTIVE and design is not None and quotas[key] < len(ids) else None)
        if weights is None:
            chosen = [i.response_id for i in rng.sample(members, quotas[key])]
            pi = dict.fromkeys(chosen, quotas[key] / len(ids))
        else:
            probabilities = pps_probabilities(weights, quotas[key])
            chosen = systematic_pps(ids, probabilities, rng)
            pi = dict(zip(ids, probabilities, strict=True))
        random_items += [DrawnItem(rid, SOURCE_RANDOM, False, pi[rid], BASIS_DRAWN, (dimension, *key)) for rid in chosen]
    return _RandomDraws(items=random_items, sizes=sizes, sds=sds, quotas=quotas)


def _stratum_rows(dimension: str, items: list[PoolItem], drawn: list[DrawnItem], random_ids: list[int],
                  draws: _RandomDraws) -> list[StratumRow]:
    """The stratification table of a dimension: per stratum, pool size, drawn, eligible, random, SD."""
    drawn_ids = {d.response_id for d in drawn}
    random_set = set(random_ids)
    table: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in items:
        row = table[(item.difficulty, item.tradition, item.model)]
        row[0] += 1
        row[1] += item.response_id in drawn_ids
        row[2] += item.response_id in random_set
    rows = []
    for key, (n_pool, n_drawn, n_random) in sorted(table.items()):
        sd, level = draws.sds.get(key, (None, ""))
        rows.append(StratumRow(dimension, *key, n_pool, n_drawn, eligible=draws.sizes.get(key, 0),
                               random=n_random, sd=sd, sd_level=level))
    return rows


def _draw_dimension(
    dimension: str,
    items: list[PoolItem],
    params: DrawParams,
    previous: list[PreviousItem],
    previous_ids: set[int],
    judge_edges: set[int],
    result: DrawResult,
    design: ActiveDesign | None,
) -> None:
    rng = random.Random(f"{params.seed}:{dimension}")
    target = min(params.min_per_dimension, len(items))
    summary = DimensionSummary(dimension=dimension, pool=len(items), minimum=params.min_per_dimension, target=target)
    if len(items) < params.min_per_dimension:
        summary.below_minimum = True
        result.notes.append(
            f"{dimension}: the pool has only {len(items)} response(s), fewer than the minimum of "
            f"{params.min_per_dimension} per dimension — all {len(items)} are drawn and this dimension is "
            f"BELOW the methodology's minimum."
        )

    carried = _carry_previous(dimension, items, params, previous, previous_ids, target, rng, result)
    drawn = carried.drawn
    edges = _edge_draws(dimension, items, carried.fresh, carried.need, params, judge_edges, rng)
    drawn += edges
    edge_ids = [d.response_id for d in edges]
    draws = _random_draws(dimension, carried.fresh, set(edge_ids), carried.need - len(edge_ids), params, design, rng)
    drawn += sorted(draws.items, key=lambda d: d.response_id)
    random_ids = [d.response_id for d in draws.items]
    # Strata left without a random draw (more strata than places): their responses had inclusion probability 0,
    # so this cycle's estimate cannot cover them; counted on the summary, the leaderboard reports them.
    summary.uncovered = sum(draws.sizes[key] for key in draws.sizes if draws.quotas[key] == 0)

    summary.target = carried.target
    summary.drawn = len(drawn)
    summary.anchors = len(carried.anchors)
    summary.kept = len(carried.retained)
    summary.replaced = len(carried.replaced)
    summary.edge = len(edge_ids)
    summary.random = len(random_ids)
    result.dimensions.append(summary)
    result.items += drawn
    result.strata += _stratum_rows(dimension, items, drawn, random_ids, draws)


def _neyman(sizes: dict[tuple[str, str, str], int], sds: dict[tuple[str, str, str], float], total: int
            ) -> dict[tuple[str, str, str], int]:
    """Neyman allocation of `total` places (n_h ∝ N_h·S_h, at least one per stratum while places last)."""
    if total <= 0 or not sizes:
        return dict.fromkeys(sizes, 0)
    if total >= sum(sizes.values()):
        return dict(sizes)
    # A floor of one draw per stratum while there are at least as many places as strata; with fewer, some strata
    # get none (counted as `uncovered` on the dimension's summary).
    floor = 1 if total >= sum(1 for n in sizes.values() if n > 0) else 0
    alloc = neyman_allocation(sizes, sds, total, floor=floor)
    return {key: int(alloc.get(key, 0)) for key in sizes}


def _design_note(design: ActiveDesign) -> str:
    residuals = design.residuals
    if residuals.labels:
        lambdas = ", ".join(f"{d} {lam:.2f}" for d, lam in sorted(residuals.lambdas.items()))
        text = (f"Active allocation: residual SDs from {residuals.labels} expert-labelled response(s) (λ per dimension: "
                f"{lambdas}); strata with fewer than 2 labels use the model's SD, then the dimension's, then "
                f"{residuals.default}.")
    else:
        text = (f"Active allocation: no expert-labelled responses with a judge composite yet, so every stratum uses "
                f"the default residual SD {residuals.default} (the allocation is proportional).")
    if design.uncertainty_source:
        text += f" Within strata, responses are drawn with probability by the judge's {design.uncertainty_source}."
    else:
        text += " Within strata, responses are drawn uniformly (no measure of the judge's own uncertainty)."
    return text
