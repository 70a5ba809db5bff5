"""The calibration report's numbers equal stats/ called directly on the same ratings."""
from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from calibration.cycles.ratings import Rating, UnitInfo, majority
from calibration.reports.build import calibration_report_build as report_build
from calibration.reports.build import verdict
from calibration.reports.schema import Provenance, Report
from stats.alpha import krippendorff_alpha
from stats.bootstrap import named_seed
from stats.kappa import cohen_kappa
from stats.matrix import UndefinedCoefficientError
from stats.reliability import reliability_summary


def calibration_report_build(*args, **kwargs) -> dict:
    """The built report as its JSON (what a snapshot stores and these tests read)."""
    return report_build(*args, **kwargs).to_json()


def overall(report: dict) -> dict:
    return next(g for g in report["groups"] if g["kind"] == "overall")


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

    # Each group's random stream is named by the group (issue 12): the overall group's is "overall:all".
    direct = reliability_summary(data, level="ordinal", categories=[0, 1, 2, 3], rater_labels=["A", "B", "C"],
                                 n_resamples=200, strata=[u.dimension for u in order], seed=named_seed(11, "overall:all"))
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

    from calibration.reports.pdf import report_pdf
    from calibration.reports.render import (
        confusion_svg,
        forest_plot_svg,
        forest_rows,
        report_csv,
        report_json,
    )

    ratings, judge, units = synthetic()
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=100, seed=2,
                                      meta=Provenance(cycle="demo <1>", rubric_version="1.0"))
    typed = Report.from_json(report)
    group = overall(report)
    rows = list(_csv.DictReader(_io.StringIO(report_csv(typed))))
    alpha_row = next(r for r in rows if r["group_kind"] == "overall" and r["comparison"] == "experts"
                     and r["metric"] == "krippendorff_alpha")
    assert float(alpha_row["value"]) == pytest.approx(group["experts"]["krippendorff_alpha"], abs=1e-6)
    assert float(alpha_row["ci_low"]) == pytest.approx(group["experts"]["alpha_ci"][0], abs=1e-6)
    assert json.loads(report_json(typed)) == json.loads(json.dumps(report))
    svg = forest_plot_svg(forest_rows(typed), title="α <experts>")
    assert svg.startswith("<svg") and "&lt;experts&gt;" in svg and f"{group['experts']['krippendorff_alpha']:.3f}" in svg
    matrix = group["judge_vs_majority"]["confusion"]
    assert all(f">{count}<" in confusion_svg(matrix, title="m") for row in matrix for count in row)
    pdf = report_pdf(typed)
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000


def test_the_pdf_of_a_report_with_more_groups_than_a_page_holds_is_built():
    """The demo's cycle has ~40 groups: the forest plot is split per page instead of failing with a LayoutError."""
    from reportlab.platypus.doctemplate import LayoutError

    from calibration.reports.pdf import report_pdf
    from calibration.reports.render import forest_rows

    ratings, judge, units = synthetic()
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=0, seed=2, meta=Provenance())
    groups = report["groups"]
    report["groups"] = [{**group, "value": f"{group['value']} #{n}"} for n in range(100) for group in groups][:90]
    typed = Report.from_json(report)
    assert len(forest_rows(typed)) == 90
    try:
        pdf = report_pdf(typed)
    except LayoutError as exc:  # pragma: no cover - the failure this test guards against
        pytest.fail(f"the PDF does not lay out: {exc}")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") >= 3


def _assert_same_report(expected, actual, path="report"):
    """Same structure, same strings, ints and None; floats equal to 1e-12 (κ now comes from numpy, not sklearn)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), path
        for key in expected:
            _assert_same_report(expected[key], actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _assert_same_report(e, a, f"{path}[{index}]")
    elif isinstance(expected, float):
        assert isinstance(actual, float) and abs(actual - expected) <= 1e-12, (path, expected, actual)
    else:
        assert type(actual) is type(expected) and actual == expected, (path, expected, actual)


def test_report_equals_the_one_built_before_the_numpy_kappas():
    # tests/calibration/data/report_golden.json was written by commit b5bd157 (one scikit-learn call per
    # rater pair, krippendorff.alpha once per left-out rater) from this very synthetic cycle; keys sorted.
    # Rewritten for issue 12 (each group's stream named by the group, one unit bootstrap for every coefficient):
    # only the random parts changed — alpha_ci, P(alpha < min), the bootstrap's method text and seed, the count
    # of degenerate replicates and one interval-based verdict; every point estimate is the same to 1e-12.
    # Rewritten again when the report gained statistics v2: alpha_ci became the interval *reported* for α
    # (percentile or BCa by simulated coverage), which moved two verdicts; ICC warnings, intervals, rank
    # correlations, rater diagnostics and Bland–Altman were added. A diff against the previous file changed
    # nothing else (every point estimate, pairwise κ and leave-one-out α the same to 1e-12).
    # Rewritten for issue 25 (flags from the coverage estimated at each group's own design): only the interval
    # choices changed — intervals.*.{method, low, high, reliable, reason}, the new coverage and coverage_basis, and
    # through alpha_ci three α verdicts; a path-by-path diff against the previous file showed nothing else.
    from pathlib import Path

    from tests.calibration.synthetic import synthetic_cycle

    cycle = synthetic_cycle(n_raters=16, n_dimensions=3, n_traditions=4, items_per_cell=4, missing_share=0.15,
                            seed=5, cycle_name="golden")
    report = json.loads(json.dumps(cycle.report(n_resamples=200, seed=3).to_json(), sort_keys=True))
    golden = json.loads((Path(__file__).parent.parent / "data" / "report_golden.json").read_text(encoding="utf-8"))
    _assert_same_report(golden, report)
    assert sum(len(g["experts"]["pairwise_kappa"]) for g in golden["groups"]) > 300


def test_pairwise_kappas_equal_one_scikit_learn_call_per_pair():
    from calibration.reports.build import pairwise_kappas
    from tests.calibration.synthetic import synthetic_cycle

    cycle = synthetic_cycle(n_raters=18, n_dimensions=2, n_traditions=3, items_per_cell=5, seed=8)
    units = sorted(cycle.units, key=lambda u: (u.dimension, u.item, u.sub_dimension))
    raters = cycle.raters
    data = np.full((len(raters), len(units)), np.nan)
    column = {u.key: i for i, u in enumerate(units)}
    for r in cycle.ratings:
        data[raters.index(r.rater), column[r.unit.key]] = r.score
    data[0, :] = 2  # one expert who always gives the same score: κ undefined with any partner who does too
    data[3, :] = 2
    pairs = {tuple(p.raters): dataclasses.asdict(p) for p in pairwise_kappas(data, raters)}
    expected = 0
    for i, j in itertools.combinations(range(len(raters)), 2):
        both = ~np.isnan(data[i]) & ~np.isnan(data[j])
        if both.sum() < 2:
            assert (raters[i], raters[j]) not in pairs
            continue
        expected += 1
        pair = pairs[(raters[i], raters[j])]
        assert pair["n_units"] == int(both.sum())
        assert pair["exact_agreement"] == float(np.mean(data[i][both] == data[j][both]))
        try:
            kappa = cohen_kappa(data[i], data[j], [0, 1, 2, 3], "quadratic")
        except UndefinedCoefficientError:
            assert pair["quadratic_kappa"] is None
            continue
        assert pair["quadratic_kappa"] == pytest.approx(kappa, abs=1e-12)
    assert len(pairs) == expected and pairs[("R01", "R04")]["quadratic_kappa"] is None


def test_a_group_where_everyone_gives_the_same_score_has_undefined_alphas_instead_of_failing():
    units = [UnitInfo(item=f"it{i}", sub_dimension="lexicalAccuracy", dimension="textual", tradition="none",
                      difficulty="hard") for i in range(3)]
    ratings = [Rating(unit, rater, 2) for unit in units for rater in ("A", "B")]
    report = calibration_report_build(ratings, judge={u.key: 2 for u in units}, gold={}, units=units,
                                      n_resamples=50, seed=1)
    assert overall(report)["panel_alpha_with_judge"] is None and overall(report)["n_units"] == 3
