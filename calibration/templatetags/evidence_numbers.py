"""The one number formatter (`evidence.kit.numbers`) as template filters, so a page says a figure as its CSV, PDF
and README.txt do: `{{ value|estimate }}`, `{{ value|estimate:2 }}`, `{{ pair|interval:2 }}` ("[0.70, 0.83]"),
`{{ method|method_label }}` ("BCa"), `{{ n|n_text:"pairable units" }}`."""
from __future__ import annotations

from collections.abc import Sequence

from django import template

from evidence.kit import numbers

register = template.Library()


@register.filter
def estimate(value: float | None, digits: int = 3) -> str:
    return numbers.estimate(value, int(digits))


@register.filter
def interval(bounds: Sequence[float | None] | None, digits: int = 3) -> str:
    return numbers.interval_of(bounds, int(digits))


@register.filter
def method_label(method: str | None) -> str:
    return numbers.method_label(method)


@register.filter
def n_text(n: int | None, unit: str = "") -> str:
    return numbers.n_text(n, unit)
