"""Exporters of a cycle's gold labels (`selectors.gold_labels` rows): a label set in, bytes out.

Like the report exporters they never query the database; the gold export view and the API pick one by format.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass

from evaluations.spreadsheet import csv_dict_writer

from ..exporter import Exporter
from .selectors import GoldLabelRow

GOLD_FIELDS = list(GoldLabelRow.__annotations__)  # cycle, case, model, run_label, …, adjudicated_at: the row's order


@dataclass(frozen=True)
class GoldLabelSet:
    """A cycle's current gold labels, one row per item × sub-dimension, with what they were scored against."""

    cycle: str
    rubric_version: str
    rows: list[GoldLabelRow]


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
