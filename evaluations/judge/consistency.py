"""The consistency check of methodology §5.3.5: flag judge output whose reasoning contradicts its score.

Rule (one place, tested in tests/evaluations/judge/test_consistency.py):

* a rawScore of 3 is flagged when its reasoning contains a NEGATIVE_MARKERS phrase;
* a rawScore of 0 or 1 is flagged when its reasoning contains a POSITIVE_MARKERS phrase;
* a 2 is never flagged (mixed reasoning is what "mostly accurate with minor gaps" means);
* phrases match whole words, case-insensitively, and a phrase preceded within its sentence (up to
  "." ";" ":" "!" "?") by one of NEGATORS among the three words before it ("no significant errors",
  "nothing here is misleading", "far from fully accurate") does not count.

A flagged result is still scored; the flag routes it to human review (§5.3.5 "edge case routing").
"""
from __future__ import annotations

import re

NEGATIVE_MARKERS: tuple[str, ...] = (
    "incorrect", "incorrectly", "inaccurate", "inaccurately", "misleading", "fails to", "failed to",
    "significant errors", "major errors", "serious errors", "factually wrong", "misrepresents",
    "misrepresentation", "fundamentally flawed", "does not address", "doesn't address",
)
POSITIVE_MARKERS: tuple[str, ...] = (
    "excellent", "fully accurate", "flawless", "exemplary", "outstanding", "no errors",
    "thoroughly accurate", "completely accurate",
)
NEGATORS: tuple[str, ...] = (
    "no", "not", "never", "without", "nor", "neither", "nothing", "hardly", "far from", "free of",
    "isn't", "aren't", "wasn't", "doesn't", "didn't",
)


def _pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(m).replace(r"\ ", r"\s+") for m in sorted(markers, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


_NEGATIVE = _pattern(NEGATIVE_MARKERS)
_POSITIVE = _pattern(POSITIVE_MARKERS)
_SENTENCE_BREAK = re.compile(r"[.;:!?]")
_WORD = re.compile(r"[A-Za-z']+")


def _negated(text: str, start: int) -> bool:
    before = _SENTENCE_BREAK.split(text[max(0, start - 60):start])[-1]
    window = f" {' '.join(w.lower() for w in _WORD.findall(before)[-3:])} "
    return any(f" {negator} " in window for negator in NEGATORS)


def marker_found(text: str, pattern: re.Pattern[str]) -> str | None:
    """The first un-negated marker phrase in text, or None."""
    for match in pattern.finditer(text or ""):
        if not _negated(text, match.start()):
            return match.group(0)
    return None


def contradiction(raw_score: int, reasoning: str) -> str | None:
    """Why a score contradicts its reasoning (the marker found), or None when consistent."""
    if raw_score == 3:
        return marker_found(reasoning, _NEGATIVE)
    if raw_score in (0, 1):
        return marker_found(reasoning, _POSITIVE)
    return None
