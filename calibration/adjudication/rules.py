"""Disagreement rules (pure): when does an item need an adjudicator?

Rules, chosen per cycle (`CalibrationCycle.disagreement_rule`), applied to every sub-dimension of an
item once all of its assigned experts have finished (or the cycle is closed):

* ``span2``: the experts' scores span two or more points (e.g. 1 and 3);
* ``no_majority``: no score was given by a strict majority (more than half) of the experts who scored;
* ``span2_or_no_majority`` (default): either of the two;
* ``any_difference``: the experts did not all give the same score.

An item scored by fewer than two experts cannot disagree; it is reported as "single rater", not sent
to adjudication.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache

RULES = ("span2_or_no_majority", "span2", "no_majority", "any_difference")


def has_strict_majority(scores: Sequence[int]) -> bool:
    """True when one score was given by more than half of the experts. [1, 1, 2] → True; [1, 2] → False."""
    if not scores:
        return False
    return Counter(scores).most_common(1)[0][1] * 2 > len(scores)


def sub_dimension_disagreement(scores: Sequence[int], rule: str) -> str | None:
    """The reason this sub-dimension's scores break the rule, or None."""
    if rule not in RULES:
        raise ValueError(f"unknown disagreement rule {rule!r}; expected one of {', '.join(RULES)}")
    if len(scores) < 2:
        return None
    span = max(scores) - min(scores)
    if rule in ("span2", "span2_or_no_majority") and span >= 2:
        return f"scores span {span} points ({', '.join(map(str, sorted(scores)))})"
    if rule in ("no_majority", "span2_or_no_majority") and not has_strict_majority(scores):
        return f"no majority ({', '.join(map(str, sorted(scores)))})"
    if rule == "any_difference" and span > 0:
        return f"scores differ ({', '.join(map(str, sorted(scores)))})"
    return None


def item_disagreements(scores_by_key: Mapping[str, Sequence[int]], rule: str) -> dict[str, str]:
    """{sub-dimension key: reason} for every sub-dimension that needs adjudication (empty: none)."""
    found = {}
    for key in sorted(scores_by_key):
        reason = _sorted_disagreement(tuple(sorted(scores_by_key[key])), rule)
        if reason:
            found[key] = reason
    return found


@lru_cache(maxsize=4096)
def _sorted_disagreement(scores: tuple[int, ...], rule: str) -> str | None:
    """sub_dimension_disagreement, remembered: a queue checks thousands of items but few distinct score sets."""
    return sub_dimension_disagreement(scores, rule)
