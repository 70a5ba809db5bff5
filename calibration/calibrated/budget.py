"""The variance budget's computation — no database (the budget step of a calibrated snapshot).

Input: one `BudgetRow` per judge run's decisive composite of one response (variance_budget_inputs.csv holds exactly
these rows); the judge error of each model is the calibrated shift of the same snapshot (`report_shifts`). Output:
one `ModelBudget` per model, its arithmetic in `stats/variance_budget.py`; `BudgetFigures` is what the snapshot
stores of it for the page (`to_json`/`from_json`: the stored JSON, floats exact, so the page and its CSV show the
bundle's numbers). How the rows are chosen: `variance.py`'s docstring.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from stats.variance_budget import Interval, VarianceBudget, variance_budget

from .schema import CalibratedReport, Estimate

if TYPE_CHECKING:
    from evaluations.models import JudgeRun


@dataclass(frozen=True)
class BudgetRow:
    """One judge run's decisive composite of one response: the budget's input, as variance_budget_inputs.csv."""

    model: str
    case_id: int
    weight: float  # the case's difficulty weight
    route: str  # the generation condition's name (conditions in one budget differ only in route)
    repetition: int
    judge_run: int
    composite: float


@dataclass
class ModelBudget:
    model: str
    budget: VarianceBudget | None
    cases_used: int
    cases_left_out: int
    routes: list[str]
    notes: list[str] = field(default_factory=list)


Cells = dict[tuple[int, str, int], dict[int, float]]  # (case, route, repetition) → judge run → composite


def _repetitions(cells: Cells, routes: list[str], complete: set[tuple[int, str, int]], cases: list[int]) -> int:
    """k: the most common number of complete repetitions per case and route (the larger on a tie; 0: none)."""
    reps_per: Counter[int] = Counter()
    for case in cases:
        for route in routes:
            k = 0
            while (case, route, k + 1) in complete:
                k += 1
            reps_per[k] += 1
    return max((n for n in reps_per if n > 0), key=lambda n: (reps_per[n], n), default=0)


def _model_table(cells: Cells, routes: list[str], runs: list[int]) -> tuple[np.ndarray, list[int], int]:
    """(table, its cases in order, cases left out) for one model."""
    complete = {key for key, scores in cells.items() if all(r in scores for r in runs)}
    cases = sorted({case for case, _, _ in cells})
    k = _repetitions(cells, routes, complete, cases)
    if k == 0:
        return np.empty((0, len(routes), 0, len(runs))), [], len(cases)
    kept = [c for c in cases if all((c, r, rep) in complete for r in routes for rep in range(1, k + 1))]
    table = np.array([[[[cells[(c, r, rep)][j] for j in runs] for rep in range(1, k + 1)] for r in routes]
                      for c in kept], dtype=float)
    return table.reshape(len(kept), len(routes), k, len(runs)), kept, len(cases) - len(kept)


def _route_label(route: str, route_labels: list[str] | None) -> str:
    return next((text for text in route_labels or [] if text.startswith(f"{route} (")), route)


def _model_budget(model: str, cells: Cells, routes: list[str], runs: list[int], weights: dict[int, float],
                  shift: Estimate | None, left_out: Sequence[str], route_labels: list[str] | None) -> ModelBudget:
    """One model's budget; its routes are those it was served through (one route: its score is conditional on it,
    not estimable — never that the model's cases are incomplete)."""
    model_routes = [route for route in routes if any(key[1] == route for key in cells)]
    table, kept, dropped = _model_table(cells, model_routes, runs)
    notes = []
    if left_out:
        notes.append("left out: responses under conditions that differ in more than the route ("
                     + ", ".join(left_out) + ")")
    if dropped:
        notes.append(f"{dropped} case(s) left out: not every route × repetition × judge run scored")
    labels = [_route_label(route, route_labels) for route in model_routes]
    if len(kept) < 2:
        return ModelBudget(model, None, len(kept), dropped, labels, [*notes, "fewer than 2 complete cases: no budget"])
    se = shift.se if shift is not None else None
    budget = variance_budget(table, case_weights=[weights[c] for c in kept],
                             judge_error_var=None if se is None else float(se) ** 2,
                             judge_shift=float((shift.estimate if shift is not None else None) or 0.0))
    if se is not None and shift is not None and shift.estimate is not None:
        # the cases-only interval about the same estimate as the score beside it (issue 31): the calibrated score
        # of this table, ȳ + shift, not the judge's ȳ
        moved = float(shift.estimate)
        c = budget.cases_only
        budget = replace(budget, cases_only=Interval(c.estimate + moved, c.se, c.lower + moved, c.upper + moved,
                                                     c.df))
        notes.append(f"both intervals are about the calibrated score: the judge's mean {budget.mean:.3f} "
                     f"{'+' if moved >= 0 else '−'} the calibrated shift {abs(moved):.3f}")
    return ModelBudget(model, budget, len(kept), dropped, labels, notes + budget.notes)


def budget_compute(rows: list[BudgetRow], *, shifts: dict[str, Estimate], left_out: Sequence[str] = (),
                   route_labels: list[str] | None = None) -> list[ModelBudget]:
    """Every model's budget from the rows; `shifts`: model → the calibrated shift {estimate, se} (judge error)."""
    runs = sorted({r.judge_run for r in rows})
    routes = sorted({r.route for r in rows})
    cells: dict[str, Cells] = defaultdict(lambda: defaultdict(dict))
    weights: dict[int, float] = {}
    for r in rows:
        cells[r.model][(r.case_id, r.route, r.repetition)][r.judge_run] = r.composite
        weights[r.case_id] = r.weight
    return [_model_budget(model, cells[model], routes, runs, weights, shifts.get(model), left_out, route_labels)
            for model in sorted(cells)]


def report_shifts(report: CalibratedReport | None) -> dict[str, Estimate]:
    """model → the calibrated shift (estimate, se, …) of a calibrated leaderboard's report tree."""
    return {e.model: e.shift for e in report.models} if report is not None else {}


# The stored figures: JSON numbers must be finite, so ±inf and NaN (a Satterthwaite df, say) travel as strings.
def _num_out(value: float | None) -> float | str | None:
    return value if value is None or math.isfinite(value) else repr(float(value))


def _num_in(value: float | str | None) -> float | None:
    return None if value is None else float(value)


def _map_out(values: dict[str, float | None]) -> dict[str, Any]:
    return {key: _num_out(value) for key, value in values.items()}


def _interval_out(interval: Interval) -> dict[str, Any]:
    return {"estimate": _num_out(interval.estimate), "se": _num_out(interval.se), "lower": _num_out(interval.lower),
            "upper": _num_out(interval.upper), "df": _num_out(interval.df)}


def _interval_in(data: dict[str, Any]) -> Interval:
    return Interval(**{key: float(data[key]) for key in ("estimate", "se", "lower", "upper", "df")})


def _variance_budget_out(b: VarianceBudget) -> dict[str, Any]:
    return {"shape": list(b.shape), "mean": _num_out(b.mean), "components": _map_out(b.components),
            "terms": _map_out(b.terms), "shares": _map_out(b.shares), "total": _interval_out(b.total),
            "cases_only": _interval_out(b.cases_only), "confidence": b.confidence, "notes": list(b.notes)}


def _variance_budget_in(data: dict[str, Any]) -> VarianceBudget:
    n_c, n_p, n_r, n_j = (int(n) for n in data["shape"])
    return VarianceBudget(
        shape=(n_c, n_p, n_r, n_j), mean=float(data["mean"]),
        components={k: _num_in(v) for k, v in data["components"].items()},
        terms={k: _num_in(v) for k, v in data["terms"].items()},
        shares={k: _num_in(v) for k, v in data["shares"].items()},
        total=_interval_in(data["total"]), cases_only=_interval_in(data["cases_only"]),
        confidence=float(data["confidence"]), notes=list(data["notes"]))


@dataclass(frozen=True)
class BudgetFigures:
    """What a calibrated snapshot stores of its variance budget, for the page and its CSV: the judge runs of the
    series (ids) and every model's budget."""

    series: list[int]
    models: list[ModelBudget]

    def to_json(self) -> dict[str, Any]:
        return {"series": list(self.series), "models": [
            {"model": m.model, "budget": None if m.budget is None else _variance_budget_out(m.budget),
             "cases_used": m.cases_used, "cases_left_out": m.cases_left_out, "routes": list(m.routes),
             "notes": list(m.notes)} for m in self.models]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BudgetFigures:
        """The stored figures; raises KeyError/TypeError/ValueError on a malformed tree."""
        return cls(series=[int(pk) for pk in data["series"]], models=[
            ModelBudget(model=str(m["model"]),
                        budget=None if m["budget"] is None else _variance_budget_in(m["budget"]),
                        cases_used=int(m["cases_used"]), cases_left_out=int(m["cases_left_out"]),
                        routes=[str(r) for r in m["routes"]], notes=[str(n) for n in m["notes"]])
            for m in data["models"]])


@dataclass
class BudgetPage:
    """A run's variance budget as the page shows it: the series' judge run ids, the calibrated version whose shift
    is the judge error (None: none), every model's budget."""

    run: JudgeRun
    series: list[int]
    calibrated_version: int | None
    models: list[ModelBudget]
