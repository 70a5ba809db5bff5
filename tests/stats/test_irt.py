"""Graded response model and equating, checked against simulations with known parameters and a hand computation."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stats.irt import (
    Equating,
    equate_mean_sigma,
    equate_stocking_lord,
    grm_expected_score,
    grm_fit,
    grm_probabilities,
    grm_simulate,
)

pytestmark = pytest.mark.simulation  # no database: .ci/run runs it once, in the SQLite pass


def item_bank(rng: np.random.Generator, items: int) -> tuple[np.ndarray, np.ndarray]:
    """Discriminations log-normal (median e^0.3 ≈ 1.35, as LLM benchmark items tend to discriminate well),
    item locations N(0, 1), thresholds one logit apart around the location with jitter."""
    a = np.exp(rng.normal(0.3, 0.3, items))
    location = rng.normal(0.0, 1.0, items)
    b = location[:, None] + np.array([-1.0, 0.0, 1.0])[None, :] + rng.normal(0, 0.2, (items, 3))
    return a, np.sort(b, axis=1)


def test_probabilities_by_hand():
    # a = 1.5, b = (-1, 0, 1), θ = 0.5: P*(k) = logistic(1.5 (0.5 - b_k))
    star = [1 / (1 + math.exp(-1.5 * (0.5 - bk))) for bk in (-1.0, 0.0, 1.0)]
    expected = [1 - star[0], star[0] - star[1], star[1] - star[2], star[2]]
    probs = grm_probabilities(np.array([0.5]), np.array([1.5]), np.array([[-1.0, 0.0, 1.0]]))[0, 0]
    assert probs == pytest.approx(expected, abs=1e-12)
    assert probs.sum() == pytest.approx(1.0)
    assert grm_expected_score(np.array([0.5]), np.array([1.5]), np.array([[-1.0, 0.0, 1.0]]))[0, 0] == pytest.approx(
        sum(k * p for k, p in enumerate(expected))
    )


def test_parameter_recovery_400_items_20_models():
    """The issue's design: 400 items scored 0–3 by 20 models. Difficulty (mean threshold) estimates must
    correlate ≥ 0.9 with the generating values; abilities ≥ 0.95; the 95 % intervals of difficulty cover."""
    rng = np.random.default_rng(20261124)
    a, b = item_bank(rng, 400)
    theta = rng.normal(0, 1, 20)
    fit = grm_fit(grm_simulate(theta, a, b, rng))
    assert fit.converged
    true_difficulty = b.mean(axis=1)
    assert np.corrcoef(fit.difficulty, true_difficulty)[0, 1] >= 0.9
    assert np.corrcoef(fit.theta, theta)[0, 1] >= 0.95
    covered = np.abs(fit.difficulty - true_difficulty) <= 1.96 * fit.difficulty_se
    assert covered.mean() >= 0.85
    # every estimate finite, thresholds ordered, discriminations positive
    assert np.all(np.isfinite(fit.b)) and np.all(np.diff(fit.b, axis=1) > 0) and np.all(fit.a > 0)
    # ability intervals: the posterior SD of 20 models answering 400 items is small
    assert np.all(fit.theta_sd < 0.3)


def test_recovery_at_a_large_sample_is_close():
    """With 1,000 persons, every kind of parameter is recovered tightly (no prior-driven bias)."""
    rng = np.random.default_rng(7)
    a, b = item_bank(rng, 30)
    theta = rng.normal(0, 1, 1000)
    fit = grm_fit(grm_simulate(theta, a, b, rng))
    assert np.abs(fit.b - b).mean() < 0.12
    assert np.corrcoef(fit.a, a)[0, 1] > 0.9
    assert abs(float(np.mean(fit.b - b))) < 0.05


def test_misfitting_item_is_flagged():
    """An item answered at random (unrelated to ability) has outfit far from 1; model-conforming items do not."""
    rng = np.random.default_rng(3)
    a, b = item_bank(rng, 40)
    theta = rng.normal(0, 1, 600)
    x = grm_simulate(theta, a, b, rng)
    x[:, 0] = rng.permutation(x[:, 0])  # same marginal distribution, no relation to θ
    fit = grm_fit(x)
    assert fit.misfit[0] or fit.a[0] < 0.4
    assert fit.misfit[1:].mean() < 0.1


def test_missing_responses_and_bad_input():
    rng = np.random.default_rng(5)
    a, b = item_bank(rng, 20)
    x = grm_simulate(rng.normal(0, 1, 200), a, b, rng)
    x[rng.random(x.shape) < 0.3] = np.nan
    fit = grm_fit(x)
    assert np.corrcoef(fit.difficulty, b.mean(axis=1))[0, 1] > 0.9
    assert fit.n_responses.sum() == np.count_nonzero(~np.isnan(x))
    with pytest.raises(ValueError, match="whole numbers 0..3"):
        grm_fit(np.array([[0, 4.0], [1, 2]]))
    with pytest.raises(ValueError, match="at least two persons"):
        grm_fit(np.array([[0, 1.0]]))


def test_equating_recovers_an_exact_transformation():
    """Form Y's parameters are form X's seen through θ_Y = (θ_X − 0.7) / 1.2: both methods give A = 1.2, B = 0.7."""
    rng = np.random.default_rng(11)
    a, b = item_bank(rng, 15)
    b_y = (b - 0.7) / 1.2
    a_y = a * 1.2
    for method in (equate_mean_sigma(b, b_y), equate_stocking_lord(a, b, a_y, b_y)):
        assert method.A == pytest.approx(1.2, abs=1e-5)
        assert method.B == pytest.approx(0.7, abs=1e-5)
        assert method.difficulties(b_y) == pytest.approx(b, abs=1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_two_rotations_with_a_known_shift(seed):
    """Two held-out rotations share 20 anchor items; each has 60 items of its own and is calibrated
    separately (each fit puts its own models' abilities at mean 0). The second rotation's models are 0.5
    logits more able, so its item difficulties come out 0.5 too low; linking through the anchors must
    recover the shift within 0.1 logits by both methods, and the unique items land on the first scale."""
    rng = np.random.default_rng(seed)
    anchors, unique, persons, shift = 20, 60, 500, 0.5
    a, b = item_bank(rng, anchors + 2 * unique)
    form_x = np.r_[np.arange(anchors), anchors + np.arange(unique)]
    form_y = np.r_[np.arange(anchors), anchors + unique + np.arange(unique)]

    def standard(v: np.ndarray) -> np.ndarray:
        return (v - v.mean()) / v.std()

    fx = grm_fit(grm_simulate(standard(rng.normal(0, 1, persons)), a[form_x], b[form_x], rng))
    fy = grm_fit(grm_simulate(standard(rng.normal(0, 1, persons)) + shift, a[form_y], b[form_y], rng))
    mean_sigma = equate_mean_sigma(fx.b[:anchors], fy.b[:anchors])
    stocking_lord = equate_stocking_lord(fx.a[:anchors], fx.b[:anchors], fy.a[:anchors], fy.b[:anchors])
    for link in (mean_sigma, stocking_lord):
        assert abs(link.B - shift) < 0.1, link
        assert abs(link.A - 1.0) < 0.1, link
        on_x = link.difficulties(fy.b[anchors:]).mean(axis=1)
        assert np.abs(on_x - b[form_y[anchors:]].mean(axis=1)).mean() < 0.25
    # unequated, the second rotation's difficulties are off by about the shift
    assert abs(float((fy.b[anchors:] - b[form_y[anchors:]]).mean()) + shift) < 0.15


def test_equating_rejects_mismatched_anchors():
    with pytest.raises(ValueError, match="same anchor"):
        equate_mean_sigma(np.zeros((3, 3)), np.zeros((2, 3)))
    assert isinstance(equate_mean_sigma(np.array([[0.0, 1.0]]), np.array([[0.5, 1.0]])), Equating)
