"""Reading the judge's answer: tolerant about wrapping, strict about content (methodology §5.3.3).

Tolerant: the JSON object may sit in a ```json code fence or among prose. Strict: ``scores`` must list
every sub-dimension of the case's dimension exactly once, by its camelCase key, with an integer
``rawScore`` from 0 to 3 (2.5, 3.0, "3" and 4 are rejected) and a string ``reasoning``; unknown names
are rejected. Any violation raises JudgeParseError and the caller keeps the raw text as a judge error.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class JudgeParseError(ValueError):
    """The judge's output is not a valid score object for this case."""


@dataclass(frozen=True)
class ParsedScore:
    key: str
    raw_score: int
    reasoning: str


def extract_json_object(text: str) -> dict[str, object]:
    """The first JSON object in text: the whole text, a fenced block, or the first decodable {...}.

    A boundary: any JSON object the judge wrote, unchecked; `parse_judge_scores` checks every value it reads."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeParseError("empty response")
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1:
        try:
            value, _ = decoder.raw_decode(text, position)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        position = text.find("{", position + 1)
    raise JudgeParseError("no JSON object found in the judge's output")


def parse_judge_scores(text: str, *, expected: Sequence[str]) -> list[ParsedScore]:
    """Scores for exactly the expected sub-dimension keys, in the expected order; raises JudgeParseError."""
    data = extract_json_object(text)
    scores = data.get("scores")
    if not isinstance(scores, list):
        raise JudgeParseError('"scores" is missing or not a list')
    wanted = set(expected)
    found: dict[str, ParsedScore] = {}
    for position, entry in enumerate(scores):
        if not isinstance(entry, dict):
            raise JudgeParseError(f"scores[{position}] is not an object")
        name = entry.get("dimension")
        if not isinstance(name, str):
            raise JudgeParseError(f'scores[{position}] has no "dimension" name')
        if name not in wanted:
            raise JudgeParseError(f"unknown sub-dimension {name[:60]!r}")
        if name in found:
            raise JudgeParseError(f"sub-dimension {name!r} scored more than once")
        raw = entry.get("rawScore")
        # bool is an int subclass and floats such as 3.0 are not integers on the 0–3 scale.
        if type(raw) is not int or not 0 <= raw <= 3:
            raise JudgeParseError(f"rawScore of {name!r} must be an integer 0–3, got {str(raw)[:20]!r}")
        reasoning = entry.get("reasoning")
        if not isinstance(reasoning, str):
            raise JudgeParseError(f'"reasoning" of {name!r} is missing or not text')
        found[name] = ParsedScore(name, raw, reasoning)
    missing = [key for key in expected if key not in found]
    if missing:
        raise JudgeParseError(f"missing sub-dimension(s): {', '.join(missing)}")
    return [found[key] for key in expected]
