"""Cohen's κ for all rater pairs from one confusion tensor: published examples, scikit-learn, Cohen (1968) by hand."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from stats.kappa import cohen_kappa
from stats.matrix import UndefinedCoefficientError
from stats.pairwise import (
    cohen_kappa_from_confusion,
    disagreement_weights,
    pairwise_cohen_kappa,
    pairwise_confusion,
)
from tests.stats.reference_data import COHEN_WIKIPEDIA_TABLE, CONT3X3_ABSTRACTORS, table_to_ratings

WEIGHTS = (None, "linear", "quadratic")


def test_reproduces_the_wikipedia_example():
    # Wikipedia "Cohen's kappa", simple example: 20/5/10/15 → p_o 0.7, p_e 0.5, κ = 0.4.
    assert cohen_kappa_from_confusion(COHEN_WIKIPEDIA_TABLE, [0, 1]) == pytest.approx(0.4, abs=1e-12)
    a, b = table_to_ratings(COHEN_WIKIPEDIA_TABLE)
    assert pairwise_cohen_kappa(np.vstack([a, b]), [0, 1])[0, 1] == pytest.approx(0.4, abs=1e-12)


@pytest.mark.parametrize(
    ("weights", "published", "digits"),
    [
        (None, 0.7964094, 7),  # irrCAC README, kappa2.table(cont3x3abstractors)
        ("quadratic", 0.8921569, 7),  # irrCAC vignette "weighting", quadratic.weights(1:3)
        ("linear", 0.843, 3),  # afergadis/irrCAC test_cohen.py (secondary source)
    ],
)
def test_reproduces_irrcac_cont3x3abstractors(weights, published, digits):
    assert round(float(cohen_kappa_from_confusion(CONT3X3_ABSTRACTORS, [1, 2, 3], weights)), digits) == published
    a, b = table_to_ratings(CONT3X3_ABSTRACTORS)
    kappa = pairwise_cohen_kappa(np.vstack([a, b, a]), [0, 1, 2], weights)
    assert round(float(kappa[0, 1]), digits) == published
    assert kappa[1, 0] == kappa[0, 1] and kappa[0, 2] == pytest.approx(1.0)


def _random_panel(rng: np.random.Generator) -> tuple[np.ndarray, list[float]]:
    """Raters × units with missing ratings, sometimes a category nobody uses, sometimes one rater in one category."""
    n_raters, n_units = int(rng.integers(2, 8)), int(rng.integers(1, 40))
    n_categories = int(rng.integers(2, 6))
    step, start = int(rng.choice([1, 2, 3])), int(rng.choice([0, 1, -2]))
    # equally spaced integer codes: scikit-learn weighs positions and takes no non-integer labels
    categories = [float(start + step * k) for k in range(n_categories)]
    used = rng.choice(categories, size=int(rng.integers(1, n_categories + 1)), replace=False)
    data = rng.choice(used, size=(n_raters, n_units)).astype(float)
    data[rng.random(data.shape) < rng.uniform(0.0, 0.6)] = np.nan
    if rng.random() < 0.2:
        data[0, ~np.isnan(data[0])] = used[0]  # a rater who always gives the same score
    return data, categories


@pytest.mark.parametrize("weights", WEIGHTS)
def test_equals_scikit_learn_for_every_pair_of_many_random_panels(weights):
    rng = np.random.default_rng(2026)
    checked = undefined = 0
    for _ in range(150):
        data, categories = _random_panel(rng)
        kappa = pairwise_cohen_kappa(data, categories, weights)
        for a, b in itertools.combinations(range(data.shape[0]), 2):
            try:
                expected = cohen_kappa(data[a], data[b], categories, weights)
            except UndefinedCoefficientError:
                assert np.isnan(kappa[a, b]) and np.isnan(kappa[b, a])
                undefined += 1
                continue
            assert abs(kappa[a, b] - expected) <= 1e-12
            assert abs(kappa[b, a] - expected) <= 1e-12
            checked += 1
    assert checked > 600 and undefined > 20  # both branches were exercised


def _cohen_1968_by_hand(a: np.ndarray, b: np.ndarray, values: list[float], power: int) -> float:
    """Cohen (1968): κ_w = 1 − Σ v o / Σ v e, with v = |x_k − x_l|**power, summed unit by unit and cell by cell."""
    both = [(x, y) for x, y in zip(a, b, strict=True) if not (np.isnan(x) or np.isnan(y))]
    n = len(both)
    observed = sum(abs(x - y) ** power for x, y in both) / n
    share_a = {c: sum(x == c for x, _ in both) / n for c in values}
    share_b = {c: sum(y == c for _, y in both) / n for c in values}
    chance = sum(share_a[k] * share_b[m] * abs(k - m) ** power for k in values for m in values)
    return 1.0 - observed / chance


@pytest.mark.parametrize(("weights", "power"), [("linear", 1), ("quadratic", 2)])
def test_weights_come_from_category_values_not_positions(weights, power):
    values = [0.0, 1.0, 3.0]  # unequally spaced: 1 → 3 is twice as far as 0 → 1
    rng = np.random.default_rng(7)
    data = rng.choice(values, size=(4, 30)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    kappa = pairwise_cohen_kappa(data, values, weights)
    for a, b in itertools.combinations(range(4), 2):
        assert kappa[a, b] == pytest.approx(_cohen_1968_by_hand(data[a], data[b], values, power), abs=1e-12)
    # scikit-learn weighs positions (0, 1, 2), which gives a different number for these codes.
    by_position = cohen_kappa(data[0], data[1], values, weights)
    assert abs(kappa[0, 1] - by_position) > 1e-3
    # A change of unit or origin of the scale does not change κ.
    rescaled = pairwise_cohen_kappa(10 * data + 5, [5.0, 15.0, 35.0], weights)
    np.testing.assert_allclose(rescaled, kappa, atol=1e-12)


def test_confusion_counts_only_units_both_raters_rated():
    data = np.array([[0, 1, 2, np.nan, 3], [0, 2, np.nan, 1, 3], [np.nan, np.nan, 2, 2, np.nan]])
    counts = pairwise_confusion(data, [0, 1, 2, 3])
    assert counts.shape == (3, 3, 4, 4)
    assert counts[0, 1].sum() == 3 and counts[0, 1][0, 0] == counts[0, 1][1, 2] == counts[0, 1][3, 3] == 1
    assert (counts[1, 0] == counts[0, 1].T).all()
    assert counts[0, 0].sum() == 4 and np.trace(counts[0, 0]) == 4  # a rater with themselves: the diagonal
    assert counts[0, 2].sum() == 1 and counts[1, 2].sum() == 1


def test_undefined_pairs_are_nan():
    data = np.array([[1, 1, 1, np.nan], [1, 1, 1, 2], [np.nan, np.nan, np.nan, 0]])
    kappa = pairwise_cohen_kappa(data, [0, 1, 2])
    assert np.isnan(kappa[0, 1])  # both used only category 1 on their common units
    assert np.isnan(kappa[0, 2])  # no common unit
    assert kappa[1, 2] == 0.0  # one common unit, on which they disagree: p_o = p_e = 0
    assert np.isnan(cohen_kappa_from_confusion(np.zeros((3, 3)), [0, 1, 2]))


def test_rejects_a_value_outside_the_categories_instead_of_dropping_it():
    with pytest.raises(ValueError, match="not among the categories"):
        pairwise_confusion([[0, 1, 4], [0, 1, 1]], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="unknown weights"):
        disagreement_weights([0, 1], "cubic")  # type: ignore[arg-type]
