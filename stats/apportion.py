"""Apportioning draws over strata: the one largest-remainder (Hamilton) rule of the project.

A sample of k spread over strata of sizes n_s in proportion to their sizes gets fractional quotas
k·n_s/N; Hamilton's method gives each stratum the floor of its quota and the places left over to the
strata with the largest fractional parts (Balinski & Young 2001, *Fair Representation*, ch. 2 and
appendix A; Cochran 1977, *Sampling Techniques*, §5.5 for proportional allocation). Every stratified
draw that rounds proportional quotas (the calibration draw, the case-review sample) calls
:func:`largest_remainder`, so they round the same way.
"""
from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def largest_remainder(sizes: Mapping[K, int], k: int, rng: random.Random) -> dict[K, int]:
    """Allocate k draws over strata in proportion to their sizes, rounding by largest remainder (Hamilton).

    Each stratum gets floor(k·n_s/N); the places left go to the largest fractional parts, computed as exact
    fractions (so equal remainders are equal, never split by floating-point error). Tie rule: the strata are
    put in the order of ``repr`` of their keys, shuffled once by ``rng``, then stably sorted by remainder
    (largest first) — among equal remainders the shuffled order decides, so a tie is a seeded draw, not a
    preference for the alphabetically first stratum. ``rng`` is advanced by one shuffle exactly when
    0 < k < N. Never exceeds a stratum's size; k ≥ N takes every stratum whole, k ≤ 0 takes nothing.

    Source: Hamilton's method (Balinski & Young 2001). Example: sizes {a: 5, b: 3, c: 2}, k = 5 → quotas 2.5,
    1.5, 1.0 → floors 2, 1, 1 → one place left, a tie between a and b (remainder ½), broken by ``rng``.
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
