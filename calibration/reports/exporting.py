"""Exporters of a calibration cycle's IRR report: a built report in, bytes out (gold labels: `adjudication/exporting.py`).

Exporters never query the database: they render what they are given, so a report built now and a
stored snapshot of it later go through the same functions and give the same bytes. A view picks the
exporter by format and sends its bytes with `accounts.http.download_response`.
"""
from __future__ import annotations

from typing import Any

from ..exporter import Exporter
from .pdf import report_pdf
from .render import report_csv, report_json

# --- the IRR report (the dict built by reports.build.calibration_report_build) ----------------------------


def report_csv_bytes(report: dict[str, Any]) -> bytes:
    """Long format, one row per group × comparison × metric (UTF-8)."""
    return report_csv(report).encode("utf-8")


def report_json_bytes(report: dict[str, Any]) -> bytes:
    """Everything, indented, UTF-8, no NaN."""
    return report_json(report).encode("utf-8")


def report_pdf_bytes(report: dict[str, Any]) -> bytes:
    """The printable summary (reportlab)."""
    return report_pdf(report)


REPORT_EXPORTERS: dict[str, Exporter[dict[str, Any]]] = {
    "csv": Exporter("csv", "text/csv", report_csv_bytes),
    "json": Exporter("json", "application/json", report_json_bytes),
    "pdf": Exporter("pdf", "application/pdf", report_pdf_bytes),
}
