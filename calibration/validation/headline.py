"""The validation page's headline: how many dimension × tradition cells the judge is validated on, how many
things fail, and for each failure a sentence saying why (read from the stored cells and checks only).

"Validated on 14 of 30 dimension × tradition cells; 3 failing — see why". A cell counts as validated when its
status is *validated* (α's interval at or above 0.80); it fails when *not validated* (α below 0.67). A check fails
when its stored result is flagged; the sentence names the groups that made it fail, with their figures.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from evaluations.labels import rubric_label, tradition_label
from evidence.models import Snapshot
from stats.bias import PositionBiasJson

from ..cycles.ratings import ValidationCell
from .payloads import (
    VerbosityGroup,
    agreement_payload,
    position_payload,
    tradition_payload,
    verbosity_payload,
)
from .store import CheckKind, check_label

ALL = "all dimensions"


@dataclass(frozen=True)
class Failure:
    what: str  # "Doctrinal Precision × Catholic", "Verbosity (§6.2.2)"
    why: str   # one or more sentences with the figures


@dataclass(frozen=True)
class Headline:
    cells: int                 # dimension × tradition positions of the grid
    validated: int
    acceptable: int
    failures: list[Failure] = field(default_factory=list)

    @property
    def text(self) -> str:
        if not self.cells:
            text = "No dimension × tradition cell has been computed yet"
        else:
            text = f"Validated on {self.validated} of {self.cells} dimension × tradition cells"
            if self.acceptable:
                text += f" ({self.acceptable} more acceptable)"
        if self.failures:
            return f"{text}; {len(self.failures)} failing"
        return f"{text}; nothing failing"


def _num(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{float(value):.{digits}f}"


def _interval(ci: Any, digits: int = 2) -> str:
    return f" [{_num(ci[0], digits)}, {_num(ci[1], digits)}]" if ci else ""


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _group_name(name: str) -> str:
    return "over all dimensions" if name == ALL else f"in {rubric_label(name)}"


def cell_failure(cell: ValidationCell) -> Failure:
    """Why a cell is not validated: its α and interval against 0.67, and what it rests on."""
    what = f"{rubric_label(cell.dimension)} × {tradition_label(cell.tradition)}"
    why = (f"The judge's α against the expert majority is {_num(cell.alpha, 3)}"
           f"{_interval(cell.alpha_ci, 3)}, below the 0.67 minimum; "
           f"{cell.n_judged} of {cell.n_units} units judged, {cell.n_experts} experts.")
    return Failure(what, why)


_Group = TypeVar("_Group", PositionBiasJson, VerbosityGroup)


def _failing_groups(groups: dict[str, _Group]) -> list[tuple[str, _Group]]:
    failing = [(name, g) for name, g in groups.items()
               if g.get("verdict") == "fail" or (name == ALL and g.get("flagged"))]
    return failing or [(name, g) for name, g in groups.items() if g.get("flagged")]


def check_failure(check: Snapshot) -> Failure:
    """Why a stored check failed, from its payload: the failing groups with their figures and the limit."""
    reasons: list[str] = []
    if check.check_kind == CheckKind.POSITION:
        position = position_payload(check)
        limit = position.get("threshold", 0.1)
        for name, p in _failing_groups(position.get("groups") or {}):
            ci = p.get("reversal_ci")
            reasons.append(f"{_cap(_group_name(name))}, {p.get('reversals', '—')} of {p.get('n_pairs', '—')} "
                           f"pairs ({_num((p.get('reversal_rate') or 0) * 100, 0)} %"
                           f"{_interval([c * 100 for c in ci], 0) if ci else ''}) "
                           f"changed their preferred answer when the order was swapped (limit {_num(limit * 100, 0)} %).")
    elif check.check_kind == CheckKind.VERBOSITY:
        verbosity = verbosity_payload(check)
        limit = verbosity.get("threshold", 0.3)
        for name, v in _failing_groups(verbosity.get("groups") or {}):
            basis = v.get("basis", "pearson")
            corr: Mapping[str, object] = (v.get("partial") if basis == "partial" else None) or v.get("pearson") or {}
            reasons.append(f"{_cap(_group_name(name))}, the judge's score follows the answer's length "
                           f"({'partial ' if basis == 'partial' else ''}r = {_num(corr.get('r'))}"
                           f"{_interval(corr.get('ci'))}, limit ±{limit}; n = {v.get('n', '—')}).")
    elif check.check_kind == CheckKind.TRADITION:
        tradition = tradition_payload(check)
        limit = tradition.get("threshold_points", 0.5)
        for t in tradition.get("groups") or []:
            interval = t.get("ci")
            clear = interval is not None and (interval[0] > limit or interval[1] < -limit)
            if t.get("flagged") and (t.get("dimension") == ALL or clear):
                reasons.append(f"{tradition_label(t.get('scoring'))} experts score {tradition_label(t.get('scored'))} "
                               f"answers {_num(t.get('mean_difference'))}{_interval(interval)} points apart from that "
                               f"tradition's own panel {_group_name(t.get('dimension', ALL))} (limit ±{limit}).")
        gap = tradition.get("judge_gap")
        for key, j in ((gap.get("traditions") or {}) if gap else {}).items():
            if j.get("flagged"):
                reasons.append(f"The judge scores {tradition_label(key)} answers "
                               f"{_num(j.get('difference_to_other_traditions'))} points apart from the other "
                               f"traditions, relative to the experts (limit ±{limit}).")
    else:  # judges, runs: agreement between runs
        agreement = agreement_payload(check)
        thresholds = agreement.get("thresholds")
        limit = thresholds.get("alpha_min", 0.67) if thresholds else 0.67
        for name, a in (agreement.get("groups") or {}).items():
            if a.get("flagged"):
                reasons.append(f"{_cap(_group_name(name))}, the runs agree with α = {_num(a.get('alpha'), 3)}"
                               f"{_interval(a.get('alpha_ci'), 3)} on {a.get('n_units', '—')} units, below {limit}.")
    if not reasons:
        reasons.append(f"Flagged; see check #{check.pk} for its figures.")
    return Failure(check_label(check), " ".join(reasons))


def validation_headline(*, cells: list[ValidationCell], n_dimensions: int, n_traditions: int,
                        failed_checks: list[Snapshot]) -> Headline:
    """The headline of the validation status: cells validated of the grid's cells, and every failure explained."""
    failures = [cell_failure(c) for c in cells if c.status == "not validated"]
    failures += [check_failure(check) for check in failed_checks]
    return Headline(cells=n_dimensions * n_traditions,
                    validated=sum(c.status == "validated" for c in cells),
                    acceptable=sum(c.status == "acceptable" for c in cells),
                    failures=failures)
