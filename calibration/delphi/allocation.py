"""Checking a Delphi allocation: points per weight and totals per level, in Decimal (never float).

Pure functions (no database). A *group* is one level of the rubric: the six dimensions, or one
dimension's sub-dimensions; the points of each group must total exactly 100. The form and the service
call the same functions, so the server's answer never depends on the page's JavaScript.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

HUNDRED = Decimal("100")
MAX_RATIONALE = 2000
# Digits with an optional decimal part; a comma is accepted as the decimal separator ("12,5").
_NUMBER_RE = re.compile(r"^(?P<sign>[+-]?)(?P<int>\d*)(?:[.,](?P<frac>\d*))?$")


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


def points_parse(text: str | None) -> tuple[Decimal | None, str | None]:
    """Parse one field: a whole number or one decimal, 0–100. Returns (value, None) or (None, message).

    Example: "12.5" → 12.5; "12,5" → 12.5; "12.25" → error (two decimals); "-5" → error.
    """
    raw = (text or "").strip().replace("\u2212", "-")  # a typographic minus is still a minus
    if not raw:
        return None, "Enter the points for this weight (0 if none)."
    match = _NUMBER_RE.match(raw)
    if not match or not (match["int"] or match["frac"]):
        return None, f"“{raw[:20]}” is not a number: enter a whole number or one decimal, e.g. 25 or 12.5."
    if match["sign"] == "-" and Decimal(f"{match['int'] or 0}.{match['frac'] or 0}") != 0:
        return None, "Points cannot be negative."
    if match["frac"] is not None and len(match["frac"]) > 1:
        return None, "Use at most one decimal place, e.g. 12.5."
    try:
        value = Decimal(f"{match['int'] or '0'}.{match['frac'] or '0'}")
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        return None, "Enter a whole number or one decimal, e.g. 25 or 12.5."
    if value > HUNDRED:
        return None, "At most 100 points."
    return value.quantize(Decimal("0.1")), None


def value_error(value: Decimal) -> str | None:
    """The same rules for a value already parsed (the service's check): 0–100, at most one decimal."""
    if not value.is_finite():
        return "Enter a number."
    if value < 0:
        return "Points cannot be negative."
    if value > HUNDRED:
        return "At most 100 points."
    if value != value.quantize(Decimal("0.1")):
        return "Use at most one decimal place, e.g. 12.5."
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
    gap = f"{points_str(diff)} missing" if diff > 0 else f"{points_str(-diff)} too many"
    return f"{group.label} total {points_str(total)} points; they must total exactly 100 ({gap})."


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
                errors.setdefault(key, []).append("Enter the points for this weight (0 if none).")
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


def allocation_parse(
    data: Mapping[str, str], groups: Sequence[WeightGroup], *, field_name: Mapping[str, str],
    rationale_name: Mapping[str, str],
) -> tuple[AllocationInput, dict[str, list[str]]]:
    """Parse form data ({field name: text}) into an allocation; errors are keyed by weight key or "total:<group>"."""
    points: dict[str, Decimal] = {}
    rationales: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    for group in groups:
        for key in group.keys:
            value, message = points_parse(data.get(field_name[key]))
            if message:
                errors[key] = [message]
            elif value is not None:
                points[key] = value
            rationale = (data.get(rationale_name[key]) or "").strip()
            if len(rationale) > MAX_RATIONALE:
                errors.setdefault(key, []).append(f"Keep the rationale under {MAX_RATIONALE} characters.")
            elif rationale:
                rationales[key] = rationale
    for key, messages in allocation_errors(points, groups).items():
        if key not in errors:  # a field already reported as unparseable is not reported twice
            errors[key] = messages
    return AllocationInput(points=points, rationales=rationales), errors
