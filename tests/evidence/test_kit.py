"""The evidence kit and the registry's wiring: every kind is registered explicitly by its app's ready() (importing a
kind's module registers nothing), the generic runner loads what the kind asks for, every version — computed or
recorded — stores the software that made it, and the kit's file names and bundle are what a citation relies on."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casereview.reports import difficulty_fit_store
from evidence.kit.files import FILE_NAMES, citable_bundle, download_name
from evidence.kit.meta import software_line, software_versions
from evidence.models import Snapshot, SnapshotFile
from evidence.registry import KINDS, KindSpec
from evidence.services import snapshot_record, snapshot_run

ROOT = Path(__file__).resolve().parents[2]
APPS = ("calibration", "casereview", "delphi", "evidence", "annotations", "accounts", "evaluations", "config")


def test_every_kind_is_registered_once_the_apps_are_ready() -> None:
    assert set(KINDS) == set(Snapshot.Kind.values)


def test_kinds_are_registered_only_from_an_apps_ready_never_on_import() -> None:
    callers = sorted(
        str(path.relative_to(ROOT)) for app in APPS for path in (ROOT / app).rglob("*.py")
        if "kind_register(" in path.read_text(encoding="utf-8") and path.name not in ("apps.py", "registry.py"))
    assert callers == []


@pytest.mark.django_db
def test_the_runner_loads_the_relations_the_kind_names_with_the_snapshot(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from calibration.reports.snapshots import report_snapshot_request
    from tests.annotations.factories import world_build

    world = world_build()
    seen: dict[str, object] = {}

    def compute(snapshot: Snapshot, reporter: object) -> None:
        with CaptureQueriesContext(connection) as queries:
            seen["rubric"] = snapshot.cycle.rubric.version if snapshot.cycle else None
        seen["queries"] = len(queries)

    monkeypatch.setitem(KINDS, Snapshot.Kind.CYCLE_REPORT, KindSpec(
        kind=Snapshot.Kind.CYCLE_REPORT, compute=compute, select_related=("cycle__rubric",), page_url=lambda s: "/"))
    queued = report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    snapshot_run(snapshot_id=queued.pk)
    assert seen == {"rubric": world.cycle.rubric.version, "queries": 0}


@pytest.mark.django_db
def test_a_recorded_version_stores_the_software_that_made_it() -> None:
    fit = difficulty_fit_store(dimension="doctrinal", rotation="r1", items=3, persons=4, payload={"items": []})
    other = snapshot_record(kind=Snapshot.Kind.BIAS_CHECK, subject="verbosity/run-1", payload={"n": 1},
                            requested_by=None)
    for snapshot in (fit, other):
        snapshot.refresh_from_db()
        assert snapshot.software == software_versions()
        assert {"python", "django", "numpy", "scipy"} <= set(snapshot.software)


def test_download_names_say_what_subject_and_version() -> None:
    assert download_name(fmt=SnapshotFile.Format.PDF, stem="irr-report", subject="cycle-3", version=2) == \
        "irr-report-cycle-3-v2.pdf"
    assert download_name(fmt=SnapshotFile.Format.RATINGS, stem="irr-report", subject="study-4", version=1) == \
        "ratings-study-4-v1.csv"
    assert download_name(fmt=SnapshotFile.Format.BUNDLE, stem="calibrated-leaderboard", subject="run-9", version=5,
                         inputs_stem="inputs") == "calibrated-leaderboard-run-9-v5.zip"
    assert download_name(fmt=SnapshotFile.Format.RATINGS, stem="calibrated-leaderboard", subject="run-9", version=5,
                         inputs_stem="inputs") == "inputs-run-9-v5.csv"


def test_the_bundle_is_the_same_bytes_for_the_same_files_and_its_sums_check() -> None:
    files = {SnapshotFile.Format.JSON: b'{"a": 1}', SnapshotFile.Format.CSV: b"x\n1\n",
             SnapshotFile.Format.PDF: b"%PDF", SnapshotFile.Format.RATINGS: b"r\n"}
    first = citable_bundle(files=files, names=FILE_NAMES, readme="read me", folder="b", extra={"more.csv": b"m"})
    assert first == citable_bundle(files=files, names=FILE_NAMES, readme="read me", folder="b",
                                   extra={"more.csv": b"m"})
    archive = zipfile.ZipFile(io.BytesIO(first))
    assert archive.namelist() == ["b/README.txt", "b/report.json", "b/tables.csv", "b/report.pdf", "b/ratings.csv",
                                  "b/more.csv", "b/SHA256SUMS"]
    sums = dict(reversed(line.split("  ")) for line in archive.read("b/SHA256SUMS").decode().splitlines())
    assert sums == {name.removeprefix("b/"): hashlib.sha256(archive.read(name)).hexdigest()
                    for name in archive.namelist() if name not in ("b/README.txt", "b/SHA256SUMS")}


def test_the_software_line_names_each_version_sorted() -> None:
    assert software_line({"numpy": "2.1", "django": "5.2"}) == "django 5.2, numpy 2.1"
    assert software_line(None) == ""
