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


def _row(case: str, **extra: object) -> dict:
    return {"case": case, "model": "openai/gpt-4o", "provider": "OpenAI", "family": "gpt", "text": f"answer {extra}",
            **extra}


def test_generation_condition_and_repetition_import_and_export_round_trip(tmp_path):
    from evaluations.importing import import_records
    from evaluations.importing.exporting import response_records
    from tests.annotations.factories import CaseFactory

    CaseFactory(external_id="C-1")
    GenerationCondition.objects.create(name="reasoning-high", reasoning=True, reasoning_effort="high")
    report = import_records(kind="responses", records=[
        _row("C-1"), _row("C-1", repetition=2), _row("C-1", condition="reasoning-high", repetition=2),
    ])
    assert report.created == 3
    got = sorted((r.condition.name, r.repetition) for r in ModelResponse.objects.select_related("condition"))
    assert got == [("reasoning-high", 2), ("standard", 1), ("standard", 2)]
    exported = sorted((r["condition"], r["repetition"]) for r in response_records(None, True))
    assert exported == got
    # Importing the same rows again changes nothing (the key includes condition and repetition).
    again = import_records(kind="responses", records=[_row("C-1", condition="reasoning-high", repetition=2)])
    assert (again.created, again.updated) == (0, 0)


def test_generation_condition_unknown_in_import_names_line_and_field_and_writes_nothing():
    from evaluations.importing import ImportFailed, import_records
    from tests.annotations.factories import CaseFactory

    CaseFactory(external_id="C-1")
    with pytest.raises(ImportFailed) as failed:
        import_records(kind="responses", records=[_row("C-1"), _row("C-1", condition="thinking", repetition=2),
                                                  _row("C-1", repetition=0)])
    errors = {(e.line, e.field): e.message for e in failed.value.errors}
    assert "no generation condition named 'thinking'" in errors[(2, "condition")]
    assert (3, "repetition") in errors
    assert not ModelResponse.objects.exists()


def test_generation_condition_standard_settings_are_read_only_in_the_admin(client):
    from django.urls import reverse

    from accounts.models import User
    from tests.annotations.factories import person

    client.force_login(person(User.Role.ADMIN, email="admin.gc@example.org"))
    standard = GenerationCondition.objects.standard()
    other = GenerationCondition.objects.create(name="de", language="de")
    locked = client.get(reverse("admin:evaluations_generationcondition_change", args=[standard.pk])).content.decode()
    editable = client.get(reverse("admin:evaluations_generationcondition_change", args=[other.pk])).content.decode()
    assert 'name="temperature"' not in locked and 'name="temperature"' in editable


@pytest.mark.django_db(transaction=True)
def test_generation_condition_migration_assigns_existing_responses_to_the_standard_condition():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("evaluations", "0010_theobert_run_stored_figures")]  # the migration before conditions
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    case = old.get_model("evaluations", "TestCase").objects.create(
        external_id="MIG-1", dimension="textual", difficulty="easy", question_type="factual_recall", prompt="Q?")
    model = old.get_model("evaluations", "EvaluatedModel").objects.create(name="m/x", provider="P", family="x")
    old.get_model("evaluations", "ModelResponse").objects.create(test_case=case, model=model, text="an answer")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # forward again, through every later migration
    response = ModelResponse.objects.get(test_case__external_id="MIG-1")
    assert response.condition.is_standard and response.condition.name == "standard" and response.repetition == 1
    assert GenerationCondition.objects.filter(is_standard=True).count() == 1
