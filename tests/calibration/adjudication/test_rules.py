"""The disagreement rules, by hand."""
import pytest

from calibration.adjudication.rules import has_strict_majority, item_disagreements, sub_dimension_disagreement


def test_strict_majority():
    assert has_strict_majority([1, 1, 2])
    assert not has_strict_majority([1, 2])
    assert not has_strict_majority([0, 1, 2])
    assert has_strict_majority([3, 3, 2, 3])
    assert not has_strict_majority([2, 2, 3, 3])


@pytest.mark.parametrize(
    ("scores", "rule", "needs"),
    [
        ([1, 3, 3], "span2", True),          # spans 2 points though 3 has a majority
        ([1, 3, 3], "no_majority", False),
        ([1, 3, 3], "span2_or_no_majority", True),
        ([1, 2, 3], "span2_or_no_majority", True),
        ([1, 2, 2], "span2_or_no_majority", False),  # span 1 and a majority: agreement enough
        ([1, 2], "span2_or_no_majority", True),      # two experts, different scores: no majority
        ([1, 2], "span2", False),
        ([2, 2, 2], "any_difference", False),
        ([2, 2, 3], "any_difference", True),
        ([3], "any_difference", False),              # a single rater cannot disagree
    ],
)
def test_rule_table(scores, rule, needs):
    assert (sub_dimension_disagreement(scores, rule) is not None) is needs


def test_item_lists_every_disagreeing_sub_dimension_with_its_reason():
    found = item_disagreements({"a": [0, 2, 2], "b": [1, 1, 1], "c": [1, 2, 3]}, "span2_or_no_majority")
    assert found == {"a": "scores span 2 points (0, 2, 2)", "c": "scores span 2 points (1, 2, 3)"}
    with pytest.raises(ValueError, match="unknown disagreement rule"):
        item_disagreements({"a": [1, 2]}, "loudest_wins")
