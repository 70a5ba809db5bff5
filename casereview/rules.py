"""The case-review vocabulary and its pure rules: difficulty levels in order, how many reviewers a case needs, the
answers an expert gives, the flag rules and the stratified sample of cases a cycle reviews. No query runs here.

Flag rules (a case is judged once all its reviews are in):
- `majority_invalid`: more than half the reviewers answer "no" to "valid test of its dimension";
- `reference_wrong`: more than half answer "no" to "reference answer correct for this tradition";
- `low_agreement`: no answer to either question has a majority, or the difficulty ratings span three or more
  of the four levels apart (easy vs hard/expert, medium vs expert) — i.e. their range is ≥ 2 levels.
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from django.core.exceptions import ValidationError

from evaluations.domain import Difficulty
from evaluations.models import TestCase
from stats.apportion import largest_remainder

from .models import CaseReview

DIFFICULTY_ORDER = list(Difficulty)  # declared easy → expert
DIFFICULTY_RANK: dict[str, int] = {str(value): index for index, value in enumerate(DIFFICULTY_ORDER)}
MIN_REVIEWERS = 3


class ReviewError(ValidationError):
    """A review action that breaks a rule; the message says which."""


@dataclass(frozen=True)
class ReviewAnswers:
    valid: str
    reference_correct: str
    difficulty: str
    clarity: int
    comment: str = ""


class Answered(Protocol):
    """What the flag rules read of a review (a CaseReview, or ReviewAnswers)."""

    valid: str
    reference_correct: str
    difficulty: str


def answers_check(answers: ReviewAnswers) -> None:
    """Raise ReviewError, by field, unless every answer is one of its choices."""
    problems = {}
    if answers.valid not in CaseReview.Valid.values:
        problems["valid"] = "choose yes, no or unsure"
    if answers.reference_correct not in CaseReview.Reference.values:
        problems["reference_correct"] = "choose yes, partly or no"
    if answers.difficulty not in Difficulty.values:
        problems["difficulty"] = "choose easy, medium, hard or expert"
    if not isinstance(answers.clarity, int) or not 0 <= answers.clarity <= 3:
        problems["clarity"] = "a whole number from 0 to 3"
    if problems:
        raise ReviewError(problems)


def stratified_sample(cases: Sequence[TestCase], size: int, seed: int) -> list[TestCase]:
    """`size` cases spread over dimension × difficulty strata in proportion to their sizes (largest remainders,
    `stats.apportion.largest_remainder`: equal remainders are a seeded draw), each stratum's draw seeded; the whole
    list when size ≥ len(cases)."""
    if size >= len(cases):
        return list(cases)
    strata: dict[tuple[str, str], list[TestCase]] = defaultdict(list)
    for case in sorted(cases, key=lambda c: c.external_id):
        strata[(case.dimension, case.difficulty)].append(case)
    # ties get their own stream, so the cases drawn inside the strata stay those of the seed whenever no tie decides
    counts = largest_remainder({key: len(members) for key, members in strata.items()}, size,
                               random.Random(f"apportion:{seed}"))
    rng = random.Random(seed)
    chosen: list[TestCase] = []
    for key in sorted(strata):
        chosen.extend(rng.sample(strata[key], counts[key]))
    return sorted(chosen, key=lambda c: c.external_id)


def flag_reasons(reviews: Sequence[Answered]) -> list[str]:
    """The flag rules of the module docstring applied to one case's submitted reviews."""
    n = len(reviews)
    reasons = []
    valid = Counter(r.valid for r in reviews)
    reference = Counter(r.reference_correct for r in reviews)
    if valid["no"] * 2 > n:
        reasons.append("majority_invalid")
    if reference["no"] * 2 > n:
        reasons.append("reference_wrong")
    no_majority = valid.most_common(1)[0][1] * 2 <= n or reference.most_common(1)[0][1] * 2 <= n
    ranks = [DIFFICULTY_RANK[r.difficulty] for r in reviews if r.difficulty in DIFFICULTY_RANK]
    spread = bool(ranks) and max(ranks) - min(ranks) >= 2
    if no_majority or spread:
        reasons.append("low_agreement")
    return reasons


REASON_TEXT = {
    "majority_invalid": "most reviewers say it is not a valid test of its dimension",
    "reference_wrong": "most reviewers say the reference answer is wrong for this tradition",
    "low_agreement": "the reviewers disagree (no majority, or difficulty ratings two or more levels apart)",
}


def flag_reason_texts(reasons: Sequence[str]) -> list[str]:
    """A flag's reasons in words."""
    return [REASON_TEXT[reason] for reason in reasons]
