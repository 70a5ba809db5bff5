"""Allocation rules in Decimal: integers or one decimal, 0–100, each level totals exactly 100 (no database).

The page's form (`AllocationForm`, one `PointsField` per weight) and the service's check
(`allocation_errors`) must accept and refuse the same things.
"""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from delphi.allocation import WeightGroup, allocation_errors, points_str
from delphi.forms import AllocationForm, PointsField
from delphi.selectors import WeightField, WeightStructure

GROUPS = [WeightGroup("dimensions", "The six dimensions", ("a", "b", "c")),
          WeightGroup("a", "The sub-dimensions of A", ("a.x", "a.y"))]


def weight(key: str) -> WeightField:
    return WeightField(key, key.upper(), "", Decimal("0"))


# Three dimensions; A has two sub-dimensions, B and C one each (which must then carry all 100 points).
STRUCTURE = WeightStructure(
    dimensions=(weight("a"), weight("b"), weight("c")),
    subs={"a": (weight("a.x"), weight("a.y")), "b": (weight("b.only"),), "c": (weight("c.only"),)},
)


def form(**values: str) -> AllocationForm:
    data = {"w__a": "50", "w__b": "30", "w__c": "20", "w__a__x": "60", "w__a__y": "40", "w__b__only": "100",
            "w__c__only": "100"}
    data.update({f"w__{k}": v for k, v in values.items()})
    return AllocationForm(data, structure=STRUCTURE)


def points_parse(text: str) -> tuple[Decimal | None, str | None]:
    try:
        return PointsField().clean(text), None
    except ValidationError as exc:
        return None, " ".join(exc.messages)


@pytest.mark.parametrize(("text", "value"), [
    ("25", Decimal("25")), ("12.5", Decimal("12.5")), ("12,5", Decimal("12.5")), (" 0 ", Decimal("0")),
    ("100", Decimal("100")), ("7.", Decimal("7")), (".5", Decimal("0.5")), ("-0", Decimal("0")),
])
def test_whole_numbers_and_one_decimal_are_accepted(text: str, value: Decimal) -> None:
    parsed, error = points_parse(text)
    assert (parsed, error) == (value, None)
    assert parsed is not None and not parsed.is_signed()  # "-0" is stored as 0


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
    ("Infinity", "is not a number"),
    ("1.2.3", "is not a number"),
    ("١٢", "is not a number"),  # Arabic-Indic digits: the page's running total would not count them
])
def test_bad_values_get_a_clear_message(text: str, message: str) -> None:
    value, error = points_parse(text)
    assert value is None and error is not None and message in error


def test_a_total_of_99_5_is_a_form_error_naming_its_level_and_no_field_error() -> None:
    f = form(a="49.5")
    assert not f.is_valid()
    assert f.non_field_errors() == ["The six dimensions total 99.5 points; they must total exactly 100 (0.5 missing)."]
    assert set(f.errors) == {"__all__"}
    groups = {g.id: g.errors for g in f.groups({})}
    assert groups == {"dimensions": ["The six dimensions total 99.5 points; they must total exactly 100 (0.5 missing)."],
                      "a": [], "b": [], "c": []}
    assert f.general_errors() == []


def test_two_decimals_are_rejected_on_the_field_not_as_a_total() -> None:
    f = form(a="49.75", b="30.25")
    assert not f.is_valid()
    assert f.errors == {"w__a": ["Use at most one decimal place, e.g. 12.5."],
                        "w__b": ["Use at most one decimal place, e.g. 12.5."]}


def test_negative_and_too_many_points_are_rejected_on_their_fields() -> None:
    f = form(**{"a__x": "-10", "a__y": "110"})
    assert not f.is_valid()
    assert f.errors == {"w__a__x": ["Points cannot be negative."], "w__a__y": ["At most 100 points."]}


def test_a_valid_allocation_with_one_decimal_and_rationales() -> None:
    f = form(a="33.4", b="33.3", c="33.3", a__x="100", a__y="0")
    f.data = {**f.data, "r__a": "  Because. "}
    assert f.is_valid(), f.errors
    allocation = f.allocation()
    assert allocation.points == {"a": Decimal("33.4"), "b": Decimal("33.3"), "c": Decimal("33.3"),
                                 "a.x": Decimal("100"), "a.y": Decimal("0"), "b.only": Decimal("100"),
                                 "c.only": Decimal("100")}
    assert allocation.rationales == {"a": "Because."}
    # Decimal, not float: 33.4 + 33.3 + 33.3 is exactly 100 (in floats it is 99.99999999999999).
    assert sum(allocation.points[k] for k in ("a", "b", "c")) == Decimal("100")


def test_a_too_long_rationale_is_an_error_on_its_own_field() -> None:
    f = form()
    f.data = {**f.data, "r__b": "x" * 2001}
    assert not f.is_valid()
    assert f.errors == {"r__b": ["Keep the rationale under 2000 characters."]}


def test_the_service_check_rejects_the_same_things_in_parsed_values() -> None:
    points = {"a": Decimal("49.75"), "b": Decimal("30.25"), "c": Decimal("20"), "a.x": Decimal("-1"),
              "a.y": Decimal("101"), "zz": Decimal("0")}
    errors = allocation_errors(points, GROUPS)
    assert set(errors) == {"a", "b", "a.x", "a.y", "__all__"}
    errors = allocation_errors({"a": Decimal("50"), "b": Decimal("50"), "c": Decimal("0.5"), "a.x": Decimal("60"),
                                "a.y": Decimal("40")}, GROUPS)
    assert errors == {"total:dimensions": ["The six dimensions total 100.5 points; they must total exactly 100 "
                                           "(0.5 too many)."]}


def test_service_errors_land_on_the_fields_and_levels_they_name() -> None:
    f = form()
    assert f.is_valid()
    f.add_service_error(ValidationError({"a.x": ["Points cannot be negative."],
                                         "total:a": ["The sub-dimensions of A total 90 points; they must total "
                                                     "exactly 100 (10 missing)."],
                                         "__all__": ["Round 1 is closed; answers can no longer be changed."]}))
    assert f.errors["w__a__x"] == ["Points cannot be negative."]
    assert {g.id: g.errors for g in f.groups({})}["a"] == [
        "The sub-dimensions of A total 90 points; they must total exactly 100 (10 missing)."]
    assert f.general_errors() == ["Round 1 is closed; answers can no longer be changed."]


def test_points_are_shown_as_typed() -> None:
    assert [points_str(Decimal(v)) for v in ("25.0", "12.5", "0.0", "100.0")] == ["25", "12.5", "0", "100"]
