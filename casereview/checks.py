"""The artefact checks of case review's recorded kinds (`evidence.kit.checker`), registered by CaseReviewConfig.ready
through the kinds in `reports.py`: an agreement report's α per field with its bootstrap interval (α ≤ 1, the
interval holding α, none from fewer than two cases with two or more reviews), an IRT fit's abilities with their
intervals (holding θ). Both kinds are one stored JSON document, so the payload is the file read."""
from __future__ import annotations

from collections.abc import Mapping

from evidence.kit.checker import IntervalRule, Problem, artefact_check, payload_reading
from evidence.models import Snapshot

ALPHA = (float("-inf"), 1.0)  # α is not bounded below on small data (calibration/reports/checks.py says why)
REVIEW_RULES = (IntervalRule("alpha", "interval", ALPHA, n="units", min_n=2),)
IRT_RULES = (IntervalRule("theta", "interval"),)


def review_report_check(snapshot: Snapshot, files: Mapping[str, bytes], *,
                        tree: object | None = None) -> list[Problem]:
    """A case-review agreement report's check (its KindSpec.check): the stored payload (or the one being stored)."""
    return artefact_check([payload_reading(snapshot.payload if tree is None else tree, REVIEW_RULES)])


def irt_fit_check(snapshot: Snapshot, files: Mapping[str, bytes], *, tree: object | None = None) -> list[Problem]:
    """An IRT fit's check (its KindSpec.check): every ability's interval holds its θ."""
    return artefact_check([payload_reading(snapshot.payload if tree is None else tree, IRT_RULES)])
