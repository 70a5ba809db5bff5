"""The reference data as plain rows: as stored in the database, and as `evaluations.methodology` states it.

Comparing the two catches drift between the frozen data migration (evaluations/migrations/0002) and the
live module in a test, instead of letting an edit of the module silently rewrite history.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from evaluations.methodology import RUBRIC_V1, TRADITIONS
from evaluations.models import RubricVersion, Tradition

RUBRIC_V1_HEADER = ("1.0", "active", "FaithBench methodology v1.0, §4.4 and §15.5.", None)


def stored_reference_rows() -> dict[str, Any]:
    """The traditions and rubric v1.0 as they are in the database (no primary keys or timestamps)."""
    rubric = RubricVersion.objects.get(version="1.0")
    return {
        "traditions": list(Tradition.objects.order_by("order").values_list(
            "key", "name", "in_development", "min_panel_size", "order")),
        "rubric": (rubric.version, rubric.status, rubric.notes, rubric.based_on_id),
        "dimensions": [
            (d.key, d.name, d.weight, d.description, d.order,
             [(s.key, s.name, s.weight, s.description, s.order) for s in d.sub_dimensions.order_by("order")])
            for d in rubric.dimensions.order_by("order")
        ],
    }


def methodology_reference_rows() -> dict[str, Any]:
    """The same rows as `evaluations.methodology` (and the notes `reference_data_ensure` writes) give them."""
    return {
        "traditions": [(t.key, t.name, t.in_development, t.min_panel_size, order) for order, t in enumerate(TRADITIONS)],
        "rubric": RUBRIC_V1_HEADER,
        "dimensions": [
            (d.key, d.name, Decimal(d.weight), d.description, order,
             [(s.key, s.name, Decimal(s.weight), s.description, sub_order)
              for sub_order, s in enumerate(d.sub_dimensions)])
            for order, d in enumerate(RUBRIC_V1)
        ],
    }
