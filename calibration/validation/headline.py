"""The validation page's headline: how many dimension × tradition cells the judge is validated on, how many
things fail, and for each failure a sentence saying why (read from the stored cells and checks only).

"Validated on 14 of 30 dimension × tradition cells; 3 failing — see why". A cell counts as validated when its
status is *validated* (α's interval at or above 0.80); it fails when *not validated* (α below 0.67). A check fails
when its stored result is flagged; the sentence names the groups that made it fail, with their figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluations.labels import rubric_label, tradition_label
from evidence.models import Snapshot

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


def cell_failure(cell: dict[str, Any]) -> Failure:
    """Why a cell is not validated: its α and interval against 0.67, and what it rests on."""
    what = f"{rubric_label(cell['dimension'])} × {tradition_label(cell['tradition'])}"
    why = (f"The judge's α against the expert majority is {_num(cell.get('alpha'), 3)}"
           f"{_interval(cell.get('alpha_ci'), 3)}, below the 0.67 minimum; "
           f"{cell.get('n_judged', '—')} of {cell.get('n_units', '—')} units judged, "
           f"{cell.get('n_experts', '—')} experts.")
    return Failure(what, why)


def _dict_groups(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    groups = payload.get("groups") or {}
    failing = [(name, g) for name, g in groups.items()
               if g.get("verdict") == "fail" or (name == ALL and g.get("flagged"))]
    return failing or [(name, g) for name, g in groups.items() if g.get("flagged")]


def check_failure(check: Snapshot) -> Failure:
    """Why a stored check failed, from its payload: the failing groups with their figures and the limit."""
    payload: dict[str, Any] = check.payload or {}
    reasons: list[str] = []
    if check.check_kind == CheckKind.POSITION:
        limit = payload.get("threshold", 0.1)
        for name, g in _dict_groups(payload):
            reasons.append(f"{_cap(_group_name(name))}, {g.get('reversals', '—')} of {g.get('n_pairs', '—')} "
                           f"pairs ({_num((g.get('reversal_rate') or 0) * 100, 0)} %"
                           f"{_interval([c * 100 for c in g['reversal_ci']], 0) if g.get('reversal_ci') else ''}) "
                           f"changed their preferred answer when the order was swapped (limit {_num(limit * 100, 0)} %).")
    elif check.check_kind == CheckKind.VERBOSITY:
        limit = payload.get("threshold", 0.3)
        for name, g in _dict_groups(payload):
            basis = g.get("basis", "pearson")
            corr = g.get(basis) or g.get("pearson") or {}
            reasons.append(f"{_cap(_group_name(name))}, the judge's score follows the answer's length "
                           f"({'partial ' if basis == 'partial' else ''}r = {_num(corr.get('r'))}"
                           f"{_interval(corr.get('ci'))}, limit ±{limit}; n = {g.get('n', '—')}).")
    elif check.check_kind == CheckKind.TRADITION:
        limit = payload.get("threshold_points", 0.5)
        for g in payload.get("groups") or []:
            ci = g.get("ci")
            clear = ci is not None and (ci[0] > limit or ci[1] < -limit)
            if g.get("flagged") and (g.get("dimension") == ALL or clear):
                reasons.append(f"{tradition_label(g.get('scoring'))} experts score {tradition_label(g.get('scored'))} "
                               f"answers {_num(g.get('mean_difference'))}{_interval(ci)} points apart from that "
                               f"tradition's own panel {_group_name(g.get('dimension', ALL))} (limit ±{limit}).")
        gap = payload.get("judge_gap") or {}
        for key, t in (gap.get("traditions") or {}).items():
            if t.get("flagged"):
                reasons.append(f"The judge scores {tradition_label(key)} answers "
                               f"{_num(t.get('difference_to_other_traditions'))} points apart from the other "
                               f"traditions, relative to the experts (limit ±{limit}).")
    else:  # judges, runs: agreement between runs
        limit = (payload.get("thresholds") or {}).get("alpha_min", 0.67)
        for name, g in (payload.get("groups") or {}).items():
            if g.get("flagged"):
                reasons.append(f"{_cap(_group_name(name))}, the runs agree with α = {_num(g.get('alpha'), 3)}"
                               f"{_interval(g.get('alpha_ci'), 3)} on {g.get('n_units', '—')} units, below {limit}.")
    if not reasons:
        reasons.append(f"Flagged; see check #{check.pk} for its figures.")
    return Failure(check_label(check), " ".join(reasons))


def validation_headline(*, cells: list[dict[str, Any]], n_dimensions: int, n_traditions: int,
                        failed_checks: list[Snapshot]) -> Headline:
    """The headline of the validation status: cells validated of the grid's cells, and every failure explained."""
    failures = [cell_failure(c) for c in cells if c.get("status") == "not validated"]
    failures += [check_failure(check) for check in failed_checks]
    return Headline(cells=n_dimensions * n_traditions,
                    validated=sum(c.get("status") == "validated" for c in cells),
                    acceptable=sum(c.get("status") == "acceptable" for c in cells),
                    failures=failures)
