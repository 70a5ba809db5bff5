"""Drawing a calibration set: stratified, proportional, seeded, with edge cases and a 25 % refresh.

Pure functions over plain data (no Django): `calibration.selectors` turns rows into `PoolItem`s,
`draw()` decides, `calibration.services.cycle_commit` stores. Methodology §6.1.3: at least 50 responses
per dimension, stratified by difficulty, tradition and model, random plus edge cases, 25 % new each cycle.

Within each dimension:
1. anchors of the previous cycle are kept; of its other items, ceil(refresh × n) are replaced and the
   rest kept (chosen with the seeded generator);
2. the remaining places are filled from responses never drawn before: first edge cases (a share of
   the new places), then stratified random draws with proportional allocation over the
   difficulty × tradition × model strata, rounded by the largest-remainder (Hamilton) method;
3. every random choice uses `random.Random(f"{seed}:{dimension}")` over inputs sorted by id, so the
   same seed and pool give the same draw, item for item.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

SOURCE_RANDOM = "random"
SOURCE_EDGE_LENGTH = "edge_length"
SOURCE_EDGE_JUDGE = "edge_judge"
SOURCE_CARRIED = "carried"

K = TypeVar("K", bound=Hashable)


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


@dataclass(frozen=True)
class DrawnItem:
    response_id: int
    source: str
    is_anchor: bool = False


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


@dataclass
class StratumRow:
    dimension: str
    difficulty: str
    tradition: str
    model: str
    pool: int
    drawn: int


@dataclass
class DrawResult:
    items: list[DrawnItem] = field(default_factory=list)
    dimensions: list[DimensionSummary] = field(default_factory=list)
    strata: list[StratumRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        """A digest of the drawn set: the commit step checks the pool did not change since the preview."""
        payload = sorted((i.response_id, i.source, i.is_anchor) for i in self.items)
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]

    def as_report(self) -> dict:
        """JSON-serialisable record kept on the cycle."""
        return {
            "dimensions": [vars(d) for d in self.dimensions],
            "strata": [vars(s) for s in self.strata],
            "notes": list(self.notes),
            "fingerprint": self.fingerprint,
        }


def largest_remainder(sizes: dict[K, int], k: int, rng: random.Random) -> dict[K, int]:
    """Allocate k draws over strata in proportion to their sizes, rounding by largest remainder.

    Hamilton's method: each stratum gets floor(k·n_s/N); the places left go to the largest fractional
    parts (exact fractions; ties broken by the seeded generator). Never exceeds a stratum's size.
    Example: sizes {a: 5, b: 3, c: 2}, k = 5 → quotas 2.5, 1.5, 1.0 → floors 2, 1, 1 → a or b gets the last.
    """
    total = sum(sizes.values())
    if k >= total:
        return dict(sizes)
    if k <= 0 or total == 0:
        return {key: 0 for key in sizes}
    exact = {key: Fraction(k * n, total) for key, n in sizes.items()}
    alloc = {key: math.floor(q) for key, q in exact.items()}
    left = k - sum(alloc.values())
    order = sorted(sizes, key=repr)
    rng.shuffle(order)
    order.sort(key=lambda key: exact[key] - alloc[key], reverse=True)  # stable: shuffled order breaks ties
    for key in order[:left]:
        alloc[key] += 1
    return alloc


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
) -> DrawResult:
    """Draw a calibration set from `pool`; see the module docstring for the rules."""
    by_dimension: dict[str, list[PoolItem]] = defaultdict(list)
    for item in sorted(pool, key=lambda i: i.response_id):
        by_dimension[item.dimension].append(item)
    previous = sorted(previous, key=lambda p: p.response_id)
    previous_ids = {p.response_id for p in previous}
    judge_edges = set(judge_edge_ids)
    result = DrawResult()
    pooled_ids = {i.response_id for items in by_dimension.values() for i in items}
    gone = [p for p in previous if p.response_id not in pooled_ids]
    if gone:
        result.notes.append(
            f"{len(gone)} item(s) of the previous cycle are no longer in the pool (inactive case or deleted "
            f"response) and were dropped ({sum(p.is_anchor for p in gone)} of them anchors)."
        )
    for dimension in dimensions if dimensions is not None else sorted(by_dimension):
        _draw_dimension(dimension, by_dimension.get(dimension, []), params, previous, previous_ids,
                        judge_edges, result)
    return result


def _draw_dimension(
    dimension: str,
    items: list[PoolItem],
    params: DrawParams,
    previous: list[PreviousItem],
    previous_ids: set[int],
    judge_edges: set[int],
    result: DrawResult,
) -> None:
    rng = random.Random(f"{params.seed}:{dimension}")
    by_id = {i.response_id: i for i in items}
    target = min(params.min_per_dimension, len(items))
    summary = DimensionSummary(dimension=dimension, pool=len(items), minimum=params.min_per_dimension, target=target)
    if len(items) < params.min_per_dimension:
        summary.below_minimum = True
        result.notes.append(
            f"{dimension}: the pool has only {len(items)} response(s), fewer than the minimum of "
            f"{params.min_per_dimension} per dimension — all {len(items)} are drawn and this dimension is "
            f"BELOW the methodology's minimum."
        )

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

    drawn: list[DrawnItem] = [DrawnItem(p.response_id, SOURCE_CARRIED, True) for p in anchors]
    drawn += [DrawnItem(p.response_id, SOURCE_CARRIED, False) for p in sorted(retained, key=lambda p: p.response_id)]

    # Edge cases among the never-drawn responses.
    length_edges = length_edge_ids(items, params.length_tail)
    candidates = sorted((length_edges | judge_edges) & {i.response_id for i in fresh})
    n_edge = min(_round_half_up(params.edge_fraction, need), len(candidates))
    edge_ids = sorted(rng.sample(candidates, n_edge)) if n_edge else []
    drawn += [DrawnItem(rid, SOURCE_EDGE_JUDGE if rid in judge_edges else SOURCE_EDGE_LENGTH) for rid in edge_ids]

    # Stratified random draws for the rest.
    taken = set(edge_ids)
    strata: dict[tuple[str, str, str], list[PoolItem]] = defaultdict(list)
    for item in fresh:
        if item.response_id not in taken:
            strata[(item.difficulty, item.tradition, item.model)].append(item)
    quotas = largest_remainder({key: len(members) for key, members in strata.items()}, need - n_edge, rng)
    random_ids: list[int] = []
    for key in sorted(strata):
        chosen = rng.sample(strata[key], quotas[key])
        random_ids += [i.response_id for i in chosen]
    drawn += [DrawnItem(rid, SOURCE_RANDOM) for rid in sorted(random_ids)]

    summary.target = target
    summary.drawn = len(drawn)
    summary.anchors = len(anchors)
    summary.kept = len(retained)
    summary.replaced = len(replaced)
    summary.edge = len(edge_ids)
    summary.random = len(random_ids)
    result.dimensions.append(summary)
    result.items += drawn

    drawn_ids = {d.response_id for d in drawn}
    table: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        row = table[(item.difficulty, item.tradition, item.model)]
        row[0] += 1
        row[1] += item.response_id in drawn_ids
    for (difficulty, tradition, model), (n_pool, n_drawn) in sorted(table.items()):
        result.strata.append(StratumRow(dimension, difficulty, tradition, model, n_pool, n_drawn))
