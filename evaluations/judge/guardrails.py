"""Guardrails where evidence is thin (issue 32 part 2): the one rule every ranking, interval and effect size asks.

One number, `minimum` (the setting ``FAITHBENCH_MIN_CASES_PER_MODEL`` read by :func:`min_cases`, default
:data:`MIN_CASES_DEFAULT`), and one question, :func:`evidence_enough`:

- a *model* is ranked only when it rests on at least `minimum` scored cases;
- a *run* is a **trial** when no model in it reaches `minimum` cases (:func:`run_is_trial`): it is listed,
  never the default, never ranked and not plotted in the score history;
- an *interval* (percentile or BCa bootstrap) is shown only from at least `minimum` items; below it the
  interval is replaced by words (:func:`thin_words`) — no "0.87–0.87 · n=1", no 95 % CI from two items;
- an *effect size* (Cohen's d_z of a paired comparison) is shown only from at least `minimum` pairs.

Why 10 per model. The methodology (§5.1.1) asks "at least 10 cases per dimension × difficulty cell": 10 cases
is the smallest unit of evidence the benchmark's design lets stand on its own, so a model with fewer scored
cases than one cell holds is not yet a measurement of that model. It is also where the bootstrap begins to be
usable: a percentile interval from n items takes at most C(2n−1, n) distinct values (3 for n = 2, 92,378 for
n = 10), and its coverage at n < 10 falls well below nominal (Efron & Tibshirani 1993, §13.3; Davison & Hinkley
1997, §5.4) — it is the zero-width or near-zero-width interval a reader must not be shown. Cohen's d_z from
two pairs divides by a standard deviation with one degree of freedom (the "d = 27.58" of issue 32). The full
design (6 dimensions × 4 difficulties × 10 = 240 cases) is the target of a headline run; 10 is a floor, not a
target, and a deployment that wants a stricter floor raises the setting.

The rule lives here, beside the setting, not in ``stats/``: it is a rule about evidence, not a statistic, and
pages may ask it (a page computes no statistic; ``tests/calibration/reports/test_snapshots.py`` checks that).
"""
from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

MIN_CASES_DEFAULT = 10


def evidence_enough(n: int | None, *, minimum: int = MIN_CASES_DEFAULT) -> bool:
    """True when `n` cases (items, pairs) are enough to rank, show an interval or an effect size.

    Example: ``evidence_enough(2) is False``. A `minimum` of 1 switches the guardrail off (kept for comparing with
    the implementations that predate it); no deployment should set it.
    """
    return n is not None and n >= max(1, minimum)


def run_is_trial(cases_per_model: Mapping[str, int], *, minimum: int = MIN_CASES_DEFAULT) -> bool:
    """A run is a trial when no model in it has `minimum` scored cases (or it scored nothing)."""
    return not any(evidence_enough(n, minimum=minimum) for n in cases_per_model.values())


def thin_words(n: int | None, *, minimum: int = MIN_CASES_DEFAULT, what: str = "an interval") -> str:
    """What a reader sees instead of a number that thin evidence cannot support."""
    count = 0 if n is None else n
    return f"too few cases for {what} (n = {count}; needs at least {max(1, minimum)})"


def min_cases() -> int:
    """The setting ``FAITHBENCH_MIN_CASES_PER_MODEL`` (default 10): minimum scored cases per model, items per
    interval, pairs per effect size."""
    return max(1, int(getattr(settings, "FAITHBENCH_MIN_CASES_PER_MODEL", MIN_CASES_DEFAULT)))
