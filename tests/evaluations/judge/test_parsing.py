"""Parsing the judge's output: tolerant of wrapping, strict about content."""
from __future__ import annotations

import json

import pytest

from evaluations.judge.parsing import JudgeParseError, extract_json_object, parse_judge_scores

KEYS = ["lexicalAccuracy", "translationFidelity", "linguisticReasoning", "sourceHandling"]


def answer(**overrides: object) -> dict:
    scores = [{"dimension": k, "rawScore": i % 4, "reasoning": f"r{i}"} for i, k in enumerate(KEYS)]
    return {"scores": scores, **overrides}


def test_plain_json_is_parsed_in_rubric_order():
    data = answer()
    data["scores"].reverse()
    parsed = parse_judge_scores(json.dumps(data), expected=KEYS)
    assert [(p.key, p.raw_score, p.reasoning) for p in parsed] == [(k, i % 4, f"r{i}") for i, k in enumerate(KEYS)]


@pytest.mark.parametrize("wrap", [
    "```json\n{}\n```",
    "```\n{}\n```",
    "Here is my evaluation:\n```json\n{}\n```\nLet me know if you need more.",
    "Sure! {} That is all.",
    "  \n{}\n\n",
])
def test_code_fences_and_surrounding_prose_are_tolerated(wrap):
    text = wrap.replace("{}", json.dumps(answer(), indent=2))
    assert [p.key for p in parse_judge_scores(text, expected=KEYS)] == KEYS


def test_prose_with_braces_before_the_object_is_skipped():
    text = "Scale {0-3} applied. " + json.dumps(answer())
    assert len(parse_judge_scores(text, expected=KEYS)) == 4


@pytest.mark.parametrize("bad_score", [2.5, 3.0, "3", 4, -1, True, None])
def test_raw_score_must_be_an_integer_from_zero_to_three(bad_score):
    data = answer()
    data["scores"][1]["rawScore"] = bad_score
    with pytest.raises(JudgeParseError, match="rawScore"):
        parse_judge_scores(json.dumps(data), expected=KEYS)


def test_every_sub_dimension_must_be_present():
    data = answer()
    data["scores"].pop()
    with pytest.raises(JudgeParseError, match="missing sub-dimension.*sourceHandling"):
        parse_judge_scores(json.dumps(data), expected=KEYS)


def test_a_sub_dimension_scored_twice_is_rejected():
    data = answer()
    data["scores"].append(dict(data["scores"][0]))
    with pytest.raises(JudgeParseError, match="more than once"):
        parse_judge_scores(json.dumps(data), expected=KEYS)


@pytest.mark.parametrize("name", ["Lexical Accuracy", "lexicalaccuracy", "doctrinalAccuracy", ""])
def test_unknown_names_are_rejected(name):
    data = answer()
    data["scores"][0]["dimension"] = name
    with pytest.raises(JudgeParseError):
        parse_judge_scores(json.dumps(data), expected=KEYS)


@pytest.mark.parametrize("text", [
    "", "   ", "I cannot evaluate this.", '{"scores": [{"dimension": "lexicalAccuracy", "rawScore": 2',
    "[1, 2, 3]", '{"score": []}', '{"scores": "all good"}', '{"scores": [1, 2]}',
])
def test_malformed_or_partial_output_is_a_parse_error(text):
    with pytest.raises(JudgeParseError):
        parse_judge_scores(text, expected=KEYS)


def test_reasoning_must_be_text():
    data = answer()
    del data["scores"][2]["reasoning"]
    with pytest.raises(JudgeParseError, match="reasoning"):
        parse_judge_scores(json.dumps(data), expected=KEYS)


def test_extract_json_object_returns_the_first_object():
    assert extract_json_object('noise {"a": 1} {"b": 2}') == {"a": 1}
