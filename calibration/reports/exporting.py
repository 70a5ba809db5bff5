"""Exporters of a calibration cycle's IRR report and gold labels: a built report (or label set) in, bytes out.

Exporters never query the database: they render what they are given, so a report built now and a
stored snapshot of it later go through the same functions and give the same bytes. A view picks the
exporter by format and sends its bytes with `accounts.http.download_response`.
"""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from evaluations.spreadsheet import csv_dict_writer

from .pdf import report_pdf
from .render import report_csv, report_json
from .schema import Report

T = TypeVar("T")


@dataclass(frozen=True)
class Exporter(Generic[T]):
    """One output format: how to render the data, and how the file is named and typed."""

    extension: str
    content_type: str
    render: Callable[[T], bytes]

    def filename(self, stem: str) -> str:
        return f"{stem}.{self.extension}"


# --- the IRR report (the tree built by reports.build.calibration_report_build) ----------------------------


def report_csv_bytes(report: Report) -> bytes:
    """Long format, one row per group × comparison × metric (UTF-8)."""
    return report_csv(report).encode("utf-8")


def report_json_bytes(report: Report) -> bytes:
    """Everything, indented, UTF-8, no NaN."""
    return report_json(report).encode("utf-8")


def report_pdf_bytes(report: Report) -> bytes:
    """The printable summary (reportlab)."""
    return report_pdf(report)


REPORT_EXPORTERS: dict[str, Exporter[Report]] = {
    "csv": Exporter("csv", "text/csv", report_csv_bytes),
    "json": Exporter("json", "application/json", report_json_bytes),
    "pdf": Exporter("pdf", "application/pdf", report_pdf_bytes),
}


# --- gold labels (adjudication.selectors.gold_labels rows of one cycle) -----------------------------------

GOLD_FIELDS = ["cycle", "case", "model", "run_label", "dimension", "sub_dimension", "gold_score", "reason",
               "decision_id", "adjudicated_at"]


@dataclass(frozen=True)
class GoldLabelSet:
    """A cycle's current gold labels, one row per item × sub-dimension, with what they were scored against."""

    cycle: str
    rubric_version: str
    rows: list[dict[str, Any]]


def gold_labels_csv(labels: GoldLabelSet) -> bytes:
    """One row per item × sub-dimension, the columns of GOLD_FIELDS."""
    buffer = io.StringIO()
    writer = csv_dict_writer(buffer, GOLD_FIELDS)
    writer.writeheader()
    writer.writerows(labels.rows)
    return buffer.getvalue().encode("utf-8")


def gold_labels_json(labels: GoldLabelSet) -> bytes:
    """{"cycle", "rubric_version", "gold_labels": [rows]}, indented, UTF-8."""
    body = {"cycle": labels.cycle, "rubric_version": labels.rubric_version, "gold_labels": labels.rows}
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


GOLD_EXPORTERS: dict[str, Exporter[GoldLabelSet]] = {
    "csv": Exporter("csv", "text/csv", gold_labels_csv),
    "json": Exporter("json", "application/json", gold_labels_json),
}


def gold_filename_stem(*, cycle_id: int) -> str:
    return f"gold-labels-cycle-{cycle_id}"
