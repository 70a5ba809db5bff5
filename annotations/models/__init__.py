"""The annotations app's models, one module per area, imported here by name so Django registers them.

`cycles`: panels of experts, calibration cycles, their drawn items and their lifecycle audit trail.
`scoring`: assignments of items to experts, their blind annotations, sub-dimension scores, audit events.
`adjudication`: gold decisions on disagreed items and their scores.
`receipts`: stored scoring writes by idempotency key, so a retried save is answered, not run twice.
"""
from .adjudication import AdjudicationDecision, GoldScore
from .cycles import (
    DEFAULT_MIN_PANEL_SIZE,
    CalibrationCycle,
    CycleEvent,
    CycleItem,
    Panel,
    retest_min_days_default,
    retest_settings_errors,
    retest_share_default,
)
from .receipts import SaveReceipt
from .scoring import Annotation, AnnotationEvent, Assignment, SubScore, public_id_new

__all__ = [
    "DEFAULT_MIN_PANEL_SIZE", "AdjudicationDecision", "Annotation", "AnnotationEvent", "Assignment",
    "SaveReceipt",
    "CalibrationCycle", "CycleEvent", "CycleItem", "GoldScore", "Panel", "SubScore", "public_id_new",
    "retest_min_days_default", "retest_settings_errors", "retest_share_default",
]
