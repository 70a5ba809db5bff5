"""`{{ key|rubric_label }}`, `{{ key|tradition_label }}`: the names of evaluations/labels.py in templates."""
from __future__ import annotations

from django import template

from .. import labels

register = template.Library()


@register.filter
def rubric_label(key: str | None) -> str:
    return labels.rubric_label(key)


@register.filter
def tradition_label(key: str | None) -> str:
    return labels.tradition_label(key)
