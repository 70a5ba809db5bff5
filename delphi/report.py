"""The Delphi study report: everything about a study as plain data (staff only: allocations are named)."""
from __future__ import annotations

from .models import DelphiStudy
from .schema import DelphiReport, ReportRound
from .selectors import named_allocations, study_warnings, weight_structure


def delphi_report_build(*, study: DelphiStudy) -> DelphiReport:
    """Settings, warnings, weights, every round (statistics and named allocations), the proposal and re-scoring."""
    structure = weight_structure(rubric=study.rubric)
    rounds: list[ReportRound] = []
    for r in study.rounds.order_by("number"):
        rounds.append({"number": r.number, "status": r.status, "opened_at": r.opened_at, "closed_at": r.closed_at,
                       "invited": r.invited, "responded": r.responded, "converged": r.converged,
                       "summary": r.summary, "allocations": named_allocations(round=r, structure=structure)})
    return {
        "study": {"id": study.pk, "name": study.name, "tradition": study.tradition.key if study.tradition else None,
                  "rubric": study.rubric.version, "planned_rounds": study.planned_rounds,
                  "convergence_threshold": str(study.convergence_threshold), "status": study.status,
                  "converged": study.converged, "panelists": study.panelists.count(),
                  "proposed_rubric": study.proposed_rubric.version if study.proposed_rubric else None},
        "warnings": study_warnings(study=study),
        "weights": [{"key": f.key, "name": f.name, "current": str(f.current)} for f in structure.fields],
        "rounds": rounds,
        "proposal": study.proposal,
        "rescoring": study.rescoring,
    }
