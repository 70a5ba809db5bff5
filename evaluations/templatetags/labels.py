"""`{{ key|rubric_label }}`, `{{ key|tradition_label }}`, `{{ group|group_label }}` (a report group: its kind and
value): the names of evaluations/labels.py in templates."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from .. import labels

register = template.Library()


@register.filter
def rubric_label(key: str | None) -> str:
    return labels.rubric_label(key)


@register.filter
def tradition_label(key: str | None) -> str:
    return labels.tradition_label(key)


@register.filter
def language_label(tag: str | None) -> str:
    return labels.language_label(tag)


@register.filter
def group_label(group: object) -> str:
    """A report group's name: a typed group (kind and value attributes) or, as stored, its JSON object."""
    if isinstance(group, Mapping):
        return labels.group_label(str(group.get("kind", "")), str(group.get("value", "")))
    return labels.group_label(str(getattr(group, "kind", "")), str(getattr(group, "value", "")))


@register.filter
def rubric_labels(keys: Any) -> list[str]:
    """Each key of a list by its name (for `|join`)."""
    return [labels.rubric_label(key) for key in keys or []]
