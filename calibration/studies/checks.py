"""A study report read back from its files for the artefact checker (`evidence.kit.checker`): the stored report.json
(read as the JSON it is) against tables.csv and report.pdf's humans tables (value, interval, method, units), keyed alike — `dimension/group/comparison/metric` — and the bundle's
README.txt, whose method sentence must name every interval method the humans' rows used. Ranges: shares in 0–1,
ρ, τ-b and κ in −1…1, α, Fleiss' κ and the ICCs ≤ 1 (not bounded below on small data), a mean signed difference
within ± the dimension's scale width."""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

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
from evidence.kit.numbers import digits_of, interval_parse, method_label, methods_named, number_parse
from evidence.models import Snapshot, SnapshotFile

from .report import HUMAN_METRICS, JUDGE_METRICS, METRIC_LABELS

MIN_BOOTSTRAP_UNITS = 2
_UNBOUNDED_BELOW = {"krippendorff_alpha", "fleiss_kappa", "icc_2_1", "icc_3_1", "alpha_with_judge",
                    "alpha_without_judge", "cohen_kappa_linear", "cohen_kappa_quadratic", "gwet_ac2_linear",
                    "gwet_ac2_quadratic", "mean_pairwise_quadratic_kappa"}  # as calibration/reports/checks.py says why


def _human_value(humans: Mapping[str, Any], metric: str) -> Any:
    """A coefficient of the humans' summary by its `intervals` key (AC2 and Cohen's κ are nested by weights)."""
    for prefix, nested in (("gwet_ac2_", "gwet_ac2"), ("cohen_kappa_", "cohen_kappa")):
        if metric.startswith(prefix) and isinstance(humans.get(nested), dict):
            return humans[nested].get(metric.removeprefix(prefix))
    return humans.get(metric)


def _bounds(metric: str, width: float | None) -> tuple[float, float] | None:
    if metric in ("percent_agreement", "within_one_agreement"):
        return SHARE
    if metric == "mean_signed_difference":
        return None if width is None else (-width, width)
    if metric in _UNBOUNDED_BELOW:
        return (float("-inf"), 1.0)
    return COEFFICIENT


def _widths(document: Mapping[str, Any]) -> dict[str, float | None]:
    widths: dict[str, float | None] = {}
    for meta in (document.get("meta") or {}).get("dimensions") or []:
        low, high = meta.get("scale_min"), meta.get("scale_max")
        widths[meta["key"]] = None if low is None or high is None else float(high) - float(low)
    return widths


def _blocks(document: Mapping[str, Any]) -> Iterable[tuple[str, str, Mapping[str, Any]]]:
    for key, entry in (document.get("dimensions") or {}).items():
        yield key, "", entry
        for group, block in sorted((entry.get("groups") or {}).items()):
            yield key, group, block


def json_reading(document: Mapping[str, Any]) -> Reading:
    """The humans' coefficients (every one with an interval entry, not only the CSV's) with their intervals and
    methods, and each judge's figures, at full precision."""
    figures = []
    widths = _widths(document)
    for key, group, block in _blocks(document):
        humans = block.get("humans") or {}
        intervals = humans.get("intervals") or {}
        for metric in dict.fromkeys([*HUMAN_METRICS, *intervals]):  # every interval report.json states
            value = _human_value(humans, metric)
            found = intervals.get(metric)
            entry: Mapping[str, Any] = found if isinstance(found, dict) else {}
            low, high = entry.get("low"), entry.get("high")
            if metric == "krippendorff_alpha" and low is None and humans.get("alpha_ci"):
                low, high = humans["alpha_ci"]
            if isinstance(value, int | float) or low is not None:
                figures.append(Figure(
                    key=f"{key}/{group}/humans/{metric}", value=value, low=low, high=high, n=humans.get("n_units"),
                    method=method_label(entry.get("method")) if low is not None and entry.get("method") else None,
                    bounds=_bounds(metric, widths.get(key)), min_n=MIN_BOOTSTRAP_UNITS if low is not None else 0))
        for judge in block.get("judges") or []:
            for metric in JUDGE_METRICS:
                if judge.get(metric) is not None:
                    figures.append(Figure(key=f"{key}/{group}/judge:{judge['rater']}/{metric}", value=judge[metric],
                                          n=judge.get("n_items"), bounds=_bounds(metric, widths.get(key))))
    return Reading(file="report.json", figures=figures)


def csv_reading(content: bytes, widths: Mapping[str, float | None] | None = None) -> Reading:
    """tables.csv: value, ci_low, ci_high and n per row (full precision: the study CSV writes repr()), each in its
    figure's range (`widths`: each dimension's scale width, for the mean signed difference)."""
    figures = []
    for row in csv.DictReader(io.StringIO(content.decode("utf-8"))):
        value, low = number_parse(row["value"]), number_parse(row["ci_low"])
        if value is None and low is None:
            continue
        figures.append(Figure(key=f"{row['dimension']}/{row['group']}/{row['comparison']}/{row['metric']}",
                              value=value, low=low, high=number_parse(row["ci_high"]),
                              n=int(row["n"]) if row["n"] else None, digits=12,
                              bounds=_bounds(row["metric"], (widths or {}).get(row["dimension"]))))
    return Reading(file="tables.csv", figures=figures)


def pdf_reading(text: str, document: Mapping[str, Any]) -> Reading:
    """report.pdf's humans tables, read from pdftotext's layout text: value, interval, method and units per
    dimension × rater group × coefficient, as printed (a row whose label was cut to fit is left to the other files)."""
    keys = sorted((document.get("dimensions") or {}), key=len, reverse=True)
    metrics = {label: metric for metric, label in METRIC_LABELS.items()}
    widths = _widths(document)
    figures = []
    dimension = None
    for line in text.splitlines():
        heading = next((key for key in keys if line.strip().startswith(f"{key} — ")), None)
        if heading is not None:
            dimension = heading
            continue
        cells = re.split(r"\s{2,}", line.strip())  # the table's columns, as pdftotext lays them out
        if dimension is None or len(cells) not in (5, 6) or cells[1] not in metrics \
                or not (cells[0] == "all raters" or cells[0].startswith("group ")) or not cells[-1].isdigit():
            continue
        metric = metrics[cells[1]]
        group = "" if cells[0] == "all raters" else cells[0].removeprefix("group ").strip()
        value, bounds = cells[2], interval_parse(cells[3])
        method = cells[4] if len(cells) == 6 and bounds else None
        figures.append(Figure(
            key=f"{dimension}/{group}/humans/{metric}", value=number_parse(value),
            low=bounds[0] if bounds else None, high=bounds[1] if bounds else None, n=int(cells[-1]), method=method,
            digits=min(digits_of(value), bounds[2]) if bounds and value != "—" else
            (bounds[2] if bounds else digits_of(value)),
            bounds=_bounds(metric, widths.get(dimension)), min_n=MIN_BOOTSTRAP_UNITS if bounds else 0))
    return Reading(file="report.pdf", figures=figures, text=text)


def readme_reading(text: str) -> Reading:
    """README.txt: the interval methods its Bootstrap line names."""
    start = text.find("Bootstrap:")
    line = text[start:text.find("\n", start)] if start >= 0 else ""
    return Reading(file="README.txt", methods_stated=frozenset(methods_named(line)) if line else None)


def study_methods(document: Mapping[str, Any]) -> list[str]:
    """The interval methods (stored keys) the humans' rows used: what README.txt must name."""
    found = []
    for _key, _group, block in _blocks(document):
        for entry in ((block.get("humans") or {}).get("intervals") or {}).values():
            if isinstance(entry, dict) and entry.get("low") is not None and entry.get("method"):
                found.append(entry["method"])
    return found


def study_check(snapshot: Snapshot, files: Mapping[str, bytes], *, tree: object | None = None) -> list[Problem]:
    """The study report's artefact check (its KindSpec.check): report.json, tables.csv, report.pdf (its text, extracted
    while the others are read) and README.txt."""
    pdf = PdfText(files[SnapshotFile.Format.PDF]) if SnapshotFile.Format.PDF in files else None
    document = json.loads(files[SnapshotFile.Format.JSON])
    readings = [json_reading(document)]
    if SnapshotFile.Format.CSV in files:
        readings.append(csv_reading(files[SnapshotFile.Format.CSV], _widths(document)))
    if SnapshotFile.Format.BUNDLE in files:
        readme = bundle_members(files[SnapshotFile.Format.BUNDLE]).get("README.txt")
        if readme is not None:
            readings.append(readme_reading(readme.decode("utf-8")))
    if pdf is not None:
        readings.append(pdf_reading(pdf.text(), document))
    return artefact_check(readings, reference="report.json")
