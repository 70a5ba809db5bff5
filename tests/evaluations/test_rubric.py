"""Rubric v1.0 as the methodology (§4.4, §15.5) gives it, and weight validation."""
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from evaluations.judge.leaderboard import case_composite
from evaluations.methodology import RUBRIC_V1, DimensionSpec, SubDimensionSpec
from evaluations.models import RubricDimension, RubricSubDimension, RubricVersion, Tradition
from evaluations.selectors import difficulty_weight, rubric_weights
from evaluations.services import rubric_version_create

# Typed in from SPEC.md's table, independently of evaluations/methodology.py.
EXPECTED_V1 = {
    "textual": (25, {"lexicalAccuracy": 35, "translationFidelity": 35, "linguisticReasoning": 20, "sourceHandling": 10}),
    "hermeneutical": (20, {"interpretiveMethod": 35, "genreAwareness": 25, "contextualAnalysis": 25, "canonicalIntegration": 15}),
    "doctrinal": (20, {"doctrinalAccuracy": 35, "traditionFidelity": 35, "nuanceRecognition": 20, "sourceGrounding": 10}),
    "historical": (15, {"historicalAccuracy": 40, "developmentAwareness": 30, "patristicKnowledge": 20, "historiographicalMethod": 10}),
    "apologetics": (10, {"logicalValidity": 35, "evidenceUsage": 30, "objectionHandling": 25, "persuasiveClarity": 10}),
    "intertextual": (10, {"crossReferenceAccuracy": 40, "typologicalRecognition": 30, "allusionDetection": 20, "thematicIntegration": 10}),
}


def test_rubric_v1_weights_are_exactly_the_methodologys(rubric_v1):
    weights = rubric_weights(rubric=rubric_v1)
    assert {k: (int(w), {s: int(v) for s, v in subs.items()}) for k, (w, subs) in weights.items()} == EXPECTED_V1
    # Stored as exact decimals, not floats.
    assert all(isinstance(w, Decimal) for w, _ in weights.values())
    assert rubric_v1.weight_errors() == []
    assert rubric_v1.status == RubricVersion.Status.ACTIVE


def test_sub_dimension_order_follows_the_methodology(rubric_v1):
    textual = rubric_v1.dimensions.get(key="textual")
    assert [s.key for s in textual.sub_dimensions.all()] == list(EXPECTED_V1["textual"][1])
    assert [d.key for d in rubric_v1.dimensions.all()] == list(EXPECTED_V1)


def test_five_traditions_with_pentecostal_in_development(db):
    traditions = {t.key: t for t in Tradition.objects.all()}
    assert list(traditions) == ["catholic", "orthodox", "reformed", "evangelical", "pentecostal"]
    assert [k for k, t in traditions.items() if t.in_development] == ["pentecostal"]
    assert traditions["pentecostal"].min_panel_size == 2
    assert {t.min_panel_size for k, t in traditions.items() if k != "pentecostal"} == {3}


def test_rubric_whose_dimension_weights_do_not_sum_to_100_is_rejected(db):
    broken = (RUBRIC_V1[0]._replace(weight=26),) + RUBRIC_V1[1:]
    with pytest.raises(ValidationError) as info:
        rubric_version_create(version="bad-1", dimensions=broken)
    assert "sum to 101" in str(info.value)
    assert not RubricVersion.objects.filter(version="bad-1").exists()  # atomic


def test_rubric_whose_sub_dimension_weights_do_not_sum_to_100_is_rejected(db):
    textual = RUBRIC_V1[0]
    subs = (textual.sub_dimensions[0]._replace(weight=Decimal("34.5")),) + textual.sub_dimensions[1:]
    broken = (textual._replace(sub_dimensions=subs),) + RUBRIC_V1[1:]
    with pytest.raises(ValidationError, match="sub-dimension weights of textual sum to 99.5"):
        rubric_version_create(version="bad-2", dimensions=broken)


def test_decimal_weights_that_sum_to_100_exactly_are_accepted(db):
    # 33.33 + 33.33 + 33.34 = 100 exactly in decimal; in binary floats this family of sums drifts.
    thirds = (
        SubDimensionSpec("a", "A", Decimal("33.33"), ""),
        SubDimensionSpec("b", "B", Decimal("33.33"), ""),
        SubDimensionSpec("c", "C", Decimal("33.34"), ""),
    )
    dims = tuple(DimensionSpec(d.key, d.name, d.weight, d.description, thirds) for d in RUBRIC_V1)
    rubric = rubric_version_create(version="thirds", dimensions=dims)
    assert rubric.weight_errors() == []


def test_weight_out_of_range_is_refused_by_the_database(rubric_v1):
    dimension = rubric_v1.dimensions.get(key="textual")
    with pytest.raises(IntegrityError), transaction.atomic():
        RubricSubDimension.objects.filter(dimension=dimension, key="sourceHandling").update(weight=Decimal("101"))
    with pytest.raises(IntegrityError), transaction.atomic():
        RubricDimension.objects.create(rubric=rubric_v1, key="textual", name="again", weight=1)


def test_composite_follows_methodology_5_4_1(rubric_v1):
    _, subs = rubric_weights(rubric=rubric_v1)["textual"]
    # 3/3×.35 + 2/3×.35 + 1/3×.20 + 0/3×.10 = .35 + .2333… + .0666… = .65
    value = case_composite(raw_scores={"lexicalAccuracy": 3, "translationFidelity": 2, "linguisticReasoning": 1,
                                       "sourceHandling": 0}, sub_weights=subs)
    assert value.quantize(Decimal("0.0001")) == Decimal("0.6500")
    assert case_composite(raw_scores=dict.fromkeys(subs, 3), sub_weights=subs) == Decimal(1)
    with pytest.raises(ValueError, match="sourceHandling"):
        case_composite(raw_scores={"lexicalAccuracy": 3, "translationFidelity": 2, "linguisticReasoning": 1},
                       sub_weights=subs)


def test_difficulty_weights():
    assert [difficulty_weight(d) for d in ("easy", "medium", "hard", "expert")] == [
        Decimal("1.0"), Decimal("1.5"), Decimal("2.0"), Decimal("3.0")]
