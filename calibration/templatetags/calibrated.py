"""`{% calibrated_evidence cycle %}`: the evidence meter of the calibrated leaderboard on a cycle's page.

The cycle page belongs to `calibration.cycles`, which sits below `calibration.calibrated` (the leaderboard reads the
cycles' truth rule); the page's template asks for the box by name, so the cycles room never imports the room above.
"""
from __future__ import annotations

from django import template

from annotations.models import CalibrationCycle

from ..calibrated.selectors import EvidenceSummary, calibrated_evidence_for_cycle

register = template.Library()


@register.inclusion_tag("calibration/calibrated/_evidence.html")
def calibrated_evidence(cycle: CalibrationCycle) -> dict[str, EvidenceSummary | None]:
    """The newest calibrated leaderboard that used `cycle`'s expert scores (nothing when there is none)."""
    return {"evidence": calibrated_evidence_for_cycle(cycle=cycle)}
