"""Checking a Delphi allocation: points per weight and totals per level, in Decimal (never float).

Pure functions (no database). A *group* is one level of the rubric: the six dimensions, or one
dimension's sub-dimensions; the points of each group must total exactly 100. The allocation form
(`forms.AllocationForm`) and the service call the same `allocation_errors`, so the server's answer
never depends on the page's JavaScript.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext

HUNDRED = Decimal("100")
MAX_RATIONALE = 2000


@dataclass(frozen=True)
class WeightGroup:
    """One level whose points total 100: its id ("dimensions" or a dimension key), label and weight keys."""

    id: str
    label: str
    keys: tuple[str, ...]


@dataclass
class AllocationInput:
    """A parsed allocation: {weight key: points} and {weight key: rationale}."""

    points: dict[str, Decimal]
    rationales: dict[str, str] = field(default_factory=dict)


def value_error(value: Decimal) -> str | None:
    """The points rules for a value already parsed (the service's check; `forms.PointsField` applies the same)."""
    if not value.is_finite():
        return gettext("Enter a number.")
    if value < 0:
        return gettext("Points cannot be negative.")
    if value > HUNDRED:
        return gettext("At most 100 points.")
    if value != value.quantize(Decimal("0.1")):
        return gettext("Use at most one decimal place, e.g. 12.5.")
    return None


def points_str(value: Decimal | float | None) -> str:
    """Points as typed: 25, 12.5 (no trailing .0)."""
    if value is None:
        return ""
    d = Decimal(str(value)).quantize(Decimal("0.1"))
    return f"{d:f}".removesuffix(".0")


def total_message(group: WeightGroup, total: Decimal) -> str:
    """Why a group's total is wrong, with the difference to 100."""
    diff = HUNDRED - total
    values = {"group": group.label, "total": points_str(total), "gap": points_str(abs(diff))}
    if diff > 0:
        return gettext("%(group)s total %(total)s points; they must total exactly 100 (%(gap)s missing).") % values
    return gettext("%(group)s total %(total)s points; they must total exactly 100 (%(gap)s too many).") % values


def allocation_errors(points: Mapping[str, Decimal], groups: Sequence[WeightGroup]) -> dict[str, list[str]]:
    """Every problem of a parsed allocation: {weight key or "total:<group>": [messages]} (empty when valid)."""
    errors: dict[str, list[str]] = {}
    expected = {key for group in groups for key in group.keys}
    for key in sorted(set(points) - expected):
        errors.setdefault("__all__", []).append(f"Unknown weight {key!r}.")
    for group in groups:
        complete = True
        for key in group.keys:
            if key not in points:
                errors.setdefault(key, []).append(gettext("Enter the points for this weight (0 if none)."))
                complete = False
                continue
            message = value_error(points[key])
            if message:
                errors.setdefault(key, []).append(message)
                complete = False
        if complete:
            total = sum((points[key] for key in group.keys), Decimal("0"))
            if total != HUNDRED:
                errors.setdefault(f"total:{group.id}", []).append(total_message(group, total))
    return errors
