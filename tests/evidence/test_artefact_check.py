"""The artefact checker's generic rules (evidence/kit/checker.py) on hand-made readings with one seeded defect each,
and the one number formatter (evidence/kit/numbers.py) it reads back. No database."""
from __future__ import annotations

import pytest

from evidence.kit.checker import COEFFICIENT, SHARE, Figure, Reading, artefact_check
from evidence.kit.numbers import (
    csv_number,
    digits_of,
    estimate,
    interval,
    interval_parse,
    method_label,
    methods_named,
    methods_sentence,
    n_text,
    number_parse,
)

KEY = "overall:all/experts/krippendorff_alpha"


def _json(**changes: object) -> Figure:
    base = {"key": KEY, "value": 0.771822, "low": 0.726, "high": 0.809, "n": 320, "method": "BCa",
            "bounds": COEFFICIENT, "min_n": 2}
    return Figure(**{**base, **changes})  # type: ignore[arg-type]


def _shown(digits: int, **changes: object) -> Figure:
    base = {"key": KEY, "value": round(0.771822, digits), "low": round(0.726, digits), "high": round(0.809, digits),
            "n": 320, "method": "BCa", "digits": digits, "bounds": COEFFICIENT}
    return Figure(**{**base, **changes})  # type: ignore[arg-type]


def _clean() -> list[Reading]:
    return [Reading("report.json", [_json()]), Reading("tables.csv", [_shown(6)]),
            Reading("report.pdf", [_shown(3)], methods_stated=frozenset({"BCa"}), text="Sub-dimension: Allusion"),
            Reading("README.txt", [_shown(3)], methods_stated=frozenset({"BCa"}))]


def test_artefact_check_passes_figures_that_agree_to_the_precision_shown() -> None:
    assert artefact_check(_clean(), labels={"allusionDetection": "Allusion Detection"}) == []


def test_artefact_check_names_a_moved_number_and_its_file() -> None:
    readings = _clean()
    readings[2] = Reading("report.pdf", [_shown(3, value=0.774)], methods_stated=frozenset({"BCa"}))
    problems = artefact_check(readings)
    assert [(p.file, p.figure) for p in problems] == [("report.pdf", KEY)]
    assert "value 0.774" in problems[0].message


def test_artefact_check_allows_rounding_but_not_one_unit_more_in_the_last_digit() -> None:
    assert artefact_check([Reading("report.json", [_json()]), Reading("a.csv", [_shown(3, value=0.772)])]) == []
    assert artefact_check([Reading("report.json", [_json()]), Reading("a.csv", [_shown(3, value=0.773)])])


def test_artefact_check_names_a_moved_interval_a_wrong_n_and_a_wrong_method() -> None:
    readings = [Reading("report.json", [_json()]),
                Reading("tables.csv", [_shown(6, high=0.9)]),
                Reading("report.pdf", [_shown(3, n=319)]),
                Reading("README.txt", [_shown(3, method="percentile")])]
    messages = {p.file: p.message for p in artefact_check(readings)}
    assert messages["tables.csv"].startswith("interval [0.726, 0.9]")
    assert messages["report.pdf"] == "n = 319 where report.json has n = 320"
    assert messages["README.txt"] == "method percentile where report.json has BCa"


@pytest.mark.parametrize(("figure", "message"), [
    (_json(low=0.8, high=0.9), "does not contain its estimate"),
    (_json(value=0.5, low=0.6, high=1.2), "lies outside the figure's range [-1.0, 1.0]"),
    (_json(low=0.9, high=0.7, value=0.8), "has low > high"),
    (_json(n=1, low=0.77, high=0.77, value=0.77), "an interval from 1 items (its method needs 2)"),
    (Figure("x", value=1.2, low=0.5, high=1.0, bounds=SHARE), "estimate 1.2 lies outside"),
])
def test_artefact_check_finds_an_interval_that_cannot_be_true(figure: Figure, message: str) -> None:
    problems = artefact_check([Reading("report.json", [figure])])
    assert any(message in p.message for p in problems), problems


def test_artefact_check_a_method_statement_must_name_every_method_used_and_no_other() -> None:
    """The demo's defect: README.txt said "percentile intervals" while tables.csv listed ci_method=bca."""
    figures = [_json(), _json(key="b", method="percentile")]
    said_percentile = Reading("README.txt", methods_stated=frozenset(methods_named("95 % percentile intervals")))
    problems = artefact_check([Reading("report.json", figures), said_percentile])
    assert [str(p) for p in problems] == [
        "README.txt: interval method: BCa intervals are reported but the file does not name BCa"]
    too_many = Reading("README.txt", methods_stated=frozenset({"BCa", "percentile", "F-based"}))
    assert [p.message for p in artefact_check([Reading("report.json", figures), too_many])] == [
        "the file names F-based intervals but no figure uses F-based"]
    right = Reading("README.txt", methods_stated=frozenset(methods_named("95 % intervals: BCa or percentile")))
    assert artefact_check([Reading("report.json", figures), right]) == []


def test_artefact_check_finds_an_internal_key_where_a_label_exists() -> None:
    """The demo's defect: the PDF said "sub dimension: allusionDetection" where the page says the label."""
    labels = {"allusionDetection": "Allusion Detection", "doctrinal": "Doctrinal Precision"}
    raw = Reading("report.pdf", text="sub dimension: allusionDetection   0.731 [0.45, 0.90]")
    problems = artefact_check([raw], labels=labels)
    assert [(p.file, p.figure) for p in problems] == [("report.pdf", "allusionDetection")]
    labelled = Reading("report.pdf", text="Sub-dimension: Allusion Detection · Dimension: Doctrinal Precision")
    assert artefact_check([labelled], labels=labels) == []
    # a key inside an e-mail address or a dotted name is not the key shown (the rater key lists addresses)
    addresses = Reading("page", text="R06  doctrinal.es1@faithbench.test  24 · R07 x.doctrinal.v2")
    assert artefact_check([addresses], labels=labels) == []
    ends = Reading("page", text="the weakest was doctrinal. Then (doctrinal), doctrinal@")
    assert [p.figure for p in artefact_check([ends], labels=labels)] == ["doctrinal"]


def test_artefact_check_one_number_formatter_writes_what_it_reads() -> None:
    assert estimate(0.7718) == "0.772" and estimate(None) == "—" and estimate(-0.0001) == "0.000"
    assert interval(0.70149, 0.83, 2) == "[0.70, 0.83]" and interval(None, 0.3) == ""
    assert interval_parse("α 0.772 [0.726, 0.809] BCa") == (0.726, 0.809, 3)
    assert n_text(12, "pairable units") == "n = 12 pairable units"
    assert method_label("bca") == "BCa" and method_label("F") == "F-based" and method_label(None) == "—"
    assert methods_sentence(["bca", "percentile", "bca", None]) == "BCa or percentile"
    assert methods_sentence(["F", "bca", "percentile"]) == "BCa, F-based or percentile"
    assert csv_number(0.5) == "0.500000" and csv_number(12) == "12" and csv_number(None) == ""
    assert number_parse("−0.250") == -0.25 and number_parse("—") is None and digits_of("0.500000") == 6
    assert methods_named("95 % intervals: BCa, F-based or percentile") == {"BCa", "F-based", "percentile"}
    assert methods_named("a BCa-like thing") == set()


def test_artefact_check_the_template_filters_are_the_one_formatter() -> None:
    from calibration.templatetags.evidence_numbers import estimate as estimate_filter
    from calibration.templatetags.evidence_numbers import interval as interval_filter
    from calibration.templatetags.evidence_numbers import method_label as method_filter

    assert estimate_filter(0.77182) == estimate(0.77182) == "0.772"
    assert interval_filter([0.70149, 0.83], 2) == "[0.70, 0.83]"
    assert method_filter("bca") == "BCa"


def test_artefact_check_the_admin_lists_a_versions_problems() -> None:
    from django.contrib.admin.sites import site

    from evidence.admin import SnapshotAdmin
    from evidence.models import Snapshot

    admin = SnapshotAdmin(Snapshot, site)
    failed = Snapshot(status=Snapshot.Status.FAILED_CHECKS, checks=["README.txt: interval method: <BCa> missing"])
    assert admin.checks_list(failed) == "<ul><li>README.txt: interval method: &lt;BCa&gt; missing</li></ul>"
    assert admin.checks_list(Snapshot(status=Snapshot.Status.READY, checks=[])) == "passed"
