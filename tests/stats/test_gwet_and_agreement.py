"""Gwet's AC1/AC2 and observed agreement against irrCAC's published output (Gwet 2014)."""
from __future__ import annotations

import numpy as np
import pytest

from stats.agreement import percent_agreement, weighted_observed_agreement, within_one_agreement
from stats.gwet import gwet_ac, gwet_ac1, gwet_ac2, gwet_ac_from_counts
from stats.matrix import UndefinedCoefficientError, resolve_categories, value_counts
from stats.weights import agreement_weights
from tests.stats.reference_data import CAC_RAW4RATERS, DISTRIB_6RATERS


def test_percent_agreement_matches_irrcac_on_cac_raw4raters():
    # irrCAC README, pa.coeff.raw(cac.raw4raters): 0.8181818 (per-unit pairwise agreement, 11 pairable units).
    assert percent_agreement(CAC_RAW4RATERS) == pytest.approx(0.8181818, abs=5e-8)


def test_quadratic_weighted_agreement_matches_irrcac():
    # irrCAC vignette "weighting", pa.coeff.raw(cac.raw4raters, weights = "quadratic"): 0.9753788.
    cats = resolve_categories(CAC_RAW4RATERS)
    pa = weighted_observed_agreement(value_counts(CAC_RAW4RATERS, cats), agreement_weights(cats, "quadratic"))
    assert pa == pytest.approx(0.9753788, abs=5e-8)


def test_gwet_ac1_matches_irrcac_on_cac_raw4raters():
    # irrCAC README, gwet.ac1.raw(cac.raw4raters): AC1 0.77544 (pa 0.8181818, pe 0.1903212).
    assert gwet_ac1(CAC_RAW4RATERS) == pytest.approx(0.77544, abs=5e-6)


def test_gwet_ac2_quadratic_matches_irrcac_on_cac_raw4raters():
    # irrCAC vignette "weighting", gwet.ac1.raw(cac.raw4raters, weights = "quadratic"): AC2 0.914.
    assert round(gwet_ac2(CAC_RAW4RATERS, weights="quadratic"), 3) == 0.914


def test_gwet_ac2_linear_matches_the_irrcac_python_port():
    # afergadis/irrCAC test_gwet_raw4raters_linear_weights: 0.859 (secondary source: not in Gwet's own docs).
    assert round(gwet_ac2(CAC_RAW4RATERS, weights="linear"), 3) == 0.859


def test_gwet_ac1_and_ac2_match_irrcac_on_distrib_6raters():
    # irrCAC README gwet.ac1.dist(distrib.6raters): 0.4448007; vignette "weighting", quadratic: 0.4837438.
    assert gwet_ac_from_counts(DISTRIB_6RATERS) == pytest.approx(0.4448007, abs=5e-8)
    assert gwet_ac_from_counts(DISTRIB_6RATERS, weights="quadratic") == pytest.approx(0.4837438, abs=5e-8)


def test_gwet_ac1_counts_unused_categories():
    # Gwet (2014): q is the number of possible categories, so an unused category changes p_e and AC1.
    data = np.array([[0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 2.0, 2.0]])
    assert gwet_ac(data, [0, 1, 2]) != pytest.approx(gwet_ac(data, [0, 1, 2, 3]))


def test_gwet_ac1_is_one_when_everyone_agrees_on_one_category_of_the_scale():
    # Unlike κ, AC1 stays defined when one category is used, provided the scale has more than one.
    assert gwet_ac1(np.full((3, 5), 2.0), [0, 1, 2, 3]) == pytest.approx(1.0)


def test_gwet_ac_needs_two_possible_categories():
    with pytest.raises(UndefinedCoefficientError):
        gwet_ac1(np.full((3, 5), 2.0))


def test_within_one_agreement_counts_adjacent_ratings():
    # Pairs per unit: (0,1) within one, (0,3) not, (3,3) exact → 2/3.
    assert within_one_agreement(np.array([[0.0, 0.0, 3.0], [1.0, 3.0, 3.0]])) == pytest.approx(2 / 3)


def test_agreement_is_undefined_without_a_pairable_unit():
    with pytest.raises(UndefinedCoefficientError, match="two or more raters"):
        percent_agreement(np.array([[1.0, np.nan], [np.nan, 2.0]]))


def test_agreement_weights_follow_irrcac():
    # irrCAC vignette "weighting": linear.weights(1:3) and quadratic.weights(1:3).
    np.testing.assert_allclose(agreement_weights([1, 2, 3], "linear"), [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]])
    np.testing.assert_allclose(
        agreement_weights([1, 2, 3], "quadratic"), [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]]
    )
