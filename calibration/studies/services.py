"""Writes of studies that are not an import: creating a study with its declared dimensions (the API's POST)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ..models import Study, StudyDimension


def study_data(study: Study) -> dict[str, Any]:
    """A study and its dimensions as the API shows them."""
    return {"id": study.pk, "name": study.name, "description": study.description, "source": study.source,
            "dimensions": [{"key": d.key, "level": d.level, "scale_min": d.scale_min, "scale_max": d.scale_max}
                           for d in study.dimensions.order_by("id")]}


def study_create(*, name: str, description: str = "", source: str = "",
                 dimensions: Sequence[dict[str, Any]] = ()) -> tuple[Study, bool]:
    """Create a study with its dimensions; (study, created). The same study asked for again is returned as it is
    (idempotent); a different one under a taken name is refused (ValidationError, code "name_taken"), as is a
    dimension named twice ("duplicate_dimension")."""
    keys = [d["key"] for d in dimensions]
    if len(set(keys)) != len(keys):
        raise ValidationError({"dimensions": "keys must differ"}, code="duplicate_dimension")
    wanted = {"id": None, "name": name, "description": description, "source": source,
              "dimensions": [dict(d) for d in dimensions]}
    existing = Study.objects.filter(name=name).first()
    if existing is not None:
        if json.dumps({**study_data(existing), "id": None}, sort_keys=True) == json.dumps(wanted, sort_keys=True):
            return existing, False
        raise ValidationError({"name": f"{name!r} is study {existing.pk}"}, code="name_taken")
    try:
        return _study_insert(name=name, description=description, source=source, dimensions=dimensions), True
    except IntegrityError:  # created by a concurrent request meanwhile
        raise ValidationError({"name": "taken (a study with this name was just created)"}, code="name_taken") from None


@transaction.atomic
def _study_insert(*, name: str, description: str, source: str, dimensions: Sequence[dict[str, Any]]) -> Study:
    study = Study.objects.create(name=name, description=description, source=source)
    StudyDimension.objects.bulk_create(StudyDimension(study=study, **d) for d in dimensions)
    return study
