"""Generation conditions (issue 26 items 1 and 5): the record, the standard condition, responses' condition and
repetition through import, generation, judge and leaderboard."""
from __future__ import annotations

import importlib
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from evaluations import methodology
from evaluations.models import GenerationCondition, ModelResponse
from tests.annotations.factories import ModelResponseFactory

pytestmark = pytest.mark.django_db


def test_generation_condition_migration_copy_equals_the_methodology():
    migration = importlib.import_module("evaluations.migrations.0011_generation_conditions")
    standard = migration.STANDARD
    assert standard["name"] == methodology.STANDARD_CONDITION_NAME
    assert standard["temperature"] == methodology.STANDARD_TEMPERATURE == Decimal("0.70")
    assert standard["max_tokens"] == methodology.STANDARD_MAX_TOKENS == 2000
    assert standard["system_prompt"] == methodology.STANDARD_SYSTEM_PROMPT
    assert standard["language"] == methodology.STANDARD_LANGUAGE == "en"
    assert standard["reasoning"] is False


def test_generation_condition_standard_is_the_default_of_a_response():
    response = ModelResponseFactory()
    standard = GenerationCondition.objects.standard()
    assert response.condition == standard and response.repetition == 1
    assert standard.name == "standard" and not standard.reasoning and standard.temperature == Decimal("0.70")


def test_generation_condition_only_one_is_standard():
    GenerationCondition.objects.standard()  # exists (the migration made it)
    with pytest.raises(IntegrityError), transaction.atomic():
        GenerationCondition.objects.create(name="another", is_standard=True)


def test_generation_condition_effort_needs_reasoning_on():
    with pytest.raises(IntegrityError), transaction.atomic():
        GenerationCondition.objects.create(name="bad", reasoning=False, reasoning_effort="high")


def test_generation_condition_repetitions_are_distinct_responses_but_not_twice():
    first = ModelResponseFactory()
    thinking = GenerationCondition.objects.create(name="reasoning-high", reasoning=True, reasoning_effort="high")
    same = {"test_case": first.test_case, "model": first.model, "run_label": first.run_label}
    ModelResponse.objects.create(**same, repetition=2, text="second")
    ModelResponse.objects.create(**same, condition=thinking, text="thinking")
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelResponse.objects.create(**same, repetition=2, text="again")
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelResponse.objects.create(**same, repetition=0, text="zero")


def test_generation_condition_differs_in_names_the_axes():
    standard = GenerationCondition.objects.standard()
    thinking = GenerationCondition(name="t", reasoning=True, reasoning_effort="high")
    routed = GenerationCondition(name="r", route="together")
    german = GenerationCondition(name="de", language="de")
    assert thinking.differs_in(standard) == ["reasoning"]
    assert routed.differs_in(standard) == ["route"]
    assert german.differs_in(standard) == ["language"]
    assert german.differs_in(routed) == ["route", "language"]
