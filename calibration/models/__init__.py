"""The calibration app's models, one module per area, imported here by name so Django registers them.

`delphi`: Delphi studies, rounds, responses and allocations (rubric weights by expert consensus).
`studies`: external rating studies (ratings imported from outside the app).
Panels, cycles and their items belong to `annotations` (the work experts score); calibration holds the
processes over them (sampling, adjudication rules, reliability reports, Delphi). Every computed artefact
(reports, leaderboards, case-review reports, IRT fits, bias checks) is an `evidence.Snapshot`.
"""
from .delphi import (
    DEFAULT_PLANNED_ROUNDS,
    DEFAULT_THRESHOLD,
    METHODOLOGY_MIN_PANELISTS,
    DelphiAllocation,
    DelphiResponse,
    DelphiRound,
    DelphiStudy,
)
from .studies import Study, StudyDimension, StudyItem, StudyJudgeRun, StudyRater, StudyScore

__all__ = [
    "DEFAULT_PLANNED_ROUNDS", "DEFAULT_THRESHOLD", "METHODOLOGY_MIN_PANELISTS", "DelphiAllocation",
    "DelphiResponse", "DelphiRound", "DelphiStudy", "Study", "StudyDimension",
    "StudyItem", "StudyJudgeRun", "StudyRater", "StudyScore",
]
