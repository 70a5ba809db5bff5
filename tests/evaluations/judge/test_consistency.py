"""The contradiction rule: reasoning that contradicts its score is flagged (methodology §5.3.5)."""
from __future__ import annotations

import pytest

from evaluations.judge.consistency import NEGATIVE_MARKERS, POSITIVE_MARKERS, contradiction


@pytest.mark.parametrize("reasoning", [
    "The translation is incorrect.",
    "It fails to distinguish the two senses.",
    "Misleading claim about the Septuagint.",
    "There are significant errors in the dating.",
    "The author MISREPRESENTS the Reformed view.",
    "Fails  to mention the variant.",
])
def test_a_three_with_strongly_negative_reasoning_is_flagged(reasoning):
    assert contradiction(3, reasoning) is not None


@pytest.mark.parametrize("reasoning", [
    "Excellent command of the Hebrew.",
    "Fully accurate account of Trent.",
    "A flawless reading of the passage.",
])
@pytest.mark.parametrize("score", [0, 1])
def test_a_zero_or_one_with_glowing_reasoning_is_flagged(score, reasoning):
    assert contradiction(score, reasoning) is not None


@pytest.mark.parametrize("score, reasoning", [
    (3, "Fully accurate, no significant errors."),
    (3, "Nothing here is misleading; not incorrect in any respect."),
    (3, "Correct and thorough."),
    (3, "The correction of the common misreading is apt."),  # 'correct' inside other words is no marker
    (0, "Not excellent: the answer is wrong about the council."),
    (1, "Partial; the reading is far from fully accurate."),
    (2, "Excellent vocabulary but it fails to address the variant."),  # a 2 is never flagged
    (0, "Incorrect and misleading."),
    (3, ""),
])
def test_consistent_or_negated_reasoning_is_not_flagged(score, reasoning):
    assert contradiction(score, reasoning) is None


def test_marker_lists_are_disjoint_and_lower_case():
    assert not set(NEGATIVE_MARKERS) & set(POSITIVE_MARKERS)
    assert all(m == m.lower() for m in NEGATIVE_MARKERS + POSITIVE_MARKERS)
