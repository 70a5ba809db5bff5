"""The rating-file vocabulary (stats.ratingfile): every alias, the one message for a wrong header, mapping choices."""
from __future__ import annotations

import pytest

from stats.ratingfile import COLUMNS, HeaderError, canonical_of, header_columns, normalise

REQUIRED = ("item", "rater", "score")


@pytest.mark.parametrize(("canonical", "alias"), [(c, a) for c, aliases in COLUMNS.items() for a in aliases])
def test_every_alias_names_its_canonical_column(canonical: str, alias: str) -> None:
    assert canonical_of(alias) == canonical
    assert canonical_of(alias.upper().replace("_", " ")) == canonical  # case and spaces do not matter
    names = ["extra", *("x" + c for c in COLUMNS if c != canonical), f" {alias.title()} "]
    assert header_columns(names, required=(), optional=(canonical,)) == {canonical: f" {alias.title()} "}


def test_normalise_treats_spaces_and_hyphens_as_underscores() -> None:
    assert normalise("  Rater-Kind ") == "rater_kind" and normalise("Rater  Kind") == "rater_kind"
    assert canonical_of("grade") is None


@pytest.mark.parametrize("header", [["item", "rater", "score"], ["unit", "rater", "value"], ["rater", "item", "score"],
                                    ["Rater", "Unit", "Rating", "dimension", "kind"]])
def test_the_common_shapes_are_one_header(header: list[str]) -> None:
    mapped = header_columns(header, required=REQUIRED, optional=("dimension", "rater_kind"))
    assert set(mapped) >= set(REQUIRED) and all(name in header for name in mapped.values())
    assert canonical_of(mapped["item"]) == "item" and canonical_of(mapped["score"]) == "score"


def test_a_wrong_header_is_one_message_naming_expected_and_found_columns() -> None:
    with pytest.raises(HeaderError) as info:
        header_columns(["who", "what", "grade"], required=REQUIRED, optional=("dimension",), where="f.csv:1")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("f.csv:1: wrong header: expected the columns item,rater,score (optional: dimension); "
                              "found: who,what,grade")
    assert "no column for item (or unit, item_id, unit_id)" in message and "no column for score (or value, rating)" in message
    assert info.value.missing == ["item", "rater", "score"] and info.value.found == ["who", "what", "grade"]


def test_two_columns_for_one_role_are_refused_unless_one_is_preferred() -> None:
    with pytest.raises(HeaderError, match="the columns unit, item all mean item"):
        header_columns(["unit", "item", "rater", "score"], required=REQUIRED)
    assert header_columns(["unit", "item", "rater", "score"], required=REQUIRED, prefer=("unit",))["item"] == "unit"


def test_chosen_columns_override_the_guess_and_must_exist() -> None:
    mapped = header_columns(["who", "what", "grade", "score"], required=REQUIRED,
                            chosen={"item": "what", "rater": "who", "score": "grade"})
    assert mapped == {"item": "what", "rater": "who", "score": "grade"}
    assert "dimension" not in header_columns(["item", "rater", "score", "dimension"], required=REQUIRED,
                                             optional=("dimension",), chosen={"dimension": ""})
    with pytest.raises(HeaderError, match="the column 'nope' chosen for rater is not in the header"):
        header_columns(["item", "score"], required=REQUIRED, chosen={"rater": "nope"})
    with pytest.raises(HeaderError, match="'item' is chosen for two roles"):
        header_columns(["item", "score"], required=REQUIRED, chosen={"rater": "item"})
