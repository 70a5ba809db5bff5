"""Paired condition deltas (issue 26 item 2): repetitions collapsed to case means, the delta's case-bootstrap
interval checked against simulations with known effects (parameters here, not in the code under test)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluations.judge.leaderboard import (
    LeaderboardColumns,
    LeaderboardItem,
    condition_delta,
    leaderboard_compute_columns,
    repetitions_collapse,
)

DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
WEIGHTS = [1.0, 1.5, 2.0, 3.0]


def _item(model: str, case: int, composite: float | None, *, scored: bool = True) -> LeaderboardItem:
    return LeaderboardItem(model=model, family="f", case_id=case, dimension=DIMENSIONS[case % 6],
                           difficulty_weight=WEIGHTS[case % 4], tradition="none", scored=scored,
                           composite=composite, primary_composite=composite, self_preference=False)


def test_condition_delta_repetitions_collapse_to_the_mean_of_scored_repetitions():
    items = [_item("m", 1, 0.2), _item("m", 1, 0.4), _item("m", 1, None, scored=False), _item("m", 2, 0.9),
             _item("n", 1, 0.5), _item("m", 3, None, scored=False)]
    collapsed = repetitions_collapse(LeaderboardColumns.from_items(items))
    got = {(str(m), int(c)): (bool(s), None if math.isnan(v) else round(float(v), 9))
           for m, c, s, v in zip(collapsed.model, collapsed.case_id, collapsed.scored, collapsed.composite, strict=True)}
    assert got == {("m", 1): (True, 0.3), ("m", 2): (True, 0.9), ("n", 1): (True, 0.5), ("m", 3): (False, None)}
    # The model's score is the weighted mean of its case means: (1.5 × 0.3 + 2.0 × 0.9) / 3.5; case 3 is excluded.
    board = leaderboard_compute_columns(collapsed, n_resamples=50)
    row = next(r for r in board.models if r.model == "m")
    assert row.overall.score == pytest.approx((1.5 * 0.3 + 2.0 * 0.9) / 3.5)
    assert (row.items, row.scored, row.excluded) == (3, 2, 1)


def _simulate(rng: np.random.Generator, *, n_cases: int, k: int, effect: float) -> tuple[LeaderboardColumns, ...]:
    """Two conditions of one model: case difficulty μ_c shared, each repetition μ_c (+ effect) + noise."""
    mu = rng.uniform(0.25, 0.75, n_cases)
    out = []
    for shift in (effect, 0.0):
        items = [_item("m", c, float(mu[c] + shift + rng.normal(0, 0.15))) for c in range(n_cases) for _ in range(k)]
        out.append(repetitions_collapse(LeaderboardColumns.from_items(items)))
    return tuple(out)


@pytest.mark.parametrize("effect", [0.08, 0.0])
def test_condition_delta_interval_covers_the_known_effect_about_95_percent_of_the_time(effect):
    rng = np.random.default_rng(20261126)
    covered = excluded_zero = 0
    estimates = []
    sims = 200
    for sim in range(sims):
        a, b = _simulate(rng, n_cases=48, k=4, effect=effect)
        delta = condition_delta(a, b, model="m", names=("on", "off"), axis="reasoning", n_resamples=400, seed=sim)
        assert delta.n_cases == 48
        estimates.append(delta.delta)
        covered += delta.ci_low <= effect <= delta.ci_high
        excluded_zero += delta.distinguishable
    assert 0.90 <= covered / sims <= 0.99  # nominal 95 %; percentile intervals run a little narrow at n = 48
    assert np.mean(estimates) == pytest.approx(effect, abs=0.005)
    if effect:
        assert excluded_zero / sims > 0.9  # SE ≈ 0.011: an effect of 0.08 is nearly always distinguishable
    else:
        assert excluded_zero / sims < 0.1  # no effect: "not distinguishable from zero" about 95 % of the time


def test_condition_delta_uses_only_cases_both_conditions_scored():
    a = repetitions_collapse(LeaderboardColumns.from_items([_item("m", 1, 0.8), _item("m", 2, 0.6),
                                                             _item("m", 3, 0.9)]))
    b = repetitions_collapse(LeaderboardColumns.from_items([_item("m", 1, 0.5), _item("m", 2, 0.5),
                                                             _item("m", 4, 0.1)]))
    delta = condition_delta(a, b, model="m", names=("on", "off"), axis="reasoning", n_resamples=100)
    assert delta.n_cases == 2
    assert delta.delta == pytest.approx((1.5 * 0.3 + 2.0 * 0.1) / 3.5)  # cases 1 (w 1.5) and 2 (w 2.0)
    empty = condition_delta(a, b, model="other", names=("on", "off"), axis="reasoning", n_resamples=100)
    assert empty.n_cases == 0 and empty.delta is None and not empty.distinguishable


@pytest.mark.parametrize("effect", [0.2, -0.1, 0.0])
def test_condition_delta_fake_judge_effect_moves_the_mean_score_by_three_times_the_effect(effect):
    from evaluations.judge.fake_server import fake_score_with_effect

    scores = [fake_score_with_effect(f"text-{i}", "lexicalAccuracy", "judge", effect) for i in range(20_000)]
    # Uniform 0–3 has mean 1.5 and SD 1.118: the mean of 20,000 is within ±0.03 (≈ 4 SE) of 1.5 + 3 × effect.
    assert np.mean(scores) == pytest.approx(1.5 + 3 * effect, abs=0.03)
    assert set(scores) <= {0, 1, 2, 3}
