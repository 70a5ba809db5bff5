"""The variance budget per model (issue 26 item 3): rows from a judge run's series, arithmetic in
`stats/variance_budget.py`, judge error from the run's newest calibrated leaderboard version.

The table per model is case × provider route × repetition × judge run:

- judge runs: the run and its finished repeats (`judge_run_series`, methodology §8.4) — each scores the same
  responses again;
- provider routes: the generation conditions of the model's judged responses that differ from each other in
  `route` only (the group holding the standard condition, else the largest); conditions that differ in anything
  else (reasoning, temperature, language…) are a different estimand and are left out, with a note;
- repetitions: 1…k, k the most common number of complete repetitions per case and route;
- a cell is the decisive composite of that response in that run; a case enters only when every cell is there (the
  method needs a balanced table), and the cases left out are counted.

Judge error: the newest ready calibrated version of the run (`Snapshot` with `label_cycle`) stores, per model,
the calibrated shift θ̂(expert − judge) with its standard error (a stratified PPI estimate with λ = 0 on Y − Ŷ);
its variance is the judge-error term and its estimate moves the total interval's centre to the judge mean plus
the shift (the plain-PPI calibrated score of this table). Without a ready version, judge error is left out and
the page says so.
"""
from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from evaluations.judge.selectors import judge_decisive_scored, judge_run_series
from evaluations.models import Difficulty, GenerationCondition, JudgeResult, JudgeRun, ModelResponse
from evaluations.selectors import difficulty_weight
from evaluations.spreadsheet import csv_row_unprotect, csv_writer
from evidence.models import Snapshot
from stats.variance_budget import GROUP_LABELS, GROUPS, VarianceBudget, variance_budget

from .charts import stacked_bar
from .schema import CalibratedReport, Estimate


@dataclass
class ModelBudget:
    model: str
    budget: VarianceBudget | None
    cases_used: int
    cases_left_out: int
    routes: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass
class BudgetPage:
    run: JudgeRun
    series: list[JudgeRun]
    calibrated_version: int | None
    models: list[ModelBudget]


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


@dataclass(frozen=True)
class BudgetInputs:
    series: list[JudgeRun]
    rows: list[BudgetRow]
    routes: list[str]  # condition names, each with its route: "standard (default routing)", "route-b (provider-b)"
    left_out: list[str]  # conditions that differ in more than the route


def _route_conditions(condition_ids: set[int]) -> tuple[list[GenerationCondition], list[GenerationCondition]]:
    """(the conditions used as routes, the ones left out): grouped by every setting but the route."""
    conditions = list(GenerationCondition.objects.filter(pk__in=condition_ids).order_by("name"))
    groups: dict[tuple, list[GenerationCondition]] = defaultdict(list)
    for c in conditions:
        settings = {axis: value for axis, value in c.settings_dict().items() if axis != "route"}
        groups[tuple(sorted(settings.items()))].append(c)
    if not groups:
        return [], []
    chosen = max(groups.values(), key=lambda g: (any(c.is_standard for c in g), len(g)))
    return chosen, [c for c in conditions if c not in chosen]


def budget_inputs_read(*, run: JudgeRun) -> BudgetInputs:
    """The rows of the run's series for the budget (module docstring): one query per judge run plus three."""
    series = judge_run_series(run=run)
    if run not in series:
        series = [run, *series]
    judged = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    responses = list(ModelResponse.objects.filter(pk__in=judged).order_by("pk").values_list(
        "pk", "model__name", "test_case_id", "test_case__difficulty", "condition_id", "repetition"))
    routes, left_out = _route_conditions({r[4] for r in responses})
    name_of = {c.pk: c.name for c in routes}
    weight_of = {d: float(difficulty_weight(d)) for d in Difficulty.values}
    rows = []
    for member in series:
        scores = judge_decisive_scored(run=member, response_ids=judged)
        for pk, model, case, difficulty, condition, repetition in responses:
            result = scores.get(pk)
            if condition in name_of and result is not None and result.composite is not None:
                rows.append(BudgetRow(model, case, weight_of[difficulty], name_of[condition], repetition, member.pk,
                                      round(float(result.composite), 6)))
    return BudgetInputs(series, rows, [f"{c.name} ({c.route or 'default routing'})" for c in routes],
                        [c.name for c in left_out])


def _model_table(cells: dict[tuple[int, str, int], dict[int, float]], routes: list[str], runs: list[int]
                 ) -> tuple[np.ndarray, list[int], int]:
    """(table, its cases in order, cases left out) for one model; cells: (case, route, repetition) → run → score."""
    complete = {key for key, scores in cells.items() if all(r in scores for r in runs)}
    cases = sorted({case for case, _, _ in cells})
    reps_per: Counter[int] = Counter()
    for case in cases:
        for route in routes:
            k = 0
            while (case, route, k + 1) in complete:
                k += 1
            reps_per[k] += 1
    k = max((n for n in reps_per if n > 0), key=lambda n: (reps_per[n], n), default=0)
    if k == 0:
        return np.empty((0, len(routes), 0, len(runs))), [], len(cases)
    kept = [c for c in cases if all((c, r, rep) in complete for r in routes for rep in range(1, k + 1))]
    table = np.array([[[[cells[(c, r, rep)][j] for j in runs] for rep in range(1, k + 1)] for r in routes]
                      for c in kept], dtype=float)
    return table.reshape(len(kept), len(routes), k, len(runs)), kept, len(cases) - len(kept)


def budget_compute(rows: list[BudgetRow], *, shifts: dict[str, Estimate], left_out: Sequence[str] = (),
                   route_labels: list[str] | None = None) -> list[ModelBudget]:
    """Every model's budget from the rows; `shifts`: model → the calibrated shift {estimate, se} (judge error)."""
    runs = sorted({r.judge_run for r in rows})
    routes = sorted({r.route for r in rows})
    cells: dict[str, dict[tuple[int, str, int], dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    weights: dict[int, float] = {}
    for r in rows:
        cells[r.model][(r.case_id, r.route, r.repetition)][r.judge_run] = r.composite
        weights[r.case_id] = r.weight
    out = []
    def label(route: str) -> str:
        return next((text for text in route_labels or [] if text.startswith(f"{route} (")), route)

    for model in sorted(cells):
        # a model's routes are those it was served through: one route for a model means its score is conditional
        # on it (not estimable), never that the model's cases are incomplete
        model_routes = [route for route in routes if any(key[1] == route for key in cells[model])]
        table, kept, dropped = _model_table(cells[model], model_routes, runs)
        notes = []
        if left_out:
            notes.append("left out: responses under conditions that differ in more than the route ("
                         + ", ".join(left_out) + ")")
        if dropped:
            notes.append(f"{dropped} case(s) left out: not every route × repetition × judge run scored")
        labels = [label(route) for route in model_routes]
        if len(kept) < 2:
            out.append(ModelBudget(model, None, len(kept), dropped, labels,
                                   [*notes, "fewer than 2 complete cases: no budget"]))
            continue
        shift = shifts.get(model)
        se = shift.se if shift is not None else None
        budget = variance_budget(table, case_weights=[weights[c] for c in kept],
                                 judge_error_var=None if se is None else float(se) ** 2,
                                 judge_shift=float((shift.estimate if shift is not None else None) or 0.0))
        out.append(ModelBudget(model, budget, len(kept), dropped, labels, notes + budget.notes))
    return out


def report_shifts(report: CalibratedReport | None) -> dict[str, Estimate]:
    """model → the calibrated shift (estimate, se, …) of a calibrated leaderboard's report tree."""
    return {e.model: e.shift for e in report.models} if report is not None else {}


def variance_budget_page(*, run: JudgeRun) -> BudgetPage:
    """Every model's variance budget over the run's series, judge error from the newest ready calibrated version."""
    inputs = budget_inputs_read(run=run)
    snapshot = (Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).ready()
                .order_by("-version").first())
    report = CalibratedReport.from_json(snapshot.payload) if snapshot and snapshot.payload else None
    models = budget_compute(inputs.rows, shifts=report_shifts(report),
                            left_out=inputs.left_out, route_labels=inputs.routes)
    return BudgetPage(run, inputs.series, snapshot.version if snapshot else None, models)


BUDGET_INPUT_FIELDS = [f.name for f in fields(BudgetRow)]


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


@dataclass(frozen=True)
class BudgetLine:
    """One source of variance on the page: its term of Var(score), its share in % and its SD."""

    key: str
    label: str
    term: float | None
    share: float | None
    sd: float | None


@dataclass(frozen=True)
class BudgetPageRow:
    """One model on the budget page: its budget (`m`, `b`), the lines per source and the stacked bar."""

    m: ModelBudget
    b: VarianceBudget | None
    lines: list[BudgetLine]
    bar: str


def budget_rows(page: BudgetPage) -> list[BudgetPageRow]:
    """Per model, what the page shows: the budget, its stacked bar and one line per source (share in %, SD)."""
    rows = []
    for m in page.models:
        b = m.budget
        lines = []
        if b is not None:
            for g in GROUPS:
                term, share = b.terms[g], b.shares[g]
                lines.append(BudgetLine(key=g, label=GROUP_LABELS[g], term=term,
                                        share=None if share is None else round(100 * share, 1),
                                        sd=None if term is None else term ** 0.5))
        rows.append(BudgetPageRow(m=m, b=b, lines=lines,
                                  bar=stacked_bar(b.shares, f"Variance shares of {m.model}") if b is not None else ""))
    return rows


BUDGET_FIELDS = ["model", "cases", "cases_left_out", "routes", "repetitions", "judge_runs", "score",
                 "total_lower", "total_upper", "total_se", "total_df", "cases_only_lower", "cases_only_upper",
                 "cases_only_se", *[f"{g}_term" for g in GROUPS], *[f"{g}_share" for g in GROUPS], "notes"]


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


__all__ = ["GROUP_LABELS", "BudgetInputs", "BudgetPage", "BudgetRow", "ModelBudget", "budget_compute",
           "budget_inputs_csv", "budget_inputs_parse", "budget_inputs_read", "budget_rows", "report_shifts",
           "variance_budget_csv", "variance_budget_page"]
