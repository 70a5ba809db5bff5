"""Inclusion probabilities of every draw strategy (issue 22 items 3 and 5), as pure functions: the recorded π of each
item is its probability of being drawn given the previous cycle and the draw's earlier steps — checked by Monte Carlo
over seeds on tiny pools (known truth) — and the active strategy's Neyman allocation and unequal-probability
sampling keep every response's π > 0, so the inverse-probability-weighted mean stays unbiased."""
from __future__ import annotations

import math
import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from calibration.cycles.active import (
    DEFAULT_RESIDUAL_SD,
    ActiveDesign,
    Labelled,
    ResidualTable,
    power_lambda,
    pps_probabilities,
    residual_sd_table,
    systematic_pps,
    uncertainty_weights,
)
from calibration.cycles.sampling import (
    BASIS_CARRIED,
    BASIS_DRAWN,
    BASIS_EDGE_CASE,
    SOURCE_CARRIED,
    SOURCE_RANDOM,
    STRATEGY_ACTIVE,
    DrawParams,
    PoolItem,
    PreviousItem,
    draw,
)
from tests.calibration.cycles.test_sampling import make_pool


def tiny_pool(sizes: dict[tuple[str, str], int], *, start: int = 1) -> list[PoolItem]:
    """One dimension; {(difficulty, model): n responses}; word counts all equal, so no length edge cases matter."""
    items, rid = [], start
    for (difficulty, model), n in sorted(sizes.items()):
        for _ in range(n):
            items.append(PoolItem(rid, "doctrinal", difficulty, "", model, 100 + rid))
            rid += 1
    return items


def test_inclusion_proportional_random_items_record_quota_over_eligible_pool() -> None:
    pool = make_pool()
    result = draw(pool, DrawParams(seed=11))
    facets = {p.response_id: p for p in pool}
    rows = {(r.dimension, r.difficulty, r.tradition, r.model): r for r in result.strata}
    random_items = [i for i in result.items if i.source == SOURCE_RANDOM]
    assert random_items
    for item in random_items:
        p = facets[item.response_id]
        row = rows[(p.dimension, p.difficulty, p.tradition, p.model)]
        assert item.inclusion_basis == BASIS_DRAWN
        assert item.stratum == (p.dimension, p.difficulty, p.tradition, p.model)
        assert item.inclusion_probability == pytest.approx(row.random / row.eligible)
        assert 0 < item.inclusion_probability <= 1
    edges = [i for i in result.items if i.inclusion_basis == BASIS_EDGE_CASE]
    assert edges and all(i.inclusion_probability is None and i.source.startswith("edge") for i in edges)
    # A stratum's eligible pool leaves out the edge cases taken from it.
    for row in result.strata:
        taken = sum(1 for i in edges if facets[i.response_id].dimension == row.dimension
                    and (facets[i.response_id].difficulty, facets[i.response_id].tradition,
                         facets[i.response_id].model) == (row.difficulty, row.tradition, row.model))
        assert row.eligible == row.pool - taken
    # Strata left without a random place are counted: their responses had probability 0.
    for summary in result.dimensions:
        zero = sum(r.eligible for r in result.strata if r.dimension == summary.dimension and r.random == 0)
        assert summary.uncovered == zero


def test_inclusion_anchors_are_certain_and_carried_items_record_the_retention_share() -> None:
    pool = make_pool()
    first = draw(pool, DrawParams(seed=1))
    doctrinal = {p.response_id for p in pool if p.dimension == "doctrinal"}
    first_doctrinal = sorted(i.response_id for i in first.items if i.response_id in doctrinal)
    anchors = set(first_doctrinal[:10])
    previous = [PreviousItem(i.response_id, i.response_id in anchors) for i in first.items]
    second = draw(pool, DrawParams(seed=2), previous=previous)
    carried = [i for i in second.items if i.source == SOURCE_CARRIED and i.response_id in doctrinal]
    kept_anchors = [i for i in carried if i.is_anchor]
    others = [i for i in carried if not i.is_anchor]
    assert {i.response_id for i in kept_anchors} == anchors
    assert all(i.inclusion_probability == 1.0 and i.inclusion_basis == BASIS_CARRIED for i in kept_anchors)
    m = len(first_doctrinal) - len(anchors)  # the previous non-anchors of the dimension
    assert len(others) == m - math.ceil(0.25 * m)
    assert all(i.inclusion_probability == pytest.approx(len(others) / m) for i in others)
    assert {i.stratum for i in kept_anchors} == {("doctrinal", "anchor")}
    assert {i.stratum for i in others} == {("doctrinal", "carried")}


def _frequencies(pool, params_for, previous=(), design=None, seeds=range(3000)):  # type: ignore[no-untyped-def]
    counts: Counter[int] = Counter()
    recorded: dict[int, set[float]] = defaultdict(set)
    ht: Counter[int] = Counter()
    for seed in seeds:
        result = draw(pool, params_for(seed), previous=previous, design=design)
        for item in result.items:
            counts[item.response_id] += 1
            if item.inclusion_probability is not None:
                recorded[item.response_id].add(round(item.inclusion_probability, 12))
                ht[item.response_id] += 1 / item.inclusion_probability  # type: ignore[assignment]
    return counts, recorded, ht


def test_inclusion_monte_carlo_frequency_matches_recorded_probability_proportional_with_refresh() -> None:
    # 9 never-drawn responses in strata of 6 and 3 (quotas exactly 2 and 1, no ties), 4 previous items (1 anchor):
    # the anchor is kept for certain, 2 of the 3 others are kept (π = 2/3), the new places take 1/3 of each stratum.
    pool = tiny_pool({("easy", "m1"): 8, ("hard", "m1"): 5})
    previous = [PreviousItem(1, True), PreviousItem(2, False), PreviousItem(9, False), PreviousItem(10, False)]
    seeds = range(3000)
    counts, recorded, _ = _frequencies(
        pool, lambda s: DrawParams(seed=s, min_per_dimension=6, edge_fraction=0), previous=previous, seeds=seeds)
    truth = {1: 1.0, 2: 2 / 3, 9: 2 / 3, 10: 2 / 3}
    truth.update({rid: 2 / 6 for rid in range(3, 9)})
    truth.update({rid: 1 / 3 for rid in range(11, 14)})
    for rid, pi in truth.items():
        assert recorded[rid] == {round(pi, 12)}, rid
        se = math.sqrt(pi * (1 - pi) / len(seeds)) or 1e-9
        assert abs(counts[rid] / len(seeds) - pi) < 4 * se + 1e-9, (rid, counts[rid] / len(seeds), pi)


def test_inclusion_monte_carlo_frequency_matches_recorded_probability_active_pps() -> None:
    # Active: residual SDs 0.3 (easy) vs 0.1 (hard) move places to the easy stratum; inside it the judge's
    # uncertainty gives unequal probabilities (one response certain, the low-uncertainty ones floored above 0).
    pool = tiny_pool({("easy", "m1"): 6, ("hard", "m1"): 6})
    residuals = ResidualTable(strata={("doctrinal", "easy", "", "m1"): (0.3, 5), ("doctrinal", "hard", "", "m1"): (0.1, 5)})
    uncertainty = {1: 0.9, 2: 0.3, 3: 0.2, 4: 0.0, 5: 0.1, 6: 0.2, 7: 0.1, 8: 0.1}
    design = ActiveDesign(residuals=residuals, uncertainty=uncertainty, uncertainty_source="test")
    seeds = range(2000)
    counts, recorded, _ = _frequencies(
        pool, lambda s: DrawParams(seed=s, min_per_dimension=5, edge_fraction=0, strategy=STRATEGY_ACTIVE),
        design=design, seeds=seeds)
    drawn_easy = sum(counts[r] for r in range(1, 7)) / len(seeds)
    assert drawn_easy == 4  # Neyman: 5 · (6·0.3)/(6·0.3 + 6·0.1) = 3.75 → 4, the hard stratum keeps its floor of 1
    assert sum(counts[r] for r in range(7, 13)) / len(seeds) == 1
    for rid in range(1, 13):
        assert len(recorded[rid]) == 1, rid  # the same π every time: fixed by the design, not by the seed
        pi = recorded[rid].pop()
        assert pi > 0
        se = math.sqrt(pi * (1 - pi) / len(seeds)) or 1e-9
        assert abs(counts[rid] / len(seeds) - pi) < 4 * se + 1e-9, (rid, counts[rid] / len(seeds), pi)
    assert max(counts[r] for r in range(1, 7)) == len(seeds)  # the most uncertain response is taken for certain


def test_inclusion_horvitz_thompson_identity_with_edge_cases_and_ties() -> None:
    # With edge cases and largest-remainder ties the recorded π depends on the seed (it is conditional on the edge
    # pick and the rounding), but E[1{i drawn at random}/π_i] = P(π_i > 0) for every response that is never an edge
    # candidate (the rounding can leave its stratum without a place: the summary counts those as `uncovered`). An edge candidate reaches its coverage only when its edge draws count with weight 1 (conditional on the edge
    # pick they are taken for certain); leaving edge cases out, as the leaderboard does, under-covers candidates.
    pool = tiny_pool({("easy", "m1"): 7, ("hard", "m1"): 7, ("hard", "m2"): 4})
    candidates = {1, 2, 17, 18}  # the 10 % length tails of 18 responses: 2 at each end
    seeds = range(2000)
    with_edges: Counter[int] = Counter()
    random_only: Counter[int] = Counter()
    covered: Counter[int] = Counter()  # seeds where the response could be drawn at all (π > 0, or an edge case)
    pis: set[float] = set()
    stratum_of = {p.response_id: (p.difficulty, p.model) for p in pool}
    for seed in seeds:
        result = draw(pool, DrawParams(seed=seed, min_per_dimension=6, edge_fraction=0.34, length_tail=0.1))
        edges = {i.response_id for i in result.items if i.inclusion_basis == BASIS_EDGE_CASE}
        assert edges <= candidates
        open_strata = {(r.difficulty, r.model) for r in result.strata if r.random > 0}
        covered.update(rid for rid in stratum_of if rid in edges or stratum_of[rid] in open_strata)
        for item in result.items:
            if item.inclusion_probability is None:
                with_edges[item.response_id] += 1  # type: ignore[assignment]
            else:
                pis.add(round(item.inclusion_probability, 9))
                random_only[item.response_id] += 1 / item.inclusion_probability  # type: ignore[assignment]
                with_edges[item.response_id] += 1 / item.inclusion_probability  # type: ignore[assignment]
    assert len(pis) > 2  # the probabilities really vary with the seed
    assert min(covered.values()) < len(seeds)  # rounding sometimes leaves a small stratum without a place
    for rid in range(1, 19):
        assert abs(with_edges[rid] / covered[rid] - 1) < 0.1, (rid, with_edges[rid] / covered[rid])
        if rid not in candidates:
            assert abs(random_only[rid] / covered[rid] - 1) < 0.1, (rid, random_only[rid] / covered[rid])
    assert all(random_only[rid] / covered[rid] < 0.8 for rid in candidates)


def test_inclusion_pps_probabilities_cap_at_one_and_sum_to_n() -> None:
    assert pps_probabilities([1, 1, 2], 2) == pytest.approx([0.5, 0.5, 1.0])
    # 10 is capped (3·10/14 > 1); the two places left are shared by the others in proportion: 2·(1, 1, 2)/4
    assert pps_probabilities([10, 1, 1, 2], 3) == pytest.approx([1.0, 0.5, 0.5, 1.0])
    assert pps_probabilities([1, 2], 5) == [1.0, 1.0]
    rng = random.Random(3)
    for _ in range(50):
        weights = [rng.uniform(0.01, 5) for _ in range(rng.randint(2, 12))]
        n = rng.randint(1, len(weights))
        pi = pps_probabilities(weights, n)
        assert sum(pi) == pytest.approx(n) and all(0 < p <= 1 for p in pi)
        assert len(systematic_pps(list(range(len(pi))), pi, rng)) == n
    with pytest.raises(ValueError, match="every weight must be > 0"):
        pps_probabilities([1, 0], 1)


def test_inclusion_uncertainty_weights_keep_a_floor_above_zero() -> None:
    weights = uncertainty_weights([1, 2, 3, 4], {1: 0.0, 2: 0.4, 3: 0.8})  # 4 has no measure: the mean
    mean = 0.4
    assert weights == pytest.approx([0.25 * mean, 0.4, 0.8, mean])
    assert uncertainty_weights([1, 2], {1: 0.0}) is None  # nothing to go on: uniform


def test_calibrated_residual_sd_table_falls_back_from_stratum_to_model_to_dimension_to_default() -> None:
    rows = [Labelled("doctrinal", "easy", "", "m1", y, yhat) for y, yhat in [(0.2, 0.3), (0.6, 0.5), (0.9, 0.6)]]
    rows.append(Labelled("doctrinal", "hard", "", "m1", 0.4, 0.4))  # one label in (hard, m1)
    rows += [Labelled("doctrinal", "hard", "", "m2", 0.1, 0.9)]  # m2: one label only
    table = residual_sd_table(rows)
    lam = table.lambdas["doctrinal"]
    assert 0 <= lam <= 1
    easy = [y - lam * yhat for y, yhat in [(0.2, 0.3), (0.6, 0.5), (0.9, 0.6)]]
    assert table.sd("doctrinal", ("easy", "", "m1")) == (pytest.approx(float(np.std(easy, ddof=1))), "stratum")
    assert table.sd("doctrinal", ("hard", "", "m1"))[1] == "model"
    assert table.sd("doctrinal", ("hard", "", "m2"))[1] == "dimension"
    assert table.sd("textual", ("easy", "", "m1")) == (DEFAULT_RESIDUAL_SD, "default")
    assert power_lambda([0.1, 0.5, 0.9], [0.5, 0.5, 0.5]) == 0.0  # a constant judge carries no information
    assert power_lambda([0.1, 0.5, 0.9], [0.1, 0.5, 0.9]) == pytest.approx(1.0)


def test_calibrated_neyman_allocation_draws_more_where_the_residual_sd_is_larger_and_keeps_the_floor() -> None:
    pool = tiny_pool({("easy", "m1"): 40, ("hard", "m1"): 40, ("medium", "m2"): 40})
    residuals = ResidualTable(strata={("doctrinal", "easy", "", "m1"): (0.4, 9), ("doctrinal", "hard", "", "m1"): (0.1, 9),
                                      ("doctrinal", "medium", "", "m2"): (0.0, 9)})
    params = DrawParams(seed=5, min_per_dimension=30, edge_fraction=0)
    proportional = draw(pool, params)
    active = draw(pool, DrawParams(seed=5, min_per_dimension=30, edge_fraction=0, strategy=STRATEGY_ACTIVE),
                  design=ActiveDesign(residuals=residuals))
    by = {(r.difficulty, r.model): r for r in active.strata}
    assert by[("easy", "m1")].random > by[("hard", "m1")].random > by[("medium", "m2")].random >= 1  # floor
    assert {r.random for r in proportional.strata} == {10}
    assert by[("easy", "m1")].sd == 0.4 and by[("easy", "m1")].sd_level == "stratum"
    assert all(i.inclusion_probability and i.inclusion_probability > 0 for i in active.items)
    assert active.fingerprint != proportional.fingerprint
    assert active.as_report()["strategy"] == "active"
    assert any("Active allocation" in note for note in active.notes)


def test_calibrated_active_fingerprint_includes_the_strategy_even_when_the_draw_is_the_same() -> None:
    pool = tiny_pool({("easy", "m1"): 5})
    proportional = draw(pool, DrawParams(seed=1, min_per_dimension=5))
    active = draw(pool, DrawParams(seed=1, min_per_dimension=5, strategy=STRATEGY_ACTIVE))
    assert [i.response_id for i in active.items] == [i.response_id for i in proportional.items]
    assert active.fingerprint != proportional.fingerprint
    with pytest.raises(ValueError, match="strategy"):
        DrawParams(seed=1, strategy="greedy")


def test_calibrated_ipw_mean_is_unbiased_under_the_active_design() -> None:
    # Known truth: a population of 60 responses over 3 strata with different residual spread; the active design
    # (Neyman between strata, PPS by a noisy judge uncertainty within) and the Horvitz–Thompson mean Σ y/π / N.
    rng = np.random.default_rng(7)
    pool = tiny_pool({("easy", "m1"): 24, ("hard", "m1"): 24, ("medium", "m2"): 12})
    uncertainty = {p.response_id: float(abs(rng.normal(0, 0.2))) for p in pool}
    # y larger where the design samples more (the easy stratum, an uncertain judge): the naive mean is biased.
    y = {p.response_id: min(1.0, 0.1 + 1.5 * uncertainty[p.response_id] + (0.3 if p.difficulty == "easy" else 0))
         for p in pool}
    residuals = ResidualTable(strata={("doctrinal", "easy", "", "m1"): (0.35, 9), ("doctrinal", "hard", "", "m1"): (0.1, 9),
                                      ("doctrinal", "medium", "", "m2"): (0.2, 9)})
    design = ActiveDesign(residuals=residuals, uncertainty=uncertainty, uncertainty_source="test")
    truth = float(np.mean(list(y.values())))
    estimates = []
    for seed in range(1000):
        result = draw(pool, DrawParams(seed=seed, min_per_dimension=12, edge_fraction=0, strategy=STRATEGY_ACTIVE),
                      design=design)
        estimates.append(sum(y[i.response_id] / i.inclusion_probability for i in result.items) / len(pool))
    mean, se = float(np.mean(estimates)), float(np.std(estimates, ddof=1) / math.sqrt(len(estimates)))
    assert abs(mean - truth) < 4 * se, (mean, truth, se)
    # …whereas the unweighted sample mean is biased toward the over-sampled responses.
    naive = []
    for seed in range(200):
        result = draw(pool, DrawParams(seed=seed, min_per_dimension=12, edge_fraction=0, strategy=STRATEGY_ACTIVE),
                      design=design)
        naive.append(float(np.mean([y[i.response_id] for i in result.items])))
    assert abs(float(np.mean(naive)) - truth) > 4 * float(np.std(naive, ddof=1) / math.sqrt(len(naive)))


def test_calibrated_preview_half_width_is_smaller_under_active_allocation_where_residuals_differ() -> None:
    from calibration.cycles.services import draw_half_widths
    from stats.ppi import expected_half_width

    pool = tiny_pool({("easy", "m1"): 40, ("hard", "m1"): 40})
    residuals = ResidualTable(strata={("doctrinal", "easy", "", "m1"): (0.4, 9), ("doctrinal", "hard", "", "m1"): (0.05, 9)})
    design = ActiveDesign(residuals=residuals)
    proportional = draw(pool, DrawParams(seed=2, min_per_dimension=20, edge_fraction=0))
    active = draw(pool, DrawParams(seed=2, min_per_dimension=20, edge_fraction=0, strategy=STRATEGY_ACTIVE), design=design)
    [row] = draw_half_widths(pool=pool, design=design, proportional=proportional, active=active)
    sizes = {("doctrinal", "easy", ""): 40, ("doctrinal", "hard", ""): 40}
    sds = {("doctrinal", "easy", ""): 0.4, ("doctrinal", "hard", ""): 0.05}
    assert row.proportional == pytest.approx(expected_half_width(sizes, sds, {k: 10 for k in sizes}))
    # Neyman: 20 · (40·0.4)/(40·0.4 + 40·0.05) = 17.8 → 18 and 2
    assert row.active == pytest.approx(expected_half_width(
        sizes, sds, {("doctrinal", "easy", ""): 18, ("doctrinal", "hard", ""): 2}))
    assert row.active < row.proportional and row.coverage_active == row.coverage_proportional == 1.0
    assert row.model == "m1" and row.strata == 2 and row.active_label.startswith("±")
    # A stratum without a label is left out of the width and counted against the coverage.
    pool = tiny_pool({("easy", "m1"): 40, ("hard", "m1"): 40, ("expert", "m1"): 1})
    few = draw(pool, DrawParams(seed=2, min_per_dimension=2, edge_fraction=0))
    [row] = draw_half_widths(pool=pool, design=design, proportional=few, active=few)
    assert row.coverage_proportional == pytest.approx(80 / 81)
