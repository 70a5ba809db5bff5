"""The documented example files import in every format, and the demo data set is complete and valid."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings

from evaluations.demo import DEMO_DIR, demo_benchmark_load
from evaluations.importing import import_file
from evaluations.models import (
    Difficulty,
    Dimension,
    EvaluatedModel,
    ModelResponse,
    QuestionType,
    TestCase,
    TheoBertCase,
    Visibility,
)

EXAMPLES = Path(settings.BASE_DIR) / "fixtures" / "examples"


@pytest.mark.parametrize(
    ("cases", "responses", "theobert"),
    [("cases.json", "responses.jsonl", "theobert-eval.json"),
     ("cases.jsonl", "responses.json", "theobert.jsonl"),
     ("cases.csv", "responses.csv", "theobert.csv")],
)
def test_every_example_file_imports(db, cases, responses, theobert):
    assert import_file(path=EXAMPLES / cases, kind="cases").created == 3
    assert import_file(path=EXAMPLES / responses, kind="responses").created == 3
    assert import_file(path=EXAMPLES / theobert, kind="theobert").created == 2
    assert TestCase.objects.get(external_id="EX-TXT-001").tradition is None
    assert TestCase.objects.get(external_id="EX-HIS-001").visibility == Visibility.HELD_OUT


def test_demo_data_imports_and_covers_every_facet(db):
    reports = demo_benchmark_load()
    assert {r.kind for r in reports} == {"cases", "responses", "theobert"}
    cases = list(TestCase.objects.select_related("tradition"))
    assert len(cases) >= 48
    assert {c.dimension for c in cases} == set(Dimension.values)
    assert {c.difficulty for c in cases} == set(Difficulty.values)
    assert {c.question_type for c in cases} == set(QuestionType.values)
    assert {c.tradition.key if c.tradition else None for c in cases} == {
        None, "catholic", "orthodox", "reformed", "evangelical", "pentecostal"}
    assert Counter(c.visibility for c in cases)[Visibility.HELD_OUT] >= 12
    assert any("ἱλαστήριον" in c.prompt or any("\u0370" <= ch <= "\u03ff" or "\u1f00" <= ch <= "\u1fff" for ch in c.prompt)
               for c in cases)  # Greek
    assert any(any("\u0590" <= ch <= "\u05ff" for ch in c.prompt) for c in cases)  # Hebrew
    models = list(EvaluatedModel.objects.all())
    assert 3 <= len(models) <= 4 and len({m.family for m in models}) == len(models)
    assert ModelResponse.objects.count() == len(cases) * len(models)
    lengths = [len(r.text.split()) for r in ModelResponse.objects.all()]
    assert min(lengths) < 80 < 200 < max(lengths)  # varying length
    assert TheoBertCase.objects.count() == 20
    # Idempotent: loading again changes nothing.
    assert all(r.created == r.updated == 0 for r in demo_benchmark_load())


def test_demo_cases_are_our_own_not_the_seeds_examples():
    seeds = ["Colossians 1:15", "proclaim the Lord's", "bears all things", "justified freely by God's",
             "message of the [MASK] is foolishness"]
    for path in DEMO_DIR.glob("*.json*"):
        text = path.read_text(encoding="utf-8")
        for phrase in seeds:
            assert phrase not in text, (path.name, phrase)
        if path.suffix == ".json":
            json.loads(text)
