"""The calibration app's models, one module per area, imported here by name so Django registers them.

`studies`: external rating studies (ratings imported from outside the app).
Panels, cycles and their items belong to `annotations` (the work experts score); calibration holds the
processes over them (sampling, adjudication rules, reliability reports); Delphi studies are the `delphi` app's.
Every computed artefact (reports, leaderboards, case-review reports, IRT fits, bias checks) is an `evidence.Snapshot`.
"""
from .studies import Study, StudyDimension, StudyItem, StudyJudgeRun, StudyRater, StudyScore

__all__ = [
    "Study", "StudyDimension",
    "StudyItem", "StudyJudgeRun", "StudyRater", "StudyScore",
]
