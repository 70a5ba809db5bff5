"""The study report's artefact reader (calibration/studies/checks.py) on a real study through the real builder and
renderers: clean on the newsroom study; a moved CSV number and a README that names no method are found. (Not yet
registered as the kind's check: see the module and the report of issue 32 — perfectly regular data give bootstrap
intervals of Fleiss' κ and AC1 that exclude their estimate.)"""
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
