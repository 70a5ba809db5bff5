"""Cohen's and Fleiss' κ against published worked examples."""
from __future__ import annotations

import numpy as np
import pytest

from stats.kappa import cohen_kappa, fleiss_kappa, fleiss_kappa_from_counts
from stats.matrix import UndefinedCoefficientError
from tests.stats.reference_data import (
    CAC_RAW4RATERS,
    COHEN_WIKIPEDIA_TABLE,
    CONT3X3_ABSTRACTORS,
    DISTRIB_6RATERS,
    FLEISS_WIKIPEDIA,
    table_to_ratings,
)


def test_cohen_kappa_reproduces_the_wikipedia_example():
    # Wikipedia "Cohen's kappa", simple example: 20/5/10/15 → p_o 0.7, p_e 0.5, κ = 0.4.
    a, b = table_to_ratings(COHEN_WIKIPEDIA_TABLE)
    assert round(cohen_kappa(a, b, [0, 1]), 3) == 0.400


@pytest.mark.parametrize(
    ("weights", "published"),
    [
        (None, 0.7964094),  # irrCAC README, kappa2.table(cont3x3abstractors)
        ("quadratic", 0.8921569),  # irrCAC vignette "weighting", kappa2.table(..., quadratic.weights(1:3))
        ("linear", 0.843),  # afergadis/irrCAC test_cohen.py (3 decimals; secondary source)
    ],
)
def test_cohen_kappa_reproduces_irrcac_cont3x3abstractors(weights, published):
    a, b = table_to_ratings(CONT3X3_ABSTRACTORS)
    assert round(cohen_kappa(a, b, [0, 1, 2], weights), 3) == round(published, 3)


def test_cohen_kappa_keeps_an_unused_category():
    # Neither rater used 2. With labels 0..3 the linear weights see 1 → 3 as two steps apart; dropping the
    # unused category would make it one step, and give a different weighted κ.
    a = np.array([0, 1, 3, 3, 1, 0, 3, 1], dtype=float)
    b = np.array([0, 3, 3, 1, 1, 0, 3, 0], dtype=float)
    full = cohen_kappa(a, b, [0, 1, 2, 3], "linear")
    squeezed_a = np.where(a == 3, 2, a)
    squeezed_b = np.where(b == 3, 2, b)
    assert full != pytest.approx(cohen_kappa(squeezed_a, squeezed_b, [0, 1, 2], "linear"))
    # The unweighted κ does not depend on unused categories.
    assert cohen_kappa(a, b, [0, 1, 2, 3]) == pytest.approx(cohen_kappa(a, b, [0, 1, 3]))


def test_cohen_kappa_rejects_an_out_of_range_value_instead_of_dropping_it():
    with pytest.raises(ValueError, match="value 5 is not one of the categories"):
        cohen_kappa([0, 1, 2, 5], [0, 1, 2, 3], [0, 1, 2, 3])


def test_cohen_kappa_uses_only_units_both_raters_rated():
    a = np.array([1, 0, 1, np.nan, 0])
    b = np.array([1, 0, np.nan, 1, 0])
    assert cohen_kappa(a, b, [0, 1]) == pytest.approx(1.0)


def test_cohen_kappa_is_undefined_when_both_raters_use_one_category():
    with pytest.raises(UndefinedCoefficientError, match="chance agreement is 1"):
        cohen_kappa([2, 2, 2], [2, 2, 2], [0, 1, 2, 3])


def test_cohen_kappa_is_undefined_without_a_shared_unit():
    with pytest.raises(UndefinedCoefficientError, match="no unit was rated by both"):
        cohen_kappa([1, np.nan], [np.nan, 1], [0, 1])


def test_fleiss_kappa_reproduces_the_wikipedia_example():
    # Wikipedia "Fleiss' kappa", worked example: 10 subjects × 14 raters × 5 categories → κ = 0.210.
    assert round(fleiss_kappa_from_counts(FLEISS_WIKIPEDIA), 3) == 0.210


def test_fleiss_kappa_reproduces_fleiss_1971_as_published_by_irrcac():
    # irrCAC README, fleiss.kappa.dist(distrib.6raters): 0.4139265.
    assert fleiss_kappa_from_counts(DISTRIB_6RATERS) == pytest.approx(0.4139265, abs=5e-8)


def test_fleiss_kappa_with_missing_ratings_matches_irrcac():
    # irrCAC README, fleiss.kappa.raw(cac.raw4raters): 0.76117 — Gwet's generalisation to unequal raters.
    assert fleiss_kappa(CAC_RAW4RATERS) == pytest.approx(0.76117, abs=5e-6)


def test_fleiss_kappa_is_undefined_for_a_single_category():
    with pytest.raises(UndefinedCoefficientError, match="one category"):
        fleiss_kappa(np.full((3, 5), 1.0))
