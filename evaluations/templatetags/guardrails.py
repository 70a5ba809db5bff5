"""`{% thin_words board n %}`: the words shown instead of an interval or effect size thin evidence cannot support."""
from __future__ import annotations

from typing import Any

from django import template

from evaluations.judge.guardrails import min_cases
from evaluations.judge.guardrails import thin_words as _thin_words

register = template.Library()


@register.simple_tag
def thin_words(source: Any, n: int | None, what: str = "an interval") -> str:
    """`source` is anything with a `min_cases` (a leaderboard) or None for the setting's minimum."""
    minimum = getattr(source, "min_cases", None) or min_cases()
    return _thin_words(n, minimum=minimum, what=what)
