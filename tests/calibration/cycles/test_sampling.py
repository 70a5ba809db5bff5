"""The draw as a pure function: reproducible, stratified, ≥ minimum per dimension, edge cases, 25 % refresh."""
from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

from calibration.cycles.sampling import (
    SOURCE_CARRIED,
    SOURCE_EDGE_JUDGE,
    SOURCE_EDGE_LENGTH,
    SOURCE_RANDOM,
    DrawParams,
    PoolItem,
    PreviousItem,
    draw,
    length_edge_ids,
)

DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]
TRADITIONS = ["", "catholic", "orthodox", "reformed", "evangelical", "pentecostal"]
MODELS = ["model-a", "model-b", "model-c", "model-d"]


def make_pool(per_dimension: int = 120, seed: int = 1) -> list[PoolItem]:
    """A synthetic pool with uneven strata (so proportional allocation matters)."""
    rng = random.Random(seed)
    items, rid = [], 0
    for dimension in DIMENSIONS:
        for _ in range(per_dimension):
            rid += 1
            items.append(PoolItem(
                response_id=rid, dimension=dimension,
                difficulty=rng.choices(DIFFICULTIES, weights=[4, 3, 2, 1])[0],
                tradition=rng.choices(TRADITIONS, weights=[3, 2, 2, 2, 2, 1])[0],
                model=rng.choice(MODELS), word_count=rng.randint(50, 900),
            ))
    return items


def by_dimension(result, pool):  # type: ignore[no-untyped-def]
    dims = {i.response_id: i.dimension for i in pool}
    return Counter(dims[i.response_id] for i in result.items)


def test_same_seed_and_pool_reproduce_the_draw_exactly() -> None:
    pool = make_pool()
    first = draw(pool, DrawParams(seed=424242))
    second = draw(list(reversed(pool)), DrawParams(seed=424242))  # input order does not matter
    assert first.items == second.items
    assert first.fingerprint == second.fingerprint
    assert draw(pool, DrawParams(seed=424243)).fingerprint != first.fingerprint


def test_each_dimension_meets_the_minimum_of_fifty() -> None:
    pool = make_pool(per_dimension=120)
    result = draw(pool, DrawParams(seed=3))
    counts = by_dimension(result, pool)
    assert set(counts) == set(DIMENSIONS)
    assert all(n == 50 for n in counts.values()), counts
    assert not any(d.below_minimum for d in result.dimensions) and result.notes == []
    assert len({i.response_id for i in result.items}) == len(result.items)  # no duplicates


def test_minimum_is_configurable() -> None:
    pool = make_pool(per_dimension=120)
    counts = by_dimension(draw(pool, DrawParams(seed=3, min_per_dimension=80)), pool)
    assert all(n == 80 for n in counts.values())


def test_a_pool_below_the_minimum_is_drawn_whole_and_said_so() -> None:
    pool = make_pool(per_dimension=32)
    result = draw(pool, DrawParams(seed=3))
    assert all(n == 32 for n in by_dimension(result, pool).values())
    assert all(d.below_minimum for d in result.dimensions)
    assert len(result.notes) == 6
    assert "only 32 response(s), fewer than the minimum of 50" in result.notes[0]
    assert "BELOW the methodology's minimum" in result.notes[0]


def test_random_draws_are_proportional_to_the_strata() -> None:
    pool = make_pool(per_dimension=400)
    result = draw(pool, DrawParams(seed=11, edge_fraction=0))
    drawn = {i.response_id for i in result.items}
    for dimension in DIMENSIONS:
        items = [i for i in pool if i.dimension == dimension]
        strata = Counter((i.difficulty, i.tradition, i.model) for i in items)
        got = Counter((i.difficulty, i.tradition, i.model) for i in items if i.response_id in drawn)
        for key, n in strata.items():
            exact = Fraction(50 * n, len(items))
            assert math.floor(exact) <= got[key] <= math.ceil(exact), (dimension, key)


def test_stratification_table_counts_pool_and_drawn() -> None:
    pool = make_pool(per_dimension=120)
    result = draw(pool, DrawParams(seed=3))
    assert sum(row.pool for row in result.strata) == len(pool)
    assert sum(row.drawn for row in result.strata) == len(result.items)
    assert {row.dimension for row in result.strata} == set(DIMENSIONS)


def test_edge_cases_come_from_the_length_tails() -> None:
    pool = make_pool(per_dimension=120)
    result = draw(pool, DrawParams(seed=9, edge_fraction=0.2))
    edges = [i for i in result.items if i.source == SOURCE_EDGE_LENGTH]
    assert len(edges) == 6 * 10  # 20 % of 50 per dimension
    for dimension in DIMENSIONS:
        tails = length_edge_ids([i for i in pool if i.dimension == dimension], 0.05)
        mine = {i.response_id for i in edges} & {i.response_id for i in pool if i.dimension == dimension}
        assert mine <= tails
    assert {i.source for i in result.items} == {SOURCE_RANDOM, SOURCE_EDGE_LENGTH}


def test_length_tails_are_the_top_and_bottom_five_percent() -> None:
    items = [PoolItem(i, "textual", "easy", "", "m", word_count=i * 10) for i in range(1, 101)]
    assert length_edge_ids(items, 0.05) == {1, 2, 3, 4, 5, 96, 97, 98, 99, 100}


def test_judge_edge_cases_are_used_when_the_hook_provides_them() -> None:
    pool = make_pool(per_dimension=120)
    judge_ids = {i.response_id for i in pool if i.response_id % 7 == 0}
    result = draw(pool, DrawParams(seed=9, edge_fraction=0.2, length_tail=0), judge_edge_ids=judge_ids)
    judge_edges = [i for i in result.items if i.source == SOURCE_EDGE_JUDGE]
    assert judge_edges and {i.response_id for i in judge_edges} <= judge_ids


def test_next_cycle_keeps_anchors_and_refreshes_a_quarter_of_the_rest() -> None:
    pool = make_pool(per_dimension=120)
    first = draw(pool, DrawParams(seed=1))
    dims = {i.response_id: i.dimension for i in pool}
    # Mark five items per dimension as anchors.
    anchors: set[int] = set()
    for dimension in DIMENSIONS:
        anchors |= set(sorted(i.response_id for i in first.items if dims[i.response_id] == dimension)[:5])
    previous = [PreviousItem(i.response_id, i.response_id in anchors) for i in first.items]
    second = draw(pool, DrawParams(seed=2), previous=previous)

    before = {i.response_id for i in first.items}
    after = {i.response_id for i in second.items}
    assert anchors <= after
    assert all(i.is_anchor == (i.response_id in anchors) for i in second.items)
    for dimension in DIMENSIONS:
        prev_dim = {r for r in before if dims[r] == dimension}
        next_dim = {r for r in after if dims[r] == dimension}
        assert len(next_dim) == 50
        non_anchor = prev_dim - anchors
        replaced = non_anchor - next_dim
        assert len(replaced) == math.ceil(0.25 * len(non_anchor)) == 12  # ceil(25 % of 45)
        new = next_dim - prev_dim
        assert len(new) == len(replaced)  # every replaced item makes room for a never-drawn one
    summary = second.dimensions[0]
    assert (summary.anchors, summary.kept, summary.replaced) == (5, 33, 12)
    assert {i.source for i in second.items if i.response_id in before} == {SOURCE_CARRIED}
    # and the refresh is reproducible too
    assert draw(pool, DrawParams(seed=2), previous=previous).fingerprint == second.fingerprint


def test_refresh_with_too_few_fresh_responses_keeps_old_items_and_says_so() -> None:
    pool = make_pool(per_dimension=55)
    first = draw(pool, DrawParams(seed=1))
    second = draw(pool, DrawParams(seed=2), previous=[PreviousItem(i.response_id, False) for i in first.items])
    assert all(n == 50 for n in by_dimension(second, pool).values())
    assert any("never-drawn response(s) left" in note for note in second.notes)
