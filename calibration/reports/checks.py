"""The cycle report read back from its files for the artefact checker (`evidence.kit.checker`): every figure of
the stored JSON (full precision), of tables.csv (six decimals), of the PDF's text (as printed) and of the bundle's
README.txt, keyed alike — `group_kind:group_value/comparison/metric` — so the generic rules compare them."""
from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Mapping

from evaluations.labels import group_label, key_labels
from evidence.kit.checker import (
    COEFFICIENT,
    SHARE,
    Figure,
    PdfText,
    Problem,
    Reading,
    artefact_check,
    bundle_members,
)
from evidence.kit.numbers import (
    NUMBER,
    digits_of,
    estimate,
    interval,
    interval_parse,
    method_label,
    methods_named,
    n_text,
    number_parse,
)
from evidence.models import Snapshot, SnapshotFile

from .build import MIN_BOOTSTRAP_UNITS
from .render import COEFFICIENTS, COMPARISONS, block_of, interval_rows, language_figures, pairable_units
from .schema import Group, Report

SHARES = {"percent_agreement", "within_one_agreement", "alpha_below_min_probability"}
SCORE_DIFFERENCE = (-3.0, 3.0)
# Chance-corrected coefficients whose estimators are not bounded below by −1 on small or unbalanced data: Fleiss'
# κ is ≥ −P̄e/(1 − P̄e), below −1 when P̄e > ½; the weighted ones (α, AC2, weighted κ) divide by a weighted chance
# term that can be small; the ICCs' mean-square ratios likewise. Their range is (−∞, 1]. Unweighted Cohen's κ,
# AC1 (chance term ≤ ½), ρ and τ-b stay in [−1, 1] (found by the property test, 200 generated reports).
UNBOUNDED_BELOW = {"fleiss_kappa", "krippendorff_alpha", "icc_2_1", "icc_3_1", "alpha_without_judge",
                   "alpha_with_judge", "mean_pairwise_quadratic_kappa", "gwet_ac2_linear", "gwet_ac2_quadratic",
                   "cohen_kappa_linear", "cohen_kappa_quadratic"}


def _bounds(metric: str) -> tuple[float, float]:
    if metric in SHARES:
        return SHARE
    if metric == "mean_signed_difference":
        return SCORE_DIFFERENCE
    if metric in UNBOUNDED_BELOW:
        return (float("-inf"), 1.0)
    return COEFFICIENT


def figure_key(kind: str, value: str, comparison: str, metric: str) -> str:
    """A figure's key in every reading: "overall:all/experts/krippendorff_alpha"."""
    return f"{kind}:{value}/{comparison}/{metric}"


def json_reading(report: Report) -> Reading:
    """Every coefficient of every block with its interval, n and method, at full precision."""
    figures: list[Figure] = []
    for group in report.groups:
        for comparison in COMPARISONS:
            block = block_of(group, comparison)
            n = pairable_units(block, group)
            for row in interval_rows(block, comparison):
                ci = row.interval
                has = ci is not None and ci.low is not None
                figures.append(Figure(
                    key=figure_key(group.kind, group.value, comparison, row.key), value=row.value,
                    low=ci.low if has and ci else None, high=ci.high if has and ci else None,
                    n=n, method=method_label(ci.method) if has and ci else None,
                    bounds=_bounds(row.key), min_n=MIN_BOOTSTRAP_UNITS if has else 0))
        figures.extend(_point_figures(group))
    figures.extend(_language_figures(report))
    return Reading(file="report.json", figures=figures)


def _language_figures(report: Report) -> list[Figure]:
    """The language cells' α (experts; judge against the majority) with their percentile intervals (issue 35)."""
    figures = []
    for cell in report.languages or []:
        for comparison, value, ci, n in language_figures(cell):
            if value is None:
                continue
            figures.append(Figure(key=figure_key("language", cell.language, comparison, "krippendorff_alpha"),
                                  value=value, low=ci[0] if ci else None, high=ci[1] if ci else None, n=n,
                                  method=method_label("percentile") if ci else None,
                                  bounds=_bounds("krippendorff_alpha"), min_n=MIN_BOOTSTRAP_UNITS if ci else 0))
    return figures


def _point_figures(group: Group) -> list[Figure]:
    """The figures without an interval: P(α < min), mean pairwise κ, mean signed differences, panel α."""
    e = group.experts
    n = pairable_units(e, group)
    points: list[tuple[str, str, float | None, int | None]] = [
        ("experts", "alpha_below_min_probability", e.alpha_below_min_probability, n),
        ("experts", "mean_pairwise_quadratic_kappa", e.mean_pairwise_quadratic_kappa, n),
        ("judge_vs_majority", "mean_signed_difference", group.judge_vs_majority.mean_signed_difference,
         pairable_units(group.judge_vs_majority, group)),
        ("judge_vs_gold", "mean_signed_difference", group.judge_vs_gold.mean_signed_difference,
         pairable_units(group.judge_vs_gold, group)),
        ("panel", "alpha_without_judge", group.panel_alpha_without_judge, n),
        ("panel", "alpha_with_judge", group.panel_alpha_with_judge, None),
    ]
    return [Figure(key=figure_key(group.kind, group.value, comparison, metric), value=value, n=count,
                   bounds=_bounds(metric)) for comparison, metric, value, count in points if value is not None]


def csv_reading(content: bytes) -> Reading:
    """tables.csv: value, ci_low, ci_high, n_pairable_units and ci_method per row."""
    figures: list[Figure] = []
    for row in csv.DictReader(io.StringIO(content.decode("utf-8"))):
        value = number_parse(row["value"])
        if value is None and not row["ci_low"]:
            continue
        low, high = number_parse(row["ci_low"]), number_parse(row["ci_high"])
        figures.append(Figure(
            key=figure_key(row["group_kind"], row["group_value"], row["comparison"], row["metric"]), value=value,
            low=low, high=high, n=int(row["n_pairable_units"]) if row["n_pairable_units"] else None,
            method=method_label(row["ci_method"]) if row["ci_method"] else None,
            digits=digits_of(row["value"] or row["ci_low"]), bounds=_bounds(row["metric"]),
            min_n=MIN_BOOTSTRAP_UNITS if low is not None else 0))
    return Reading(file="tables.csv", figures=figures)


_FOREST = re.compile(rf"(?P<value>{NUMBER}|—)\s*(?P<interval>\[[^\]]*\])?\s+n = (?P<n>\d+) pairable units\s+"
                     r"(?P<verdict>pass|fail|uncertain|undefined)\s*$")
_INTERVAL_ROW = re.compile(rf"^\s*(?P<comparison>experts|judge vs majority|judge vs gold)\s+(?P<label>.+?)\s{{2,}}"
                           rf"(?P<value>{NUMBER})\s+(?P<interval>\[[^\]]*\]|—)\s+(?P<method>\S+)")
_PDF_COMPARISON = {"experts": "experts", "judge vs majority": "judge_vs_majority", "judge vs gold": "judge_vs_gold"}


def _labels_to_keys(report: Report) -> dict[str, tuple[str, str]]:
    return {group_label(g.kind, g.value): (g.kind, g.value) for g in report.groups}


def pdf_reading(text: str, report: Report) -> Reading:
    """The PDF's forest plots (α, interval, n per group) and its overall coefficient table (value, interval,
    method), read from pdftotext's layout text; the methods its header names; its whole text for raw keys."""
    figures: list[Figure] = []
    groups = _labels_to_keys(report)
    coefficient_keys = {label: key for key, label, _e, _r in COEFFICIENTS}
    comparison = "experts"
    for line in text.splitlines():
        if "Experts among themselves: α" in line or "Experts among themselves: alpha" in line:
            comparison = "experts"
        elif "Judge against the expert majority: α" in line or "majority: alpha" in line:
            comparison = "judge_vs_majority"
        forest = _FOREST.search(line)
        if forest:
            label = line[:forest.start()].strip()
            found = groups.get(label)
            if found is None:
                continue  # a label shortened to fit its column ("…"): its figures are read from the other files
            bounds = interval_parse(forest.group("interval") or "")
            value = forest.group("value")
            if number_parse(value) is None and bounds is None:
                continue  # "—": α is not defined for the group (nor in report.json)
            figures.append(Figure(
                key=figure_key(*found, comparison, "krippendorff_alpha"), value=number_parse(value),
                low=bounds[0] if bounds else None, high=bounds[1] if bounds else None, n=int(forest.group("n")),
                digits=min(digits_of(value), bounds[2]) if bounds else digits_of(value),
                bounds=_bounds("krippendorff_alpha")))
            continue
        row = _INTERVAL_ROW.match(line)
        if row and row.group("label").strip() in coefficient_keys:
            bounds = interval_parse(row.group("interval"))
            figures.append(Figure(
                key=figure_key("overall", report.overall.value, _PDF_COMPARISON[row.group("comparison")],
                               coefficient_keys[row.group("label").strip()]),
                value=number_parse(row.group("value")), low=bounds[0] if bounds else None,
                high=bounds[1] if bounds else None, method=row.group("method") if bounds else None,
                digits=digits_of(row.group("value")), bounds=_bounds(coefficient_keys[row.group("label").strip()])))
    start = text.find("bootstrap resamples (")
    stated = " ".join(text[start:text.find(")", start)].split()) if start >= 0 else ""
    return Reading(file="report.pdf", figures=figures,
                   methods_stated=frozenset(methods_named(stated)) if stated else None, text=text)


_README_ALPHA = re.compile(rf"Overall α \(experts\):\s+(?P<value>{NUMBER})\s+(?P<interval>\[[^\]]*\])?\s*"
                           rf"(?P<method>[\w-]+)?\s*·\s*n = (?P<n>\d+)")


def readme_reading(text: str, overall: str = "all") -> Reading:
    """README.txt: the method sentence of its Bootstrap line and the overall α it quotes."""
    start = text.find("Bootstrap:")
    stated = text[start:text.find("(", start)] if start >= 0 else ""
    figures = []
    found = _README_ALPHA.search(text)
    if found:
        bounds = interval_parse(found.group("interval") or "")
        figures.append(Figure(
            key=figure_key("overall", overall, "experts", "krippendorff_alpha"), value=number_parse(found.group("value")),
            low=bounds[0] if bounds else None, high=bounds[1] if bounds else None, n=int(found.group("n")),
            method=found.group("method") if bounds else None, digits=digits_of(found.group("value")),
            bounds=_bounds("krippendorff_alpha")))
    return Reading(file="README.txt", figures=figures, methods_stated=frozenset(methods_named(stated)), text=text)


def label_keys(report: Report) -> dict[str, str]:
    """Group values that have a human label different from the key (sub-dimension and dimension keys,
    tradition keys): a reader must never see the key where the label exists."""
    return key_labels(rubric_keys=[g.value for g in report.groups if g.kind in ("dimension", "sub_dimension")],
                      tradition_keys=[g.value for g in report.groups if g.kind == "tradition"])


def report_readings(files: Mapping[str, bytes], report: Report) -> list[Reading]:
    """Each stored file of a cycle report as a reading (the README from the bundle); the PDF's text is extracted
    while the others are read."""
    pdf = PdfText(files[SnapshotFile.Format.PDF]) if SnapshotFile.Format.PDF in files else None
    readings = [json_reading(report)]
    if SnapshotFile.Format.CSV in files:
        readings.append(csv_reading(files[SnapshotFile.Format.CSV]))
    if SnapshotFile.Format.BUNDLE in files:
        members = bundle_members(files[SnapshotFile.Format.BUNDLE])
        if "README.txt" in members:
            readings.append(readme_reading(members["README.txt"].decode("utf-8"), report.overall.value))
    if pdf is not None:
        readings.append(pdf_reading(pdf.text(), report))
    return readings


_PAGE_TITLES = {"Experts among themselves": "experts", "Judge against the expert majority": "judge_vs_majority",
                "Judge against adjudicated gold": "judge_vs_gold"}
_PAGE_ROW = re.compile(r'<tr><td>(?P<label>[^<]*)</td><td class="num">(?P<value>[^<]*)</td>\s*<td>(?P<interval>[^<]*)'
                       r'</td>\s*<td>(?P<method>[^<]*)</td>')


def page_reading(body: str, report: Report) -> Reading:
    """The report page's body (the HTML a reader's browser shows, rendered from the stored tree as the page renders it):
    its "every coefficient with its interval" tables — value, interval and method of the overall group per
    comparison, as shown (three decimals)."""
    start = body.find('id="intervals"')
    card = body[start:body.find('<div class="card"', start + 1)] if start >= 0 else ""
    figures: list[Figure] = []
    for part in card.split("<h3>")[1:]:
        comparison = _PAGE_TITLES.get(html.unescape(part[:part.find("</h3>")]).strip())
        if comparison is None:
            continue
        keys = {row.label: row.key for row in interval_rows(block_of(report.overall, comparison), comparison)}
        for row in _PAGE_ROW.finditer(part):
            key = keys.get(html.unescape(row.group("label")).strip())
            if key is None:
                continue
            bounds = interval_parse(row.group("interval"))
            value = row.group("value").strip()
            figures.append(Figure(
                key=figure_key(report.overall.kind, report.overall.value, comparison, key), value=number_parse(value),
                low=bounds[0] if bounds else None, high=bounds[1] if bounds else None,
                method=html.unescape(row.group("method")).strip() if bounds else None,
                digits=min(digits_of(value), bounds[2]) if bounds else digits_of(value), bounds=_bounds(key),
                min_n=MIN_BOOTSTRAP_UNITS if bounds else 0))
    return Reading(file="page", figures=figures, text=html.unescape(re.sub(r"<[^>]+>", " ", body)))


def page_body(snapshot: Snapshot, report: Report) -> str:
    """The report page's body for a version, rendered from `report` in English (the checker reads numbers as the
    default language writes them)."""
    from django.utils import translation

    from .pages import ReportPage

    page = ReportPage(snapshot)
    page.__dict__["report"] = report  # the tree in hand (cached_property's slot): no parse of the payload back
    with translation.override("en"):
        return page.stored().body


def report_check(snapshot: Snapshot, files: Mapping[str, bytes], *, tree: object | None = None) -> list[Problem]:
    """The cycle report's artefact check (registered as its KindSpec.check): its files against each other. `tree`:
    the Report the compute rendered them from (a strict parse of report.json costs more than every other reading
    together); a stored version's JSON is parsed."""
    report = tree if isinstance(tree, Report) else Report.from_json(json.loads(files[SnapshotFile.Format.JSON]))
    readings = [*report_readings(files, report), page_reading(page_body(snapshot, report), report)]
    return artefact_check(readings, labels=label_keys(report), reference="report.json")


def report_methods(report: Report) -> set[str]:
    """The interval methods a report's figures used (stored keys): what its README and PDF must name."""
    used: set[str] = set()
    for group in report.groups:
        for comparison in COMPARISONS:
            for row in interval_rows(block_of(group, comparison), comparison):
                if row.interval is not None and row.interval.low is not None and row.interval.method:
                    used.add(row.interval.method)
    return used


def overall_alpha_line(report: Report) -> str:
    """The README's quoted headline: overall α of the experts, its interval, method and n, in the one format."""

    overall: Group = report.overall
    block = overall.experts
    rows = {row.key: row for row in interval_rows(block, "experts")}
    row = rows.get("krippendorff_alpha")
    shown = interval(row.interval.low, row.interval.high) if row and row.interval else ""
    method = method_label(row.interval.method) if row and row.interval and row.interval.low is not None else ""
    return " ".join(part for part in (f"Overall α (experts): {estimate(block.krippendorff_alpha)}", shown, method,
                                      f"· {n_text(block.n_pairable_units, 'pairable units')}") if part)
