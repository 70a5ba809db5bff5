"""One place maps keys to names (evaluations/labels.py); the pages show names, never raw keys."""
from __future__ import annotations

from django.template import Context, Template

from evaluations.labels import NEUTRAL, group_label, rubric_label, tradition_label
from evaluations.methodology import RUBRIC_V1, TRADITIONS


def test_every_dimension_and_sub_dimension_key_of_the_rubric_has_its_rubric_name() -> None:
    for dimension in RUBRIC_V1:
        assert rubric_label(dimension.key) == dimension.name
        for sub in dimension.sub_dimensions:
            assert rubric_label(sub.key) == sub.name
    assert rubric_label("interpretiveMethod") == "Interpretive Method"
    assert rubric_label("doctrinal") == "Doctrinal Precision"


def test_a_key_the_rubric_does_not_know_is_spelt_out_not_shown_raw() -> None:
    assert rubric_label("newSubDimension") == "New sub dimension"
    assert rubric_label("") == "" and rubric_label(None) == ""


def test_one_name_per_tradition_whatever_spelling_comes_in() -> None:
    for tradition in TRADITIONS:
        assert tradition_label(tradition.key) == tradition_label(tradition.name) == tradition.name
    for no_tradition in (None, "", "none", "tradition-neutral", "Tradition-neutral"):
        assert tradition_label(no_tradition) == NEUTRAL == "Tradition-neutral"


def test_report_groups_are_named_for_people() -> None:
    assert group_label("overall", "all") == "Overall"
    assert group_label("sub_dimension", "interpretiveMethod") == "Sub-dimension: Interpretive Method"
    assert group_label("dimension", "hermeneutical") == "Dimension: Hermeneutical Reasoning"
    assert group_label("tradition", "none") == "Tradition: Tradition-neutral"
    assert group_label("tradition", "catholic") == "Tradition: Catholic"
    assert group_label("difficulty", "hard") == "Difficulty: Hard"


def test_the_template_filters_are_the_same_functions() -> None:
    html = Template("{% load labels %}{{ k|rubric_label }}|{{ t|tradition_label }}|{{ g|group_label }}|"
                    "{{ ks|rubric_labels|join:', ' }}").render(Context(
                        {"k": "genreAwareness", "t": "none", "g": {"kind": "dimension", "value": "textual"},
                         "ks": ["textual", "apologetics"]}))
    assert html == "Genre Awareness|Tradition-neutral|Dimension: Textual Analysis|Textual Analysis, Apologetics"
