"""Reads of benchmark data."""
from __future__ import annotations

from decimal import Decimal

from django.db.models import QuerySet

from access.policy import Action, allowed

from .methodology import DIFFICULTY_WEIGHTS
from .models import (
    EvaluatedModel,
    GenerationCondition,
    RubricVersion,
    TestCase,
    TheoBertCase,
    Tradition,
    Visibility,
)


def rubric_active() -> RubricVersion:
    """The rubric version in force (the newest active one)."""
    return RubricVersion.objects.active().order_by("-created_at").first() or RubricVersion.objects.get(version="1.0")


def rubric_weights(*, rubric: RubricVersion) -> dict[str, tuple[Decimal, dict[str, Decimal]]]:
    """{dimension key: (weight, {sub-dimension key: weight})} for one rubric version."""
    result: dict[str, tuple[Decimal, dict[str, Decimal]]] = {}
    for dimension in rubric.dimensions.prefetch_related("sub_dimensions"):
        result[dimension.key] = (dimension.weight, {s.key: s.weight for s in dimension.sub_dimensions.all()})
    return result


def difficulty_weight(difficulty: str) -> Decimal:
    """Methodology §5.4.2: Easy 1.0, Medium 1.5, Hard 2.0, Expert 3.0."""
    return DIFFICULTY_WEIGHTS[difficulty]


def cases_visible_to(user: object) -> QuerySet[TestCase]:
    """Public cases for everyone signed in; held-out cases only for superusers (access.policy)."""
    qs = TestCase.objects.select_related("tradition")
    if allowed(user, Action.VIEW_HELD_OUT):
        return qs
    return qs.filter(visibility=Visibility.PUBLIC)



def rubric_choices() -> QuerySet[RubricVersion]:
    """Every rubric version, in the model's order, for a form's choice field."""
    return RubricVersion.objects.all()


def evaluated_model_choices() -> QuerySet[EvaluatedModel]:
    """Every evaluated model by name, for a form's choice field."""
    return EvaluatedModel.objects.order_by("name")


def tradition_choices() -> QuerySet[Tradition]:
    """Every tradition, in the model's order, for a form's choice field."""
    return Tradition.objects.all()


def rubric_by_version(*, version: str) -> RubricVersion:
    """The rubric version named `version`; raises RubricVersion.DoesNotExist when there is none."""
    return RubricVersion.objects.get(version=version)


def theobert_cases() -> QuerySet[TheoBertCase]:
    """Every imported TheoBERT case (callers narrow it by case id)."""
    return TheoBertCase.objects.all()


def generation_condition_get(*, pk: int | None = None, name: str | None = None) -> GenerationCondition:
    """The generation condition with this id or name; raises GenerationCondition.DoesNotExist when there is none."""
    return GenerationCondition.objects.get(pk=pk) if pk is not None else GenerationCondition.objects.get(name=name)


def generation_condition_names() -> list[str]:
    """The names of every generation condition, in the model's order."""
    return list(GenerationCondition.objects.values_list("name", flat=True))


def evaluated_models_by_name() -> dict[str, EvaluatedModel]:
    """Every evaluated model, by name."""
    return {m.name: m for m in EvaluatedModel.objects.all()}
