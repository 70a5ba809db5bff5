"""The one largest-remainder sampler: Hamilton's method by hand, its tie rule, and the two samplers it replaced."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from stats.apportion import largest_remainder


def test_hamiltons_method_worked_by_hand() -> None:
    # 10 places over strata of 53, 24, 23 (N = 100): quotas 5.3, 2.4, 2.3 → floors 5, 2, 2 (9 places) → the
    # one place left goes to the largest remainder, 0.4 (b).
    assert largest_remainder({"a": 53, "b": 24, "c": 23}, 10, random.Random(0)) == {"a": 5, "b": 3, "c": 2}
    # quotas 7·(6/10) = 4.2, 7·(3/10) = 2.1, 7·(1/10) = 0.7 → floors 4, 2, 0 → the 7th place goes to z (0.7)
    assert largest_remainder({"x": 6, "y": 3, "z": 1}, 7, random.Random(0)) == {"x": 4, "y": 2, "z": 1}
    # The Alabama paradox (Balinski & Young 2001, ch. 5), which Hamilton's method is known for: strata 6, 6, 2.
    # k = 10: quotas 4.29, 4.29, 1.43 → floors 4, 4, 1 → c (0.43 > 0.29) gets the 10th → 4, 4, 2.
    # k = 11: quotas 4.71, 4.71, 1.57 → floors 4, 4, 1 → the two places left go to a and b (0.71) → 5, 5, 1.
    assert largest_remainder({"a": 6, "b": 6, "c": 2}, 10, random.Random(0)) == {"a": 4, "b": 4, "c": 2}
    assert largest_remainder({"a": 6, "b": 6, "c": 2}, 11, random.Random(0)) == {"a": 5, "b": 5, "c": 1}


def test_bounds_take_every_stratum_whole_or_nothing() -> None:
    assert largest_remainder({"x": 2, "y": 1}, 10, random.Random(0)) == {"x": 2, "y": 1}  # never above a stratum
    assert largest_remainder({"x": 2, "y": 1}, 0, random.Random(0)) == {"x": 0, "y": 0}
    assert largest_remainder({}, 3, random.Random(0)) == {}


def test_allocation_is_within_one_of_the_exact_proportional_quota() -> None:
    rng = random.Random(5)
    for _ in range(200):
        sizes = {i: rng.randint(1, 40) for i in range(rng.randint(1, 12))}
        k = rng.randint(0, sum(sizes.values()))
        alloc = largest_remainder(sizes, k, random.Random(rng.random()))
        assert sum(alloc.values()) == k
        total = sum(sizes.values())
        for key, n in sizes.items():
            exact = Fraction(k * n, total)
            assert math.floor(exact) <= alloc[key] <= math.ceil(exact) and alloc[key] <= n


def test_a_tie_is_a_seeded_draw_not_the_first_key() -> None:
    # sizes {a: 5, b: 3, c: 2}, k = 5 → quotas 2.5, 1.5, 1.0 → floors 2, 1, 1; a and b tie at ½ for the last place
    outcomes = {tuple(sorted(largest_remainder({"a": 5, "b": 3, "c": 2}, 5, random.Random(seed)).items()))
                for seed in range(40)}
    assert outcomes == {(("a", 3), ("b", 1), ("c", 1)), (("a", 2), ("b", 2), ("c", 1))}
    # the same generator state gives the same answer, whatever order the strata come in
    forward = largest_remainder({"a": 5, "b": 3, "c": 2}, 5, random.Random(7))
    assert largest_remainder({"c": 2, "b": 3, "a": 5}, 5, random.Random(7)) == forward


def test_exact_fractions_make_equal_remainders_tie() -> None:
    # strata 7, 1, 22 (N = 30), k = 10: quotas 7/3, 1/3, 22/3 → floors 2, 0, 7 → one place left, and all three
    # remainders are exactly ⅓. As floats they are 0.33333333333333348, 0.33333333333333331 and
    # 0.33333333333333304, so a float rule always gives the place to p; here it is a seeded draw among the three.
    tied = {"p": 7, "q": 1, "r": 22}
    assert 10 * 7 / 30 - 2 > 10 * 1 / 30 > 10 * 22 / 30 - 7
    seen = {tuple(sorted(largest_remainder(tied, 10, random.Random(seed)).items())) for seed in range(60)}
    assert seen == {(("p", 3), ("q", 0), ("r", 7)), (("p", 2), ("q", 1), ("r", 7)), (("p", 2), ("q", 0), ("r", 8))}


def _calibration_before(sizes: dict[str, int], k: int, rng: random.Random) -> dict[str, int]:
    """calibration/sampling.py's sampler before this module (kept here as the reference it must reproduce)."""
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
    order.sort(key=lambda key: exact[key] - alloc[key], reverse=True)
    for key in order[:left]:
        alloc[key] += 1
    return alloc


def _review_before(sizes: dict[str, int], k: int) -> dict[str, int]:
    """annotations/review.py's sampler before this module: float quotas, ties to the smallest key."""
    total = sum(sizes.values())
    quotas = {key: k * n / total for key, n in sizes.items()}
    counts = {key: int(quota) for key, quota in quotas.items()}
    remainder = k - sum(counts.values())
    for key in sorted(quotas, key=lambda s: (-(quotas[s] - counts[s]), s))[:remainder]:
        counts[key] += 1
    return counts


def _random_sizes(rng: random.Random) -> dict[str, int]:
    return {f"s{i:02d}": rng.randint(1, 30) for i in range(rng.randint(1, 10))}


def test_the_calibration_draws_rule_is_unchanged_and_leaves_the_generator_where_it_did() -> None:
    rng = random.Random(11)
    for _ in range(300):
        sizes = _random_sizes(rng)
        k = rng.randint(-1, sum(sizes.values()) + 1)
        seed = rng.random()
        new, old = random.Random(seed), random.Random(seed)
        assert largest_remainder(sizes, k, new) == _calibration_before(sizes, k, old)
        assert new.random() == old.random()  # the draw goes on from the same generator state


def test_the_review_samplers_rule_differs_only_where_remainders_tie() -> None:
    rng = random.Random(12)
    ties = 0
    for _ in range(400):
        sizes = _random_sizes(rng)
        k = rng.randint(1, sum(sizes.values()) - 1) if sum(sizes.values()) > 1 else 1
        if k >= sum(sizes.values()):
            continue
        total = sum(sizes.values())
        remainders = sorted((Fraction(k * n, total) % 1 for n in sizes.values()), reverse=True)
        left = k - sum(k * n // total for n in sizes.values())
        tie_decides = 0 < left < len(remainders) and remainders[left - 1] == remainders[left]
        new = largest_remainder(sizes, k, random.Random(rng.random()))
        if tie_decides:
            ties += 1
            assert sum(new.values()) == sum(_review_before(sizes, k).values())
        else:
            assert new == _review_before(sizes, k)
    assert ties > 10  # the comparison met ties often enough to mean something


@pytest.mark.parametrize(("k", "shuffled"), [(0, False), (1, True), (9, True), (10, False), (12, False)])
def test_the_generator_is_advanced_by_one_shuffle_only_when_there_is_something_to_round(k: int, shuffled: bool) -> None:
    rng, fresh = random.Random(3), random.Random(3)
    largest_remainder({"a": 5, "b": 5}, k, rng)
    if shuffled:
        fresh.shuffle(["a", "b"])
    assert rng.random() == fresh.random()
