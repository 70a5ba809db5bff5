"""Issue 32's property test for the calibrated board: random judge runs (models, judged responses per model, the
share labelled by experts) through the real builder and renderers; the artefact check passes on every board, and
finds each seeded defect — a moved estimate and an interval outside the composite's 0–1 scale in tables.csv. Few
examples (the suite's time budget); `benchmarks/artefact_check.py` runs 200."""
from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.artefact_check import BoardDesign, board_artefact
from calibration.calibrated.checks import calibrated_check
from evidence.models import Snapshot, SnapshotFile

boards = st.builds(BoardDesign, models=st.integers(2, 4), per_model=st.integers(4, 40),
                   labelled=st.floats(0.05, 0.6), seed=st.integers(0, 2**16))


def _check(files: dict[str, bytes]) -> list[str]:
    return [str(p) for p in calibrated_check(Snapshot(kind=Snapshot.Kind.CALIBRATED), files)]


def _edit(files: dict[str, bytes], column: str, value: str) -> dict[str, bytes] | None:
    rows = list(csv.DictReader(io.StringIO(files[SnapshotFile.Format.CSV].decode("utf-8"))))
    target = next((r for r in rows if r.get("board") == "judge_only" and r["lower"] and r["estimate"]), None)
    if target is None:
        return None
    target[column] = value if value else f"{float(target['estimate']) + 0.05:.6f}"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return {**files, SnapshotFile.Format.CSV: out.getvalue().encode("utf-8")}


@settings(max_examples=10, deadline=None)
@given(design=boards)
def test_artefact_check_passes_on_every_generated_calibrated_board_and_finds_seeded_defects(
        design: BoardDesign) -> None:
    files, _seconds = board_artefact(design, n_resamples=100)
    assert _check(files) == []
    moved = _edit(files, "estimate", "")
    if moved is not None:
        assert any(p.startswith("tables.csv: ") and "/judge_only: value " in p for p in _check(moved)), _check(moved)
        outside = _edit(files, "upper", "1.500000")
        assert outside is not None
        assert any("outside the figure's range" in p for p in _check(outside)), _check(outside)
