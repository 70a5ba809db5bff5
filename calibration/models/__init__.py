"""The calibration app's models, one module per area, imported here by name so Django registers them.

`casereview`: case-review agreement reports and IRT difficulty fits (test validity).
`snapshots`: immutable, versioned report snapshots and their stored files.
`studies`: external rating studies (ratings imported from outside the app).
`validation`: results of the judge validation programme (bias checks).
Panels, cycles and their items belong to `annotations` (the work experts score); calibration holds the
processes over them (sampling, adjudication rules, reliability reports); Delphi studies are the `delphi` app's.
"""
from .casereview import CaseReviewReport, DifficultyFit
from .snapshots import ReportSnapshot, SnapshotFile
from .studies import Study, StudyDimension, StudyItem, StudyJudgeRun, StudyRater, StudyScore
from .validation import BiasCheck

__all__ = [
    "BiasCheck", "CaseReviewReport", "DifficultyFit", "ReportSnapshot", "SnapshotFile", "Study", "StudyDimension",
    "StudyItem", "StudyJudgeRun", "StudyRater", "StudyScore",
]
