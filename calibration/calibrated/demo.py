"""The demo's calibrated leaderboard: the demo judge run corrected by the demo cycle's expert scores (idempotent)."""
from __future__ import annotations

from annotations.models import CalibrationCycle
from evaluations.judge.selectors import judge_run_latest_finished
from evidence.models import Snapshot

from .selectors import calibrated_label_cycles
from .snapshots import calibrated_snapshot_compute, calibrated_snapshot_request


def demo_calibrated_snapshot_create() -> Snapshot | None:
    """Version 1 of the calibrated leaderboard of the demo's newest finished run, computed now (about a second)."""
    run = judge_run_latest_finished()
    if run is None or Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).exists():
        return None
    cycle: CalibrationCycle | None = calibrated_label_cycles(run=run).first()
    if cycle is None:
        return None
    snapshot = calibrated_snapshot_request(run=run, cycle=cycle, requested_by=None)
    return calibrated_snapshot_compute(snapshot_id=snapshot.pk)
