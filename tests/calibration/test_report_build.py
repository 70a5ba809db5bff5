"""The calibration report's numbers equal stats/ called directly on the same ratings."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.reports.build import (
    Rating,
    UnitInfo,
    calibration_report_build,
    majority,
    overall,
    verdict,
)
from stats.alpha import krippendorff_alpha
from stats.kappa import cohen_kappa
from stats.reliability import reliability_summary

SUBS = {"textual": ["lexicalAccuracy", "translationFidelity"], "doctrinal": ["doctrinalAccuracy", "traditionFidelity"]}


def synthetic(seed: int = 3, n_items: int = 30):
    """Three experts and a judge scoring items from a latent quality, with some missing ratings."""
    rng = np.random.default_rng(seed)
    ratings, judge, units = [], {}, []
    for i in range(n_items):
        dimension = "textual" if i % 2 else "doctrinal"
        tradition = ["catholic", "reformed", "none"][i % 3]
        difficulty = ["hard", "expert"][i % 2 == 0 and i % 4 == 0]
        quality = rng.uniform(0, 3)
        for sub in SUBS[dimension]:
            unit = UnitInfo(item=f"it{i:02d}", sub_dimension=sub, dimension=dimension, tradition=tradition,
                            difficulty=difficulty)
            units.append(unit)
            for rater in ("A", "B", "C"):
                if rater == "C" and i % 5 == 0:
                    continue  # missing rating
                ratings.append(Rating(unit, rater, int(np.clip(round(quality + rng.normal(0, 0.6)), 0, 3))))
            judge[unit.key] = int(np.clip(round(quality + 0.4 + rng.normal(0, 0.7)), 0, 3))
    return ratings, judge, units


def direct_matrix(ratings, units, raters=("A", "B", "C")):
    keys = [u.key for u in units]
    data = np.full((len(raters), len(keys)), np.nan)
    for r in ratings:
        data[raters.index(r.rater), keys.index(r.unit.key)] = r.score
    return keys, data


def test_majority_takes_the_lower_middle_score_on_a_tie():
    assert majority([0, 3, 3]) == 3
    assert majority([1, 2]) == 1
    assert majority([0, 1, 2, 3]) == 1
    assert majority([2]) == 2


def test_verdict_reads_a_wide_interval_as_uncertain():
    assert verdict(0.80, [0.70, 0.88], 0.67) == "pass"
    assert verdict(0.70, [0.55, 0.82], 0.67) == "uncertain"
    assert verdict(0.50, [0.40, 0.60], 0.67) == "fail"
    assert verdict(0.62, None, 0.61) == "pass"
    assert verdict(None, None, 0.61) == "undefined"


def test_overall_numbers_match_stats_called_directly():
    ratings, judge, units = synthetic()
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=200, seed=11)
    group = overall(report)
    order = sorted(units, key=lambda u: (u.dimension, u.item, u.sub_dimension))
    keys, data = direct_matrix(ratings, order)

    direct = reliability_summary(data, level="ordinal", categories=[0, 1, 2, 3], rater_labels=["A", "B", "C"],
                                 n_resamples=200, strata=[u.dimension for u in order], seed=11)
    experts = group["experts"]
    assert experts["krippendorff_alpha"] == pytest.approx(direct["krippendorff_alpha"])
    assert experts["alpha_ci"] == pytest.approx(direct["alpha_ci"])
    assert experts["percent_agreement"] == pytest.approx(direct["percent_agreement"])
    assert experts["fleiss_kappa"] == pytest.approx(direct["fleiss_kappa"])
    ab = next(p for p in experts["pairwise_kappa"] if p["raters"] == ["A", "B"])
    assert ab["quadratic_kappa"] == pytest.approx(cohen_kappa(data[0], data[1], [0, 1, 2, 3], "quadratic"))

    # Judge against the majority (lower median) computed by hand here.
    maj = np.array([sorted(int(v) for v in col[~np.isnan(col)])[(int((~np.isnan(col)).sum()) - 1) // 2]
                    for col in data.T], dtype=float)
    jrow = np.array([judge[k] for k in keys], dtype=float)
    vs = group["judge_vs_majority"]
    assert vs["n_units"] == len(keys)
    assert vs["alpha"] == pytest.approx(krippendorff_alpha(np.vstack([jrow, maj]), "ordinal", [0, 1, 2, 3]).alpha)
    assert vs["quadratic_kappa"] == pytest.approx(cohen_kappa(jrow, maj, [0, 1, 2, 3], "quadratic"))
    assert vs["exact_agreement"] == pytest.approx(np.mean(jrow == maj))
    assert vs["mean_signed_difference"] == pytest.approx(np.mean(jrow - maj))
    assert vs["mean_signed_difference"] > 0  # the simulated judge is lenient by design
    assert np.array(vs["confusion"]).sum() == len(keys)
    assert np.trace(np.array(vs["confusion"])) == int(np.sum(jrow == maj))

    with_judge = krippendorff_alpha(np.vstack([data, jrow]), "ordinal", [0, 1, 2, 3]).alpha
    assert group["panel_alpha_with_judge"] == pytest.approx(with_judge)
    assert group["panel_alpha_without_judge"] == pytest.approx(direct["krippendorff_alpha"])


def test_every_facet_gets_a_group_and_subgroups_use_only_their_units():
    ratings, judge, units = synthetic()
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=0, seed=1)
    kinds = {(g["kind"], g["value"]) for g in report["groups"]}
    assert ("overall", "all") in kinds
    assert {v for k, v in kinds if k == "dimension"} == {"doctrinal", "textual"}
    assert {v for k, v in kinds if k == "tradition"} == {"catholic", "reformed", "none"}
    assert {v for k, v in kinds if k == "sub_dimension"} == set(SUBS["textual"] + SUBS["doctrinal"])
    textual = next(g for g in report["groups"] if g["kind"] == "dimension" and g["value"] == "textual")
    subset = [u for u in units if u.dimension == "textual"]
    order = sorted(subset, key=lambda u: (u.dimension, u.item, u.sub_dimension))
    _, data = direct_matrix([r for r in ratings if r.unit.dimension == "textual"], order)
    assert textual["experts"]["krippendorff_alpha"] == pytest.approx(
        krippendorff_alpha(data, "ordinal", [0, 1, 2, 3]).alpha)
    assert not textual["stratified_by_dimension"] and overall(report)["stratified_by_dimension"]


def test_gold_labels_are_compared_separately_and_missing_gold_is_reported_not_invented():
    ratings, judge, units = synthetic()
    gold = {u.key: judge[u.key] for u in units[:10]}  # gold agrees with the judge on 10 units
    report = calibration_report_build(ratings, judge=judge, gold=gold, units=units, n_resamples=0, seed=1)
    vs_gold = overall(report)["judge_vs_gold"]
    assert vs_gold["n_units"] == 10 and vs_gold["exact_agreement"] == 1.0 and vs_gold["mean_signed_difference"] == 0
    no_gold = calibration_report_build(ratings, judge=judge, units=units, n_resamples=0, seed=1)
    assert overall(no_gold)["judge_vs_gold"]["alpha"] is None
    assert overall(no_gold)["judge_vs_gold"]["warnings"]


def test_report_is_reproducible_with_its_seed():
    ratings, judge, units = synthetic()
    a = calibration_report_build(ratings, judge=judge, units=units, n_resamples=100, seed=5)
    b = calibration_report_build(ratings, judge=judge, units=units, n_resamples=100, seed=5)
    assert a == b
    assert a["meta"]["seed"] == 5
    json.dumps(a, allow_nan=False)  # no NaN anywhere


def test_renderings_carry_the_same_numbers():
    import csv as _csv
    import io as _io

    from calibration.reports.render import (
        confusion_svg,
        forest_plot_svg,
        forest_rows,
        report_csv,
        report_json,
        report_pdf,
    )

    ratings, judge, units = synthetic()
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=100, seed=2,
                                      meta={"cycle": "demo <1>", "rubric_version": "1.0"})
    group = overall(report)
    rows = list(_csv.DictReader(_io.StringIO(report_csv(report))))
    alpha_row = next(r for r in rows if r["group_kind"] == "overall" and r["comparison"] == "experts"
                     and r["metric"] == "krippendorff_alpha")
    assert float(alpha_row["value"]) == pytest.approx(group["experts"]["krippendorff_alpha"], abs=1e-6)
    assert float(alpha_row["ci_low"]) == pytest.approx(group["experts"]["alpha_ci"][0], abs=1e-6)
    assert json.loads(report_json(report)) == json.loads(json.dumps(report))
    svg = forest_plot_svg(forest_rows(report), title="α <experts>")
    assert svg.startswith("<svg") and "&lt;experts&gt;" in svg and f"{group['experts']['krippendorff_alpha']:.3f}" in svg
    matrix = group["judge_vs_majority"]["confusion"]
    assert all(f">{count}<" in confusion_svg(matrix, title="m") for row in matrix for count in row)
    pdf = report_pdf(report)
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000


def test_a_group_where_everyone_gives_the_same_score_has_undefined_alphas_instead_of_failing():
    units = [UnitInfo(item=f"it{i}", sub_dimension="lexicalAccuracy", dimension="textual", tradition="none",
                      difficulty="hard") for i in range(3)]
    ratings = [Rating(unit, rater, 2) for unit in units for rater in ("A", "B")]
    report = calibration_report_build(ratings, judge={u.key: 2 for u in units}, gold={}, units=units,
                                      n_resamples=50, seed=1)
    assert overall(report)["panel_alpha_with_judge"] is None and overall(report)["n_units"] == 3
