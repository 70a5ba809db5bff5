"""Allocation rules in Decimal: integers or one decimal, 0–100, each level totals exactly 100 (no database)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from calibration.delphi.allocation import (
    WeightGroup,
    allocation_errors,
    allocation_parse,
    points_parse,
    points_str,
)

GROUPS = [WeightGroup("dimensions", "The six dimensions", ("a", "b", "c")),
          WeightGroup("a", "The sub-dimensions of A", ("a.x", "a.y"))]
NAMES = {k: f"w__{k}" for g in GROUPS for k in g.keys}
RATIONALES = {k: f"r__{k}" for g in GROUPS for k in g.keys}


def parse(**values: str):  # type: ignore[no-untyped-def]
    data = {"w__a": "50", "w__b": "30", "w__c": "20", "w__a.x": "60", "w__a.y": "40"}
    data.update({f"w__{k.replace('__', '.')}": v for k, v in values.items()})
    return allocation_parse(data, GROUPS, field_name=NAMES, rationale_name=RATIONALES)


@pytest.mark.parametrize(("text", "value"), [
    ("25", Decimal("25")), ("12.5", Decimal("12.5")), ("12,5", Decimal("12.5")), (" 0 ", Decimal("0")),
    ("100", Decimal("100")), ("7.", Decimal("7")), (".5", Decimal("0.5")), ("-0", Decimal("0")),
])
def test_whole_numbers_and_one_decimal_are_accepted(text: str, value: Decimal) -> None:
    assert points_parse(text) == (value, None)


@pytest.mark.parametrize(("text", "message"), [
    ("12.25", "Use at most one decimal place"),
    ("12.50", "Use at most one decimal place"),
    ("-5", "Points cannot be negative."),
    ("−5", "Points cannot be negative."),
    ("100.1", "At most 100 points."),
    ("abc", "is not a number"),
    ("1e1", "is not a number"),
    ("", "Enter the points"),
    ("NaN", "is not a number"),
])
def test_bad_values_get_a_clear_message(text: str, message: str) -> None:
    value, error = points_parse(text)
    assert value is None and message in error


def test_a_total_of_99_5_is_rejected_with_the_difference() -> None:
    _, errors = parse(a="49.5")
    assert errors == {"total:dimensions": ["The six dimensions total 99.5 points; they must total exactly 100 "
                                           "(0.5 missing)."]}


def test_two_decimals_are_rejected_on_the_field_not_as_a_total() -> None:
    _, errors = parse(a="49.75", b="30.25")
    assert errors == {"a": ["Use at most one decimal place, e.g. 12.5."], "b": ["Use at most one decimal place, e.g. 12.5."]}


def test_negative_points_are_rejected() -> None:
    _, errors = parse(**{"a__x": "-10", "a__y": "110"})
    assert errors == {"a.x": ["Points cannot be negative."], "a.y": ["At most 100 points."]}


def test_a_valid_allocation_with_one_decimal_and_rationales() -> None:
    data = {"w__a": "33.4", "w__b": "33.3", "w__c": "33.3", "w__a.x": "100", "w__a.y": "0", "r__a": "  Because. "}
    allocation, errors = allocation_parse(data, GROUPS, field_name=NAMES, rationale_name=RATIONALES)
    assert errors == {}
    assert allocation.points == {"a": Decimal("33.4"), "b": Decimal("33.3"), "c": Decimal("33.3"),
                                 "a.x": Decimal("100"), "a.y": Decimal("0")}
    assert allocation.rationales == {"a": "Because."}
    # Decimal, not float: 33.4 + 33.3 + 33.3 is exactly 100 (in floats it is 99.99999999999999).
    assert sum(allocation.points[k] for k in ("a", "b", "c")) == Decimal("100")


def test_the_service_check_rejects_the_same_things_in_parsed_values() -> None:
    points = {"a": Decimal("49.75"), "b": Decimal("30.25"), "c": Decimal("20"), "a.x": Decimal("-1"),
              "a.y": Decimal("101"), "zz": Decimal("0")}
    errors = allocation_errors(points, GROUPS)
    assert set(errors) == {"a", "b", "a.x", "a.y", "__all__"}
    errors = allocation_errors({"a": Decimal("50"), "b": Decimal("50"), "c": Decimal("0.5"), "a.x": Decimal("60"),
                                "a.y": Decimal("40")}, GROUPS)
    assert errors == {"total:dimensions": ["The six dimensions total 100.5 points; they must total exactly 100 "
                                           "(0.5 too many)."]}


def test_points_are_shown_as_typed() -> None:
    assert [points_str(Decimal(v)) for v in ("25.0", "12.5", "0.0", "100.0")] == ["25", "12.5", "0", "100"]
