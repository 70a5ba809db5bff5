"""The validation status (methodology §6.4–6.5 made live): what is validated, per dimension × tradition, and which
bias checks passed, failed or have not been run — read from stored report snapshots and bias checks only."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from annotations.models import CalibrationCycle
from casereview.selectors import validated_cases
from evaluations.judge.guardrails import evidence_enough, min_cases
from evaluations.models import TestCase
from evidence.kit.trees import tree_from_json
from evidence.models import Snapshot

from ..cycles.ratings import NO_TRADITION, ValidationCell
from .headline import Headline, validation_headline
from .store import CheckKind, bias_checks

# The checks of the methodology's programme, in order; those not built yet say so instead of "not run".
CHECKS: list[tuple[str, str, bool]] = [
    (CheckKind.POSITION, "Position bias (§6.2.1)", True),
    (CheckKind.VERBOSITY, "Verbosity (§6.2.2)", True),
    (CheckKind.TRADITION, "Tradition fairness (§6.2.3)", True),
    (CheckKind.JUDGES, "Judge comparison (§6.3.2)", True),
    (CheckKind.RUNS, "Run-to-run (§8.4)", True),
]
COMMANDS: dict[str, str] = {CheckKind.POSITION: "manage.py judge_pairwise --model M [--cases …] [--limit N]",
                            CheckKind.TRADITION: "manage.py cross_tradition_cycle … then judge_bias tradition "
                                                      "--cycle ID",
                            CheckKind.VERBOSITY: "manage.py judge_bias verbosity --run ID --cycle ID",
            CheckKind.JUDGES: "manage.py judge_bias judges --run A --run B",
            CheckKind.RUNS: "manage.py judge_bias runs --run A --run B"}


@dataclass(frozen=True)
class GridRow:
    """One dimension of the grid: its cell per tradition (None where it has no cases)."""

    dimension: str
    cells: list[ValidationCell | None]


@dataclass(frozen=True)
class CaseValidityRow:
    """Active cases of one dimension × tradition and how many of them are human-validated."""

    dimension: str
    tradition: str
    active: int
    validated: int
    share: float | None


class ValidationExportRow(TypedDict):
    """One row of the validation page's CSV/JSON export (keys in column order)."""

    part: str
    dimension: str
    tradition: str
    value: float | int | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    n_experts: int | None
    state: str
    date: str
    source: str


@dataclass
class CheckRow:
    key: str
    name: str
    state: str  # passed / failed / not run / not built yet / trial only (issue 32: too few pairs)
    computed_at: datetime | None = None
    n: int | None = None
    judge_run: int | None = None
    detail: str = ""


@dataclass
class ValidationStatus:
    cycle: CalibrationCycle | None
    snapshot: Snapshot | None
    cells: list[ValidationCell] = field(default_factory=list)
    dimensions: list[str] = field(default_factory=list)
    traditions: list[str] = field(default_factory=list)
    grid: list[GridRow] = field(default_factory=list)  # one row per dimension: its cells by tradition
    checks: list[CheckRow] = field(default_factory=list)
    n_experts: int | None = None
    # test-case review: per dimension × tradition, active cases and how many are human-validated
    case_validity: list[CaseValidityRow] = field(default_factory=list)
    cases_validated: int = 0
    cases_active: int = 0
    headline: Headline | None = None


def case_validity_rows() -> list[CaseValidityRow]:
    """Active cases per dimension × tradition and how many of them are human-validated (casereview.selectors).

    Keys as in the report's cells (dimension key, tradition key, "none" for tradition-neutral): the page shows
    names (evaluations.labels), the exports the keys."""
    validated = validated_cases()
    counts: dict[tuple[str, str], list[int]] = {}
    for pk, dimension, tradition in TestCase.objects.active().values_list("pk", "dimension", "tradition__key"):
        cell = counts.setdefault((dimension, tradition or NO_TRADITION), [0, 0])
        cell[0] += 1
        cell[1] += pk in validated
    return [CaseValidityRow(dimension=d, tradition=t, active=n, validated=v, share=v / n if n else None)
            for (d, t), (n, v) in sorted(counts.items())]


def validation_status(*, cycle: CalibrationCycle | None = None) -> ValidationStatus:
    """The newest ready snapshot (of `cycle`, else of any cycle) that carries validation cells, and the newest
    check of each kind (on that cycle's judge run when there is one; else the newest)."""
    snapshots = Snapshot.objects.of(Snapshot.Kind.CYCLE_REPORT).ready().select_related("cycle", "judge_run")
    if cycle is not None:
        snapshots = snapshots.filter(cycle=cycle)
    snapshot = next((s for s in snapshots.order_by("-finished_at", "-id")[:20] if (s.payload or {}).get("validation")),
                    None)
    status = ValidationStatus(cycle=snapshot.cycle if snapshot else cycle, snapshot=snapshot)
    if snapshot is not None:
        payload = snapshot.document
        status.cells = [tree_from_json(ValidationCell, c, f"validation[{i}]")
                        for i, c in enumerate(payload["validation"])]
        status.n_experts = payload.get("n_experts")
        status.dimensions = sorted({c.dimension for c in status.cells})
        status.traditions = sorted({c.tradition for c in status.cells})
        by_key = {(c.dimension, c.tradition): c for c in status.cells}
        status.grid = [GridRow(dimension=d, cells=[by_key.get((d, t)) for t in status.traditions])
                       for d in status.dimensions]
    status.case_validity = case_validity_rows()
    status.cases_active = sum(row.active for row in status.case_validity)
    status.cases_validated = sum(row.validated for row in status.case_validity)
    latest, trials = _latest_checks()
    for key, name, built in CHECKS:
        found = latest.get(key)
        if not built:
            status.checks.append(CheckRow(key, name, "not built yet"))
        elif found is None and key in trials:
            status.checks.append(_trial_row(key, name, trials[key]))
        elif found is None:
            status.checks.append(CheckRow(key, name, "not run", detail=COMMANDS.get(key, "")))
        else:
            status.checks.append(CheckRow(key, name, "failed" if found.flagged else "passed", found.computed_at,
                                          found.n, found.judge_run_id,
                                          f"check #{found.pk}" + (f", pairwise run {found.pairwise_run_id}"
                                                                  if found.pairwise_run_id else "")))
    failed = [latest[row.key] for row in status.checks if row.state == "failed"]
    status.headline = validation_headline(cells=status.cells, n_dimensions=len(status.dimensions),
                                          n_traditions=len(status.traditions), failed_checks=failed)
    return status


def _latest_checks() -> tuple[dict[str, Snapshot], dict[str, Snapshot]]:
    """(the newest check of each kind that is not a trial, the newest trial where no other exists). A position
    check on fewer pairs than the guardrail's minimum (issue 32) is a trial: listed on its pairwise run's page,
    never the check the status reports."""
    latest: dict[str, Snapshot] = {}
    trials: dict[str, Snapshot] = {}
    minimum = min_cases()
    for check in bias_checks().defer("payload")[:200]:
        if check.check_kind == CheckKind.POSITION and not evidence_enough(check.n, minimum=minimum):
            trials.setdefault(check.check_kind, check)
            continue
        latest.setdefault(check.check_kind, check)
    return latest, trials


def _trial_row(key: str, name: str, trial: Snapshot) -> CheckRow:
    return CheckRow(key, name, "trial only", trial.computed_at, trial.n, trial.judge_run_id,
                    f"check #{trial.pk}, pairwise run {trial.pairwise_run_id}: a trial (too few pairs judged in both "
                    f"orders; needs at least {min_cases()}): no verdict")


def validation_rows(status: ValidationStatus) -> list[ValidationExportRow]:
    """The status as flat rows for CSV/JSON: one per cell, then one per case-validity row, then one per check."""
    rows: list[ValidationExportRow] = []
    for c in status.cells:
        ci: list[float] | list[None] = c.alpha_ci or [None, None]
        rows.append({"part": "judge_alpha", "dimension": c.dimension, "tradition": c.tradition,
                     "value": c.alpha, "ci_low": ci[0], "ci_high": ci[1], "n": c.n_units,
                     "n_experts": c.n_experts, "state": c.status, "date": "",
                     "source": f"cycle {status.cycle.pk if status.cycle else ''} report v"
                               f"{status.snapshot.version if status.snapshot else ''}"})
    for row in status.case_validity:
        rows.append({"part": "cases_validated", "dimension": row.dimension, "tradition": row.tradition,
                     "value": row.validated, "ci_low": None, "ci_high": None, "n": row.active,
                     "n_experts": None, "state": "", "date": "", "source": "case review cycles"})
    for check in status.checks:
        rows.append({"part": f"check:{check.key}", "dimension": "", "tradition": "", "value": None, "ci_low": None,
                     "ci_high": None, "n": check.n, "n_experts": None, "state": check.state,
                     "date": check.computed_at.isoformat() if check.computed_at else "", "source": check.detail})
    return rows
