"""The variance budget per model (issue 26 item 3), one step of a calibrated snapshot: rows from a judge run's
series (`selectors.budget_inputs_read`), computed by `budget.budget_compute` (arithmetic in
`stats/variance_budget.py`), files by `budget_files`, page rows by `render.budget_rows`; the worker stores the figures
with the snapshot and the page reads them (`selectors.variance_budget_stored`). This module is the step's public
face: its names, and `variance_budget_page`, the budget of a run computed now (benchmarks, tests).

The table per model is case × provider route × repetition × judge run:

- judge runs: the run and its finished repeats (`judge_run_series`, methodology §8.4) — each scores the same
  responses again;
- provider routes: the generation conditions of the model's judged responses that differ from each other in
  `route` only (the group holding the standard condition, else the largest); conditions that differ in anything
  else (reasoning, temperature, language…) are a different estimand and are left out, with a note;
- repetitions: 1…k, k the most common number of complete repetitions per case and route;
- a cell is the decisive composite of that response in that run; a case enters only when every cell is there (the
  method needs a balanced table), and the cases left out are counted.

Judge error: a calibrated version stores, per model, the calibrated shift θ̂(expert − judge) with its standard error
(a stratified PPI estimate with λ = 0 on Y − Ŷ); its variance is the judge-error term and its estimate moves the
total interval's centre to the judge mean plus the shift (the plain-PPI calibrated score of this table). The budget
stored with a version uses that version's own shift; `variance_budget_page` uses the newest ready version's, and
without one leaves judge error out (and the page says so).
"""
from __future__ import annotations

from evaluations.models import JudgeRun
from stats.variance_budget import GROUP_LABELS

from .budget import BudgetPage, BudgetRow, ModelBudget, budget_compute, report_shifts
from .budget_files import budget_inputs_csv, budget_inputs_parse, variance_budget_csv
from .render import budget_rows
from .schema import CalibratedReport
from .selectors import BudgetInputs, budget_inputs_read, calibrated_snapshot_for


def variance_budget_page(*, run: JudgeRun) -> BudgetPage:
    """Every model's variance budget over the run's series computed now, judge error from the newest ready
    calibrated version (the pages read the stored one instead: `selectors.variance_budget_stored`)."""
    inputs = budget_inputs_read(run=run)
    snapshot = calibrated_snapshot_for(run=run)  # the newest ready version
    report = CalibratedReport.from_json(snapshot.payload) if snapshot and snapshot.payload else None
    models = budget_compute(inputs.rows, shifts=report_shifts(report),
                            left_out=inputs.left_out, route_labels=inputs.routes)
    return BudgetPage(run, [r.pk for r in inputs.series], snapshot.version if snapshot else None, models)


__all__ = ["GROUP_LABELS", "BudgetInputs", "BudgetPage", "BudgetRow", "ModelBudget", "budget_compute",
           "budget_inputs_csv", "budget_inputs_parse", "budget_inputs_read", "budget_rows", "report_shifts",
           "variance_budget_csv", "variance_budget_page"]
