"""Test–retest (issue 34): re-serving a small share of the items an expert already submitted to the same expert.

A re-served assignment is an ordinary `Assignment` of the same cycle item with `retest_of` set to the expert's
first one. The expert's queue and scoring page cannot tell them apart (same template, same URL shape, a fresh
public id, no mark), and the scoring services treat it like any other, except that a gold decision on the item does
not withdraw or refuse it (it measures the expert against themselves). Every reader of scores for a report or an
estimate reads `Assignment.objects.counted()` (or `submitted_sub_scores()`, which does), so a re-served item never
counts twice; only the intra-rater agreement figures (calibration/panelhealth) read the pairs.

When: each time an expert's queue is served (the queue page and "next item"), `retests_serve` tops up, per open
cycle with test–retest on, the expert's re-served items to round(share × their submitted first assignments), from
the items they submitted at least `retest_min_days` days ago. Which: a seeded random order per (cycle seed, expert,
item), so the choice is reproducible and does not change as more items become eligible. Where: at a seeded random
place among the expert's unfinished items of that cycle (at the end when nothing is left), so re-served items do
not all come last.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Exists, Max, Min, OuterRef, Q
from django.utils import timezone

from .models import Assignment, CalibrationCycle, Panel


def retest_target(*, share: Decimal | float, submitted: int) -> int:
    """How many of `submitted` items an expert should have re-served: share × submitted, rounded half up."""
    return int(math.floor(float(share) * submitted + 0.5))


def retest_priority(*, seed: int, expert_id: int, item_id: int) -> float:
    """The seeded random rank of an item among an expert's candidates (lowest first)."""
    return random.Random(f"{seed}:retest:{expert_id}:{item_id}").random()


@dataclass(frozen=True)
class _First:
    pk: int
    cycle_id: int
    item_id: int
    panel_id: int
    submitted_at: datetime | None
    seed: int
    share: Decimal
    min_days: int
    has_retest: bool
    member: bool


def _firsts(expert_id: int) -> list[_First]:
    """The expert's submitted first assignments in open cycles with test–retest on (one query)."""
    membership = Panel.members.through.objects.filter(panel_id=OuterRef("panel_id"), user_id=OuterRef("expert_id"))
    rows = (
        Assignment.objects.counted()
        .filter(expert_id=expert_id, status=Assignment.Status.SUBMITTED, cycle__status=CalibrationCycle.Status.OPEN,
                cycle__retest_enabled=True)
        .annotate(has_retest=Exists(Assignment.objects.filter(retest_of=OuterRef("pk"))), member=Exists(membership))
        .order_by()
        .values_list("pk", "cycle_id", "item_id", "panel_id", "annotations__submitted_at", "cycle__seed",
                     "cycle__retest_share", "cycle__retest_min_days", "has_retest", "member")
    )
    return [_First(*row) for row in rows]


def _chosen(firsts: list[_First], expert_id: int, now: datetime) -> list[_First]:
    """The first assignments to re-serve now in one cycle: up to the target, eligible, in seeded random order."""
    head = firsts[0]
    need = retest_target(share=head.share, submitted=len(firsts)) - sum(f.has_retest for f in firsts)
    if need <= 0:
        return []
    due = now - timedelta(days=head.min_days)
    eligible = [f for f in firsts if not f.has_retest and f.member and f.submitted_at is not None
                and f.submitted_at <= due]
    eligible.sort(key=lambda f: (retest_priority(seed=f.seed, expert_id=expert_id, item_id=f.item_id), f.item_id))
    return eligible[:need]


@transaction.atomic
def retests_serve(*, expert_id: int, now: datetime | None = None) -> int:
    """Add the re-served (test–retest) assignments now due to an expert's queue; returns how many were added.

    One query when nothing is due. Safe to call concurrently: the conditional unique constraint (one re-served
    assignment per item × expert) makes a second insert of the same item a no-op.
    """
    now = now or timezone.now()
    by_cycle: dict[int, list[_First]] = defaultdict(list)
    for first in _firsts(expert_id):
        by_cycle[first.cycle_id].append(first)
    to_create: list[Assignment] = []
    for cycle_id, firsts in sorted(by_cycle.items()):
        chosen = _chosen(firsts, expert_id, now)
        if not chosen:
            continue
        span = Assignment.objects.filter(expert_id=expert_id, cycle_id=cycle_id).aggregate(
            top=Max("position"),
            first_open=Min("position", filter=Q(status__in=[Assignment.Status.PENDING, Assignment.Status.DRAFT])))
        top = span["top"] or 0
        low = span["first_open"] or top + 1
        rng = random.Random(f"{firsts[0].seed}:retest-place:{expert_id}:{len(to_create)}:{chosen[0].item_id}")
        for first in chosen:
            to_create.append(Assignment(expert_id=expert_id, cycle_id=cycle_id, item_id=first.item_id,
                                        panel_id=first.panel_id, position=rng.randint(low, top + 1),
                                        retest_of_id=first.pk))
    if to_create:
        Assignment.objects.bulk_create(to_create, ignore_conflicts=True)
    return len(to_create)


def retests_serve_all(*, now: datetime | None = None) -> int:
    """`retests_serve` for every expert with a submitted assignment in an open cycle with test–retest on."""
    experts = (Assignment.objects.counted()
               .filter(status=Assignment.Status.SUBMITTED, cycle__status=CalibrationCycle.Status.OPEN,
                       cycle__retest_enabled=True)
               .order_by().values_list("expert_id", flat=True).distinct())
    total = 0
    for expert_id in sorted(set(experts)):
        total += retests_serve(expert_id=expert_id, now=now)
    return total
