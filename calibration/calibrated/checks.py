"""The calibrated leaderboard read back from its files for the artefact checker (`evidence.kit.checker`): the stored
report.json (full precision, read as the JSON it is, so the board's tree can change without this file) and
tables.csv (its long rows), keyed alike — `model/facet:value/board` — so the generic rules compare them: the same
estimate, interval and n in both, every interval holding its estimate inside the composite's 0–1 scale (a shift or
a difference of two models inside −1…1), no interval from fewer responses than its method needs.

Kept small on purpose: it reads the keys the board writes (`estimate`, `lower`, `upper`, `n` of `judge_only`,
`calibrated`, `shift` per model and cell, and the pairs). A board that renames them updates `_BOARDS` here."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import Any

from evaluations.labels import key_labels
from evidence.kit.checker import Figure, Problem, Reading, artefact_check, pdf_text
from evidence.kit.numbers import digits_of, number_parse
from evidence.models import Snapshot, SnapshotFile

from .build import MIN_JUDGED_FOR_INTERVAL

COMPOSITE = (0.0, 1.0)  # Σ score/3 × weight/100 (methodology §5.4.1)
DIFFERENCE = (-1.0, 1.0)  # a shift (calibrated − judge) or a difference of two models' composites
# The fewest responses an interval's method needs: the judge-only bootstrap two; the calibrated and shift
# intervals are confidence sequences, valid at every look (issue 31), so one label gives a wide but true interval.
MIN_N = {"judge_only": MIN_JUDGED_FOR_INTERVAL, "calibrated": 1, "shift": 1, "difference": 1}
_BOARDS = {"judge_only": COMPOSITE, "calibrated": COMPOSITE, "shift": DIFFERENCE, "difference": DIFFERENCE}


def _figure(key: str, block: Mapping[str, Any], board: str, digits: int | None = None) -> Figure:
    low = block.get("lower")
    return Figure(key=key, value=block.get("estimate"), low=low, high=block.get("upper"), n=block.get("n"),
                  digits=digits, bounds=_BOARDS[board], min_n=MIN_N[board] if low is not None else 0)


def json_reading(document: Mapping[str, Any]) -> Reading:
    """Every model's three boards (overall, per dimension, per tradition) and every pair, at full precision."""
    figures = []
    for entry in document.get("models", []):
        cells = [("overall", "all", entry)]
        cells += [("dimension", key, cell) for key, cell in (entry.get("by_dimension") or {}).items()]
        cells += [("tradition", key, cell) for key, cell in (entry.get("by_tradition") or {}).items()]
        cells += [("language", key, cell) for key, cell in (entry.get("by_language") or {}).items()]
        for facet, value, cell in cells:
            for board in ("judge_only", "calibrated", "shift"):
                if cell.get(board) is not None:
                    figures.append(_figure(f"{entry['model']}/{facet}:{value}/{board}", cell[board], board))
    for pair in document.get("pairs", []):
        figures.append(_figure(f"{pair['model_a']} − {pair['model_b']}/pair/difference", pair, "difference"))
    return Reading(file="report.json", figures=figures)


def csv_reading(content: bytes) -> Reading:
    """tables.csv: estimate, lower, upper and n per model × facet × board."""
    figures = []
    for row in csv.DictReader(io.StringIO(content.decode("utf-8"))):
        if row.get("board") not in _BOARDS:
            continue
        block = {"estimate": number_parse(row["estimate"]), "lower": number_parse(row["lower"]),
                 "upper": number_parse(row["upper"]), "n": int(row["n"]) if row.get("n") else None}
        if block["estimate"] is None and block["lower"] is None:
            continue
        shown = [row[k] for k in ("estimate", "lower", "upper") if row[k]]
        where = "pair" if row["facet"] == "pair" else f"{row['facet']}:{row['value']}"  # a pair's value is a note
        figures.append(_figure(f"{row['model']}/{where}/{row['board']}", block,
                               row["board"], digits=min(digits_of(s) for s in shown)))
    return Reading(file="tables.csv", figures=figures)


def label_keys(document: Mapping[str, Any]) -> dict[str, str]:
    """Dimension and tradition keys with a human label different from the key: the PDF must show the label.
    (Language cells are named "Spanish (es)", so their tags are not searched for.)"""
    models = document.get("models", [])
    return key_labels(rubric_keys={k for entry in models for k in (entry.get("by_dimension") or {})},
                      tradition_keys={k for entry in models for k in (entry.get("by_tradition") or {})})


def calibrated_check(snapshot: Snapshot, files: Mapping[str, bytes], *, tree: object | None = None) -> list[Problem]:
    """The calibrated leaderboard's artefact check (its KindSpec.check): report.json against tables.csv, and no
    internal key in the PDF's text where a label exists."""
    document = json.loads(files[SnapshotFile.Format.JSON])
    readings = [json_reading(document)]
    if SnapshotFile.Format.CSV in files:
        readings.append(csv_reading(files[SnapshotFile.Format.CSV]))
    if SnapshotFile.Format.PDF in files:
        readings.append(Reading(file="report.pdf", text=pdf_text(files[SnapshotFile.Format.PDF])))
    return artefact_check(readings, labels=label_keys(document), reference="report.json")
