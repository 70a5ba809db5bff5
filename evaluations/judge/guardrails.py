"""The thin-evidence rule's setting (issue 32 part 2): ``FAITHBENCH_MIN_CASES_PER_MODEL``, read in one place.

The rule itself is `stats.guardrails` (why the default is 10 is written there); every ranking, interval and
effect size — judge leaderboard, per-condition boards, score history, pairwise tables, study reports — asks it
with :func:`min_cases`.
"""
from __future__ import annotations

from django.conf import settings

from stats.guardrails import MIN_CASES_DEFAULT


def min_cases() -> int:
    """The minimum number of scored cases per model (and items per interval, pairs per effect size)."""
    return max(1, int(getattr(settings, "FAITHBENCH_MIN_CASES_PER_MODEL", MIN_CASES_DEFAULT)))
