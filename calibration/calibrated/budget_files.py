"""The variance budget's files in a calibrated snapshot's bundle: variance_budget_inputs.csv (the budget's input
rows; written and parsed back, so a bundle recomputes) and variance_budget.csv (one row per model)."""
from __future__ import annotations

import csv
import io
from dataclasses import fields

from evaluations.spreadsheet import csv_row_unprotect, csv_writer
from stats.variance_budget import GROUPS

from .budget import BudgetRow, ModelBudget

BUDGET_INPUT_FIELDS = [f.name for f in fields(BudgetRow)]
BUDGET_FIELDS = ["model", "cases", "cases_left_out", "routes", "repetitions", "judge_runs", "score",
                 "total_lower", "total_upper", "total_se", "total_df", "cases_only_lower", "cases_only_upper",
                 "cases_only_se", *[f"{g}_term" for g in GROUPS], *[f"{g}_share" for g in GROUPS], "notes"]


def budget_inputs_csv(rows: list[BudgetRow]) -> bytes:
    """The budget's input rows (model, case, weight, route, repetition, judge run, composite), sorted."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(BUDGET_INPUT_FIELDS)
    for row in sorted(rows, key=lambda r: (r.model, r.case_id, r.route, r.repetition, r.judge_run)):
        writer.writerow(getattr(row, name) for name in BUDGET_INPUT_FIELDS)
    return out.getvalue().encode("utf-8")


def budget_inputs_parse(data: bytes) -> list[BudgetRow]:
    """variance_budget_inputs.csv back into rows (to recompute a bundle's variance_budget.csv)."""
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
    if reader.fieldnames != BUDGET_INPUT_FIELDS:
        raise ValueError(f"variance_budget_inputs.csv:1: expected the columns {','.join(BUDGET_INPUT_FIELDS)}")
    rows = []
    for line, raw in enumerate(reader, start=2):
        try:
            cells = csv_row_unprotect([raw[name] for name in BUDGET_INPUT_FIELDS])
            rows.append(BudgetRow(cells[0], int(cells[1]), float(cells[2]), cells[3], int(cells[4]), int(cells[5]),
                                  float(cells[6])))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"variance_budget_inputs.csv:{line}: {exc}") from exc
    return rows


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def variance_budget_csv(models: list[ModelBudget]) -> bytes:
    """One row per model: the shape, both intervals, each line's term of Var(score) and its share."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(BUDGET_FIELDS)
    for m in models:
        b = m.budget
        if b is None:
            writer.writerow([m.model, m.cases_used, m.cases_left_out, "", "", "", *[""] * 8,
                             *[""] * (2 * len(GROUPS)), "; ".join(m.notes)])
            continue
        writer.writerow([
            m.model, m.cases_used, m.cases_left_out, b.shape[1], b.shape[2], b.shape[3], _num(b.total.estimate),
            _num(b.total.lower), _num(b.total.upper), _num(b.total.se), _num(b.total.df), _num(b.cases_only.lower),
            _num(b.cases_only.upper), _num(b.cases_only.se), *[_num(b.terms[g]) for g in GROUPS],
            *[_num(b.shares[g]) for g in GROUPS], "; ".join(m.notes)])
    return out.getvalue().encode("utf-8")
