"""Prediction-powered inference (stats/ppi.py): a randomised differential test against ppi_py 0.2.3 (the reference
implementation of Angelopoulos et al.), hand-checked stratified and difference figures, planning that reproduces a
half-width, Neyman allocation's bounds, and a small coverage simulation with a known truth."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.ppi import (
    CONSTANT_JUDGE_NOTE,
    Difference,
    MeanEstimate,
    Stratum,
    classical_mean,
    expected_half_width,
    labels_needed,
    mean_difference,
    neyman_allocation,
    ppi_mean,
    ppi_mean_ci,
    ppi_mean_pointestimate,
    ppi_stratified_mean,
)

Z95 = 1.959963984540054


def _ppi_py() -> Any:
    return pytest.importorskip("ppi_py", reason="ppi-python (the reference implementation) is not installed")


def _scalar(value: Any) -> float:
    return float(np.asarray(value).reshape(-1)[0])


def _random_case(seed: int) -> dict:
    """A labelled sample (n from 5 up), a judge of random quality on a 0–3 or continuous scale, weights or not."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([5, 5, 8, 20, 60, 300]))
    big_n = int(rng.choice([3, 40, 500, 3000]))
    truth = rng.normal(size=n + big_n)
    quality = rng.uniform(-0.5, 1.0)  # negative: a judge worse than useless (λ clipped at 0)
    judge = quality * truth + rng.normal(scale=rng.uniform(0.1, 1.5), size=n + big_n) + rng.normal()
    if rng.random() < 0.4:  # the ordinal scale: 0–3
        truth = np.clip(np.round(truth + 1.5), 0, 3)
        judge = np.clip(np.round(judge + 1.5), 0, 3)
    case = {"Y": truth[:n], "Yhat": judge[:n], "Yhat_unlabeled": judge[n:], "w": None, "w_unlabeled": None}
    if rng.random() < 0.5:
        case["w"] = rng.uniform(0.1, 5.0, size=n)
    if rng.random() < 0.3:
        case["w_unlabeled"] = rng.uniform(0.1, 5.0, size=big_n)
    return case


LAMS = [None, None, 0.0, 0.5, 1.0, 1.3]


@pytest.mark.parametrize("block", range(4))
def test_ppi_matches_ppi_py_on_random_cases(block: int) -> None:
    ppi_py = _ppi_py()
    for seed in range(block * 60, block * 60 + 60):
        case = _random_case(seed)
        lam = LAMS[seed % len(LAMS)]
        alpha = [0.05, 0.1, 0.01][seed % 3]
        ref_point = _scalar(ppi_py.ppi_mean_pointestimate(case["Y"], case["Yhat"], case["Yhat_unlabeled"], lam=lam,
                                                          w=case["w"], w_unlabeled=case["w_unlabeled"]))
        ref_low, ref_high = (_scalar(v) for v in ppi_py.ppi_mean_ci(
            case["Y"], case["Yhat"], case["Yhat_unlabeled"], alpha=alpha, lam=lam, w=case["w"],
            w_unlabeled=case["w_unlabeled"]))
        ours = ppi_mean(**case, alpha=alpha, lam=lam)
        context = f"seed {seed}, n={ours.n}, N={ours.N}, lam={lam}, λ used={ours.lam}"
        assert ours.estimate == pytest.approx(ref_point, abs=1e-9), context
        assert ppi_mean_pointestimate(**case, lam=lam) == pytest.approx(ref_point, abs=1e-9), context
        assert ours.lower == pytest.approx(ref_low, abs=1e-9), context
        assert ours.upper == pytest.approx(ref_high, abs=1e-9), context
        assert ppi_mean_ci(**case, alpha=alpha, lam=lam) == pytest.approx((ref_low, ref_high), abs=1e-9), context
        assert 0.0 <= ours.lam <= 1.0 or lam is not None
        if lam is not None:
            assert ours.lam == lam


def test_ppi_tuned_lambda_equals_ppi_py_tuned_lambda_and_is_clipped() -> None:
    """ppi_py's point estimate with `lam=None` tunes (and clips) λ itself; its λ is read back from that public
    estimate (θ = mean(w·Y) + λ·(mean(w_u·Ŷ_u) − mean(w·Ŷ))), so no private helper of the package is needed."""
    ppi_py = _ppi_py()

    clipped_low = clipped_high = compared = 0
    for seed in range(300, 360):
        case = _random_case(seed)
        w = case["w"] if case["w"] is not None else np.ones(case["Y"].size)
        w = w / w.sum() * w.size
        wu = case["w_unlabeled"] if case["w_unlabeled"] is not None else np.ones(case["Yhat_unlabeled"].size)
        wu = wu / wu.sum() * wu.size
        ref_point = float(np.asarray(ppi_py.ppi_mean_pointestimate(**case)).ravel()[0])
        ours = ppi_mean(**case)
        assert ours.estimate == pytest.approx(ref_point, abs=1e-9), f"seed {seed}"
        gap = float((wu * case["Yhat_unlabeled"]).mean() - (w * case["Yhat"]).mean())
        if abs(gap) > 1e-3:  # λ is identified by the estimate only where the two prediction means differ
            ref_lam = (ref_point - float((w * case["Y"]).mean())) / gap
            assert ours.lam == pytest.approx(ref_lam, abs=1e-6), f"seed {seed}"
            compared += 1
        clipped_low += ours.lam == 0.0
        clipped_high += ours.lam == 1.0
    assert compared >= 50  # nearly every case pins λ down
    assert clipped_low > 0  # the random judges include useless ones, so the clip is exercised


def test_ppi_with_five_labels_matches_ppi_py() -> None:
    ppi_py = _ppi_py()
    rng = np.random.default_rng(5)
    for _ in range(30):
        y = rng.integers(0, 4, size=5).astype(float)
        yhat_all = np.clip(np.round(rng.normal(1.5, 1, size=65)), 0, 3)
        yhat_all[:5] = np.clip(y + rng.integers(-1, 2, size=5), 0, 3)
        ours = ppi_mean(y, yhat_all[:5], yhat_all[5:])
        low, high = ppi_py.ppi_mean_ci(y, yhat_all[:5], yhat_all[5:], alpha=0.05)
        if ours.note is None:
            assert (ours.lower, ours.upper) == pytest.approx((_scalar(low), _scalar(high)), abs=1e-9)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # ppi_py's own 0/0
def test_ppi_constant_judge_gives_lambda_zero_with_a_note_where_ppi_py_gives_nan() -> None:
    ppi_py = _ppi_py()
    y = np.array([1.0, 2.0, 2.0, 3.0])
    judge, judge_u = np.full(4, 2.0), np.full(6, 2.0)
    reference = _scalar(ppi_py.ppi_mean_pointestimate(y, judge, judge_u))
    assert math.isnan(reference)  # what ppi_py 0.2.3 does: λ = 0/0
    ours = ppi_mean(y, judge, judge_u)
    assert ours.lam == 0.0 and ours.note == CONSTANT_JUDGE_NOTE
    experts_only = classical_mean(y)
    assert (ours.estimate, ours.lower, ours.upper) == pytest.approx(
        (experts_only.estimate, experts_only.lower, experts_only.upper), abs=1e-12)
    assert not any(math.isnan(v) for v in (ours.estimate, ours.se, ours.lower, ours.upper))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # ppi_py's own 0/0
@pytest.mark.parametrize("value", [0.0, 1.0, 1.7, 2.5, 3.0])
def test_ppi_constant_judge_agrees_with_ppi_py_wherever_ppi_py_is_finite(value: float) -> None:
    ppi_py = _ppi_py()
    rng = np.random.default_rng(int(value * 10))
    y = rng.integers(0, 4, size=12).astype(float)
    judge, judge_u = np.full(12, value), np.full(200, value)
    for w in (None, rng.uniform(0.5, 2, size=12)):
        ours = ppi_mean(y, judge, judge_u, w=w)
        low, high = (_scalar(v) for v in ppi_py.ppi_mean_ci(y, judge, judge_u, alpha=0.05, w=w))
        if w is not None:  # weighted gradients vary, so λ is defined: no note, and ppi_py is finite
            assert ours.note is None
            assert np.isfinite([low, high]).all()
        if np.isfinite([low, high]).all():
            assert (ours.lower, ours.upper) == pytest.approx((low, high), abs=1e-9)


def test_ppi_classical_mean_matches_ppi_py_classical_mean_ci() -> None:
    ppi_py = _ppi_py()
    rng = np.random.default_rng(8)
    for _ in range(20):
        y = rng.normal(size=int(rng.integers(2, 50)))
        w = rng.uniform(0.1, 3, size=y.size) if rng.random() < 0.5 else None
        ours = classical_mean(y, w=w)
        low, high = ppi_py.classical_mean_ci(y, w=w, alpha=0.05)
        assert (ours.lower, ours.upper) == pytest.approx((_scalar(low), _scalar(high)), abs=1e-9)
        assert ours.lam == 0.0 and ours.N == 0
        # and λ = 0 in ppi_mean is the same estimator
        same = ppi_mean(y, y + 1, np.zeros(7), lam=0.0, w=w)
        assert (same.lower, same.upper) == pytest.approx((ours.lower, ours.upper), abs=1e-12)


def test_ppi_weights_are_scale_free_and_uniform_weights_change_nothing() -> None:
    case = _random_case(11)
    rng = np.random.default_rng(11)
    w = rng.uniform(0.2, 4, size=case["Y"].size)
    base = {k: case[k] for k in ("Y", "Yhat", "Yhat_unlabeled")}
    one, scaled = ppi_mean(**base, w=w), ppi_mean(**base, w=7.5 * w)
    assert (one.estimate, one.lower, one.upper, one.lam) == pytest.approx(
        (scaled.estimate, scaled.lower, scaled.upper, scaled.lam), abs=1e-12)
    unweighted = ppi_mean(**base)
    uniform = ppi_mean(**base, w=np.full(case["Y"].size, 0.3), w_unlabeled=np.full(case["Yhat_unlabeled"].size, 9.0))
    assert (uniform.estimate, uniform.lower, uniform.upper, uniform.lam) == pytest.approx(
        (unweighted.estimate, unweighted.lower, unweighted.upper, unweighted.lam), abs=1e-12)
    weighted = ppi_mean(**base, w=w, lam=0.0)
    assert weighted.estimate == pytest.approx(float(np.sum(w * case["Y"]) / np.sum(w)), abs=1e-12)  # Hájek mean


def test_ppi_small_sample_uses_t_with_n_minus_one_degrees_of_freedom() -> None:
    y, yhat, yhat_u = np.array([1.0, 2.0, 2.0, 3.0, 1.0]), np.array([1.2, 1.9, 2.4, 2.8, 0.7]), np.linspace(0, 3, 30)
    normal = ppi_mean(y, yhat, yhat_u, lam=0.6)
    small = ppi_mean(y, yhat, yhat_u, lam=0.6, small_sample=True)
    assert small.estimate == normal.estimate and small.se == normal.se
    assert small.upper - small.estimate == pytest.approx(scipy_stats.t.ppf(0.975, 4) * normal.se, abs=1e-12)
    assert normal.upper - normal.estimate == pytest.approx(Z95 * normal.se, abs=1e-12)


def test_ppi_bad_input_is_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match="paired"):
        ppi_mean([1.0, 2.0, 3.0], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([1.0], [1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="missing or infinite"):
        ppi_mean([1.0, float("nan")], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="Yhat_unlabeled needs at least 1"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [])
    with pytest.raises(ValueError, match="non-negative"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [1.0], w=[1.0, -1.0])
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [1.0], alpha=1.5)
    with pytest.raises(ValueError, match="lam"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [1.0], lam=float("nan"))


# --- strata -----------------------------------------------------------------------------------------------------


def _stratum(key: str, y: list[float], size: float, n_unlabeled: int = 10) -> Stratum:
    y_arr = np.array(y, dtype=float)
    return Stratum(key=key, Y=y_arr, Yhat=y_arr + 0.5, Yhat_unlabeled=np.full(n_unlabeled, 1.0), size=size)


def test_ppi_stratified_by_hand_with_a_skipped_stratum() -> None:
    # λ = 0: θ_A = 2, V_A = var₀([1,2,3])/3 = (2/3)/3 = 2/9; θ_B = 1, V_B = var₀([0,2])/2 = 1/2.
    # Sizes 30, 10, 40 → W = .375, .125, .5; C has one label and is skipped, covered = .5.
    # θ = (.375·2 + .125·1)/.5 = 1.75; V = (.375²·2/9 + .125²·.5)/.5² = 0.15625.
    result = ppi_stratified_mean([_stratum("A", [1, 2, 3], 30), _stratum("B", [0, 2], 10), _stratum("C", [3], 40)],
                                 lam=0.0)
    assert result.estimate == pytest.approx(1.75, abs=1e-12)
    assert result.se == pytest.approx(math.sqrt(0.15625), abs=1e-12)
    assert (result.lower, result.upper) == pytest.approx((1.75 - Z95 * 0.3952847075210474,
                                                          1.75 + Z95 * 0.3952847075210474), abs=1e-9)
    assert result.covered_weight == pytest.approx(0.5)
    by_key = {s.key: s for s in result.strata}
    assert by_key["C"].skipped == "1 expert label: at least 2 are needed for an interval"
    assert by_key["C"].estimate is None and by_key["C"].weight == pytest.approx(0.5)
    assert by_key["A"].skipped is None and by_key["A"].estimate == pytest.approx(2.0)
    assert by_key["B"].se == pytest.approx(math.sqrt(0.5))
    # Without C, the same figures with covered_weight 1.
    whole = ppi_stratified_mean([_stratum("A", [1, 2, 3], 30), _stratum("B", [0, 2], 10)], lam=0.0)
    assert (whole.estimate, whole.se, whole.covered_weight) == pytest.approx((1.75, math.sqrt(0.15625), 1.0))


def test_ppi_stratified_tunes_lambda_per_stratum_and_equals_single_stratum_ppi() -> None:
    strata = []
    for h, seed in enumerate((21, 22, 23)):
        case = _random_case(seed)
        strata.append(Stratum(key=f"s{h}", Y=case["Y"], Yhat=case["Yhat"], Yhat_unlabeled=case["Yhat_unlabeled"],
                              size=float(10 * (h + 1)), w=case["w"], w_unlabeled=case["w_unlabeled"]))
    result = ppi_stratified_mean(strata)
    singles = [ppi_mean(s.Y, s.Yhat, s.Yhat_unlabeled, w=s.w, w_unlabeled=s.w_unlabeled) for s in strata]
    weights = np.array([10, 20, 30]) / 60
    assert [r.lam for r in result.strata] == pytest.approx([s.lam for s in singles])
    assert result.estimate == pytest.approx(sum(wh * s.estimate for wh, s in zip(weights, singles, strict=True)))
    assert result.se == pytest.approx(math.sqrt(sum(wh**2 * s.se**2 for wh, s in zip(weights, singles, strict=True))))
    # one stratum: the stratified estimate is that stratum's own, t quantile included
    one = ppi_stratified_mean(strata[:1], small_sample=True)
    own = ppi_mean(strata[0].Y, strata[0].Yhat, strata[0].Yhat_unlabeled, w=strata[0].w,
                   w_unlabeled=strata[0].w_unlabeled, small_sample=True)
    assert one.df == pytest.approx(own.n - 1)
    assert (one.lower, one.upper) == pytest.approx((own.lower, own.upper), abs=1e-12)


def test_ppi_stratified_reports_strata_without_labels_or_judged_items_and_none_when_nothing_is_usable() -> None:
    empty_judged = Stratum(key="no-judged", Y=np.array([1.0, 2.0]), Yhat=np.array([1.0, 2.0]),
                           Yhat_unlabeled=np.array([]), size=5)
    result = ppi_stratified_mean([_stratum("none", [], 10), _stratum("one", [2.0], 10), empty_judged])
    assert result.estimate is None and result.se is None and result.lower is None and result.upper is None
    assert result.covered_weight == 0.0
    assert [s.skipped for s in result.strata] == [
        "0 expert labels: at least 2 are needed for an interval",
        "1 expert label: at least 2 are needed for an interval",
        "no judged items",
    ]
    with pytest.raises(ValueError, match="unique"):
        ppi_stratified_mean([_stratum("a", [1, 2], 1), _stratum("a", [1, 2], 1)])
    with pytest.raises(ValueError, match="at least one stratum"):
        ppi_stratified_mean([])


def test_ppi_stratified_constant_judge_in_one_stratum_is_noted() -> None:
    constant = Stratum(key="flat", Y=np.array([0.0, 1.0, 3.0]), Yhat=np.full(3, 2.0),
                       Yhat_unlabeled=np.full(20, 2.0), size=20)
    result = ppi_stratified_mean([constant, _stratum("ok", [1.0, 2.0, 2.5], 20)])
    flat = result.strata[0]
    assert flat.lam == 0.0 and flat.note == CONSTANT_JUDGE_NOTE
    assert result.estimate is not None and math.isfinite(result.estimate)


# --- differences ------------------------------------------------------------------------------------------------


def test_ppi_difference_of_two_models_by_hand() -> None:
    a = MeanEstimate(estimate=2.0, se=0.3, lower=0, upper=0, lam=0.5, n=10, N=100)
    b = MeanEstimate(estimate=1.5, se=0.4, lower=0, upper=0, lam=0.5, n=10, N=100)
    diff = mean_difference(a, b)
    assert isinstance(diff, Difference)
    assert diff.estimate == pytest.approx(0.5) and diff.se == pytest.approx(0.5)
    assert (diff.lower, diff.upper) == pytest.approx((0.5 - Z95 * 0.5, 0.5 + Z95 * 0.5))
    stratified = ppi_stratified_mean([_stratum("A", [1, 2, 3], 30), _stratum("B", [0, 2], 10)], lam=0.0)
    mixed = mean_difference(stratified, b, alpha=0.1)
    assert mixed.estimate == pytest.approx(0.25)
    assert mixed.se == pytest.approx(math.sqrt(0.15625 + 0.16))
    assert mixed.upper - mixed.estimate == pytest.approx(scipy_stats.norm.ppf(0.95) * mixed.se)
    nothing = ppi_stratified_mean([_stratum("one", [2.0], 10)])
    with pytest.raises(ValueError, match="b has no estimate"):
        mean_difference(a, nothing)


# --- planning ---------------------------------------------------------------------------------------------------


def test_ppi_labels_needed_reproduces_the_half_width_of_ppi_mean() -> None:
    rng = np.random.default_rng(31)
    truth = rng.normal(size=2040)
    judge = 0.8 * truth + rng.normal(scale=0.5, size=2040)
    n = 40
    est = ppi_mean(truth[:n], judge[:n], judge[n:], lam=0.7)
    residual_var = float(np.var(truth[:n] - 0.7 * judge[:n]))  # ddof 0, as ppi_py
    judge_var = float(np.var(judge[n:]))
    half = est.upper - est.estimate
    needed = labels_needed(residual_var=residual_var, judge_var=judge_var, N=2000, lam=0.7,
                           target_half_width=half * (1 + 1e-12))
    assert needed == n
    # a tighter target needs more; check the boundary on the formula
    target = half / 2
    more = labels_needed(residual_var=residual_var, judge_var=judge_var, N=2000, lam=0.7, target_half_width=target)
    assert more is not None and more > 4 * n * 0.9

    def width(k: int) -> float:
        return Z95 * math.sqrt(residual_var / k + 0.49 * judge_var / 2000)

    assert width(more) <= target < width(more - 1)


def test_ppi_labels_needed_unreachable_and_degenerate_cases() -> None:
    # the judged-items term alone is 1.96·√(1·1/100) = 0.196 > 0.1: no number of experts helps
    assert labels_needed(residual_var=0.5, judge_var=1.0, N=100, lam=1.0, target_half_width=0.1) is None
    assert labels_needed(residual_var=0.0, judge_var=0.0, N=100, lam=0.0, target_half_width=0.1) == 2
    assert labels_needed(residual_var=1.0, judge_var=0.0, N=100, lam=0.0, target_half_width=Z95) == 2
    # classical: n = ⌈(z/h)² σ²⌉ = ⌈(1.96/0.1)²⌉ = 385
    assert labels_needed(residual_var=1.0, judge_var=5.0, N=10, lam=0.0, target_half_width=0.1) == 385
    with pytest.raises(ValueError, match="positive"):
        labels_needed(residual_var=1.0, judge_var=1.0, N=10, lam=0.5, target_half_width=0)


def test_ppi_neyman_allocation_sums_floors_and_caps_on_random_designs() -> None:
    rng = np.random.default_rng(41)
    for trial in range(300):
        strata = int(rng.integers(1, 12))
        sizes = {f"s{h}": int(rng.choice([0, 1, 2, 5, 30, 200, 1000])) for h in range(strata)}
        sds = {k: float(rng.choice([0.0, rng.uniform(0, 2)])) for k in sizes}
        floor = int(rng.integers(0, 4))
        need = sum(min(floor, v) for v in sizes.values())
        room = sum(sizes.values())
        if room < need or room == 0:
            continue
        total = int(rng.integers(need, room + 1))
        alloc = neyman_allocation(sizes, sds, total, floor=floor)
        assert list(alloc) == list(sizes)
        assert sum(alloc.values()) == total, trial
        for k in sizes:
            assert min(floor, sizes[k]) <= alloc[k] <= sizes[k], (trial, k)
        # Neyman is never worse than proportional (up to one label of rounding) on its own objective
        proportional = neyman_allocation(sizes, dict.fromkeys(sizes, 0.0), total, floor=floor)
        if all(alloc[k] > 0 for k in sizes if sizes[k] and sds[k]) and all(
                proportional[k] > 0 for k in sizes if sizes[k] and sds[k]):
            active = expected_half_width(sizes, sds, alloc)
            passive = expected_half_width(sizes, sds, proportional)
            assert active <= passive * 1.05 + 1e-12, trial


def test_ppi_neyman_allocation_is_proportional_to_size_times_sd_and_falls_back_when_sds_are_zero() -> None:
    sizes = {"easy": 400, "hard": 400, "expert": 200}
    alloc = neyman_allocation(sizes, {"easy": 0.2, "hard": 0.6, "expert": 1.0}, 100)
    # N·sd = 80, 240, 200 → 100 · (80, 240, 200)/520 = 15.4, 46.2, 38.5 → 15, 46, 39 by largest remainder
    assert alloc == {"easy": 15, "hard": 46, "expert": 39}
    assert neyman_allocation(sizes, dict.fromkeys(sizes, 0.0), 100) == {"easy": 40, "hard": 40, "expert": 20}
    # caps bind: the expert stratum has only 10 items, the rest goes where the variance is
    capped = neyman_allocation({"a": 10, "b": 1000, "c": 1000}, {"a": 50.0, "b": 1.0, "c": 1.0}, 100)
    assert capped == {"a": 10, "b": 45, "c": 45}
    # a stratum with no residual variance keeps its floor; an empty stratum gets nothing
    floored = neyman_allocation({"a": 100, "b": 100, "c": 0}, {"a": 1.0, "b": 0.0, "c": 1.0}, 30, floor=2)
    assert floored == {"a": 28, "b": 2, "c": 0}
    with pytest.raises(ValueError, match="exceeds"):
        neyman_allocation({"a": 3}, {"a": 1.0}, 4)
    with pytest.raises(ValueError, match="floor"):
        neyman_allocation({"a": 3, "b": 3}, {"a": 1.0, "b": 1.0}, 1, floor=1)
    with pytest.raises(ValueError, match="same strata"):
        neyman_allocation({"a": 3}, {"b": 1.0}, 1)


def test_ppi_expected_half_width_by_hand() -> None:
    sizes = {"a": 300, "b": 100}
    sds = {"a": 1.0, "b": 2.0}
    # W = .75, .25; V = .5625·1/30 + .0625·4/10 = 0.04375
    assert expected_half_width(sizes, sds, {"a": 30, "b": 10}) == pytest.approx(Z95 * math.sqrt(0.04375))
    assert expected_half_width(sizes, sds, {"a": 30, "b": 0}) == math.inf
    assert expected_half_width(sizes, {"a": 1.0, "b": 0.0}, {"a": 30}) == pytest.approx(Z95 * 0.75 / math.sqrt(30))


# --- coverage with a known truth --------------------------------------------------------------------------------


def test_ppi_intervals_cover_a_known_mean_and_beat_experts_only() -> None:
    """1,000 data sets: expert truth on 0–3, a biased judge (+0.4, correlation ≈ 0.8), 60 labels, 1,500 judged."""
    rng = np.random.default_rng(2024)
    latent = rng.normal(size=(1000, 1560))
    truth = np.clip(np.round(1.5 + latent), 0, 3)
    judge = np.clip(np.round(1.9 + 0.85 * latent + rng.normal(scale=0.5, size=latent.shape)), 0, 3)
    true_mean = 1.5  # symmetric rounding and clipping about 1.5
    covered = naive_covered = 0
    widths, expert_widths = [], []
    for i in range(1000):
        est = ppi_mean(truth[i, :60], judge[i, :60], judge[i, 60:])
        covered += est.lower <= true_mean <= est.upper
        judge_only = classical_mean(judge[i, 60:])
        naive_covered += judge_only.lower <= true_mean <= judge_only.upper
        widths.append(est.upper - est.lower)
        experts = classical_mean(truth[i, :60])
        expert_widths.append(experts.upper - experts.lower)
    assert 0.93 <= covered / 1000 <= 0.97
    assert naive_covered / 1000 < 0.05  # the judge's bias makes its own interval miss
    assert np.mean(widths) / np.mean(expert_widths) < 0.8


def test_ppi_stratified_inverse_probability_weights_cover_a_known_mean() -> None:
    """Active sampling inside strata (Zrnic & Candès 2024): items drawn with known probabilities growing with the
    judge's uncertainty, weighted by 1 / probability; 3 strata of unequal size and judge quality. 600 data sets."""
    rng = np.random.default_rng(77)
    sizes, labels, noise = (600, 300, 100), (30, 20, 12), (0.3, 0.8, 1.5)
    populations = []
    for size, sd in zip(sizes, noise, strict=True):
        truth = rng.normal(1.5, 0.8, size)
        uncertainty = rng.uniform(0.2, 1.0, size) * sd  # known to us, as a judge's run-to-run spread would be
        populations.append((truth, uncertainty))
    true_mean = sum(size * t.mean() for size, (t, _) in zip(sizes, populations, strict=True)) / sum(sizes)
    covered = 0
    for _ in range(600):
        strata = []
        for h, ((truth, uncertainty), n) in enumerate(zip(populations, labels, strict=True)):
            judge = truth + 0.3 + rng.normal(size=truth.size) * uncertainty
            probability = uncertainty / uncertainty.sum()
            drawn = rng.choice(truth.size, size=n, replace=True, p=probability)
            expert = truth[drawn] + rng.normal(0, 0.3, n)
            strata.append(Stratum(key=f"s{h}", Y=expert, Yhat=judge[drawn], Yhat_unlabeled=judge,
                                  size=float(truth.size), w=1.0 / probability[drawn]))
        result = ppi_stratified_mean(strata)
        assert result.lower is not None and result.upper is not None
        covered += result.lower <= true_mean <= result.upper
    assert 0.93 <= covered / 600 <= 0.99
