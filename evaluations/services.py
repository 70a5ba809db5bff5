"""Writes and checks on benchmark data: rubric weights and rubric versions."""
from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction

from .methodology import RUBRIC_V1, TRADITIONS, DimensionSpec
from .models import RubricDimension, RubricSubDimension, RubricVersion, Tradition, standard_condition_id

HUNDRED = Decimal("100")


@transaction.atomic
def rubric_version_create(
    *, version: str, dimensions: tuple[DimensionSpec, ...], status: str = RubricVersion.Status.DRAFT,
    based_on: RubricVersion | None = None, notes: str = "",
) -> RubricVersion:
    """Create a rubric version from dimension specs; rejects weights that do not sum to 100 at each level."""
    rubric = RubricVersion.objects.create(version=version, status=status, based_on=based_on, notes=notes)
    for order, spec in enumerate(dimensions):
        dimension = RubricDimension.objects.create(
            rubric=rubric, key=spec.key, name=spec.name, weight=Decimal(str(spec.weight)),
            description=spec.description, order=order,
        )
        RubricSubDimension.objects.bulk_create(
            RubricSubDimension(
                dimension=dimension, key=sub.key, name=sub.name, weight=Decimal(str(sub.weight)),
                description=sub.description, order=sub_order,
            )
            for sub_order, sub in enumerate(spec.sub_dimensions)
        )
    errors = rubric.weight_errors()
    if errors:
        raise ValidationError(errors, code="rubric_weights")
    return rubric


def reference_data_ensure() -> None:
    """Create the five traditions, rubric v1.0 and the standard generation condition if missing (the data
    migrations do the same)."""
    for order, spec in enumerate(TRADITIONS):
        Tradition.objects.update_or_create(
            key=spec.key,
            defaults={"name": spec.name, "in_development": spec.in_development,
                      "min_panel_size": spec.min_panel_size, "order": order},
        )
    if not RubricVersion.objects.filter(version="1.0").exists():
        rubric_version_create(version="1.0", dimensions=RUBRIC_V1, status=RubricVersion.Status.ACTIVE,
                              notes="FaithBench methodology v1.0, §4.4 and §15.5.")
    standard_condition_id()
