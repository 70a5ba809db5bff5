"""The study report's artefact reader (calibration/studies/checks.py) on a real study through the real builder and
renderers: clean on the newsroom study; a moved CSV number and a README that names no method are found; registered
as the kind's check, it passes a regularly disagreeing study whose κ and AC1 intervals used to exclude their
estimate (stats.bootstrap.edge_reason)."""
from __future__ import annotations

import pytest

from calibration.models import Study
from calibration.studies.checks import study_check
from calibration.studies.importing import study_import
from evidence.kit.checker import bundle_members
from evidence.models import Snapshot, SnapshotFile
from tests.calibration.studies.test_studies import NEWSROOM
from tests.calibration.studies.test_study_snapshots import _snapshot

pytestmark = pytest.mark.django_db


def test_artefact_check_a_study_report_reads_clean_and_finds_a_moved_number() -> None:
    study_import(path=NEWSROOM, study="newsroom", fmt="judge-bench")
    snapshot = _snapshot(Study.objects.get(name="newsroom"), n_resamples=50, seed=7)
    files = {f.format: bytes(f.content) for f in SnapshotFile.objects.filter(snapshot=snapshot)}
    assert study_check(snapshot, files) == []
    readme = bundle_members(files[SnapshotFile.Format.BUNDLE])["README.txt"].decode("utf-8")
    assert "95 % intervals: " in readme and ("BCa" in readme or "percentile" in readme)

    lines = files[SnapshotFile.Format.CSV].decode("utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if ",humans,krippendorff_alpha," in line)
    cells = lines[index].split(",")
    cells[4] = repr(float(cells[4]) + 0.01)
    lines[index] = ",".join(cells)
    moved = {**files, SnapshotFile.Format.CSV: ("\n".join(lines) + "\n").encode("utf-8")}
    problems = [str(p) for p in study_check(Snapshot(kind=Snapshot.Kind.STUDY_REPORT), moved)]
    assert len(problems) == 1 and problems[0].startswith("tables.csv: ") and "/humans/krippendorff_alpha: value" in \
        problems[0]


def test_artefact_check_is_registered_and_a_regularly_disagreeing_study_is_stored_ready(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The case that kept the reader unregistered: two raters, rater 2 always one category above rater 1, categories
    used equally. Its AC1 and Fleiss' κ bootstrap intervals would exclude their estimates; now they are words, and
    the version passes its check at the end of the compute."""
    from evidence.registry import kind_spec
    from tests.calibration.studies.test_study_snapshots import _write_long

    assert kind_spec(Snapshot.Kind.STUDY_REPORT).check is study_check
    rows = [["shifted", f"it-{i}", "fluency", rater, "human", (i + shift) % 4 + 1]
            for i in range(20) for rater, shift in (("r1", 0), ("r2", 1))]
    study_import(path=_write_long(tmp_path / "shifted.csv", rows), study="shifted")
    # seed 11: ~2.4 % of resamples equal the estimate, the rest lie above it, and the percentile's 2.5 % end is
    # interpolated past it ([-0.3326, -0.3072] around AC1 = -1/3 before the fix)
    snapshot = _snapshot(Study.objects.get(name="shifted"), n_resamples=1000, seed=11)
    assert snapshot.status == Snapshot.Status.READY and snapshot.checks == []
    humans = snapshot.payload["dimensions"]["fluency"]["humans"]
    assert humans["gwet_ac1"] == pytest.approx(-1 / 3)
    assert humans["intervals"]["gwet_ac1"]["low"] is None
    assert "bootstrap replicates lie above the estimate" in humans["intervals"]["gwet_ac1"]["reason"]
    for name, entry in humans["intervals"].items():
        value = humans.get(name)
        if entry and entry["low"] is not None and isinstance(value, float):
            assert entry["low"] - 1e-9 <= value <= entry["high"] + 1e-9, name
