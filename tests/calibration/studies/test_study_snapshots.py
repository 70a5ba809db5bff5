"""A study's report is a snapshot like a cycle's: versioned, computed from one read of the rows, stored with its
files; the bundle's ratings.csv recomputes the stored report exactly and re-imports as the same study; judges get
a confusion matrix counted from the rows; groups get their own block; the PDF names study, version and hash."""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import ProtectedError

from calibration.models import Study
from calibration.studies.importing import study_import
from calibration.studies.report import (
    DimensionInfo,
    StudyProvenance,
    StudyReport,
    study_ratings_parse,
    study_report_build,
)
from calibration.studies.snapshots import study_snapshot_compute, study_snapshot_request
from evidence.models import Snapshot, SnapshotFile
from tests.calibration.reports.test_report_pdf import pdf_pages
from tests.calibration.studies.test_studies import NEWSROOM, PUBLISHED_ALPHA, hanna_like

pytestmark = pytest.mark.django_db


def _snapshot(study: Study, **options: int) -> Snapshot:
    queued = study_snapshot_request(study=study, requested_by=None, **options)
    return study_snapshot_compute(snapshot_id=queued.pk)


def _write_long(path: Path, rows: list[list[object]], *, group: bool = False) -> Path:
    header = ["study", "item", "dimension", "rater", "rater_kind", "score"] + (["group"] if group else [])
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


def test_newsroom_snapshot_stores_the_published_alpha_and_every_file() -> None:
    study_import(path=NEWSROOM, study="newsroom", fmt="judge-bench")
    study = Study.objects.get(name="newsroom")
    snapshot = _snapshot(study, n_resamples=50, seed=7)
    assert snapshot.status == Snapshot.Status.READY, snapshot.error
    assert (snapshot.version, snapshot.cycle_id, snapshot.study_id) == (1, None, study.pk)
    for metric, published in PUBLISHED_ALPHA.items():
        humans = snapshot.payload["dimensions"][metric]["humans"]
        assert abs(humans["krippendorff_alpha"] - published) < 1e-9
        low, high = humans["alpha_ci"]
        assert low < humans["krippendorff_alpha"] < high
    files = {f.format: bytes(f.content) for f in SnapshotFile.objects.filter(snapshot=snapshot)}
    assert set(files) == {"json", "csv", "pdf", "ratings", "bundle"}
    assert hashlib.sha256(files["ratings"]).hexdigest() == snapshot.input_hash
    assert json.loads(files["json"]) == snapshot.payload
    assert snapshot.input_counts == {"items": 420, "ratings": 5040, "dimensions": 4, "raters": 3, "judges": 0}
    bundle = zipfile.ZipFile(io.BytesIO(files["bundle"]))
    folder = f"faithbench-report-study-{study.pk}-v1/"
    assert sorted(n.removeprefix(folder) for n in bundle.namelist()) == sorted(
        ["README.txt", "report.json", "tables.csv", "report.pdf", "ratings.csv", "SHA256SUMS"])
    for line in bundle.read(folder + "SHA256SUMS").decode().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256(bundle.read(folder + name)).hexdigest() == digest
    assert snapshot.input_hash in bundle.read(folder + "README.txt").decode()
    table = list(csv.DictReader(io.StringIO(files["csv"].decode())))
    alpha_row = next(r for r in table if r["dimension"] == "Fluency" and r["metric"] == "krippendorff_alpha")
    assert abs(float(alpha_row["value"]) - PUBLISHED_ALPHA["Fluency"]) < 1e-9 and alpha_row["ci_low"]

    # a second version is a new row; the first is untouched; computing twice does nothing
    again = _snapshot(study, n_resamples=50, seed=7)
    assert again.version == 2 and again.input_hash == snapshot.input_hash and again.payload["dimensions"] == \
        snapshot.payload["dimensions"]
    assert study_snapshot_compute(snapshot_id=snapshot.pk).finished_at == snapshot.finished_at
    with pytest.raises(ProtectedError):
        study.delete()  # evidence outlives a study


def test_the_bundle_recomputes_the_stored_report_and_reimports_as_the_same_study(tmp_path: Path) -> None:
    long_csv, _ = hanna_like(tmp_path, rows=30)
    study_import(path=long_csv, study="hanna")
    snapshot = _snapshot(Study.objects.get(name="hanna"), n_resamples=40, seed=3)
    ratings = bytes(SnapshotFile.objects.get(snapshot=snapshot, format="ratings").content)
    dimensions = [DimensionInfo(d["key"], d["level"], d["scale_min"], d["scale_max"])
                  for d in snapshot.payload["meta"]["dimensions"]]
    stored = StudyReport.from_json(snapshot.payload).meta
    about = StudyProvenance(**{f.name: getattr(stored, f.name) for f in dataclasses.fields(StudyProvenance)})
    rebuilt = study_report_build(study_ratings_parse(ratings), dimensions=dimensions, n_resamples=40, seed=3,
                                 meta=about)
    assert rebuilt.to_json() == snapshot.payload  # the same numbers, intervals included, from the input file alone

    (tmp_path / "again.csv").write_bytes(ratings)
    summary = study_import(path=tmp_path / "again.csv", study="hanna")
    assert summary.created == 0 and summary.updated == 0 and summary.unchanged == snapshot.input_counts["ratings"]


def test_a_judges_confusion_matrix_and_the_group_blocks_are_counted_from_the_rows(tmp_path: Path) -> None:
    # 4 items, humans a,b (group east) and c,d (group west) on a 0–3 scale; the judge says 3 everywhere
    humans = {"a": [0, 1, 2, 3], "b": [0, 1, 2, 3], "c": [1, 1, 3, 3], "d": [0, 2, 2, 3]}
    groups = {"a": "east", "b": "east", "c": "west", "d": "west"}
    rows = [["s", f"i{i}", "doctrine", rater, "human", score, groups[rater]]
            for rater, scores in humans.items() for i, score in enumerate(scores)]
    rows += [["s", f"i{i}", "doctrine", "judge-x", "judge", 3, ""] for i in range(4)]
    study_import(path=_write_long(tmp_path / "s.csv", rows, group=True), study="s")
    study = Study.objects.get(name="s")
    dimension = study.dimensions.get()
    dimension.scale_min, dimension.scale_max = 0, 3
    dimension.save()
    report = _snapshot(study, n_resamples=0).payload["dimensions"]["doctrine"]
    judge = report["judges"][0]
    # lower medians of (0,0,1,0) (1,1,1,2) (2,2,3,2) (3,3,3,3) → 0, 1, 2, 3; the judge's row 3 gets them all
    assert judge["confusion"] == {"labels": [0, 1, 2, 3], "rows": "judge", "columns": "human median (lower middle)",
                                  "matrix": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]}
    assert judge["mean_signed_difference"] == pytest.approx(3 - (0.25 + 1.25 + 2.25 + 3) / 4)
    assert judge["spearman_rho"] is None  # the judge never varies: undefined, not an error
    assert set(report["groups"]) == {"east", "west"}
    assert report["groups"]["east"]["humans"]["krippendorff_alpha"] == 1.0  # a and b agree everywhere
    assert report["groups"]["west"]["n_humans"] == 2 and report["groups"]["west"]["judges"][0]["rater"] == "judge-x"


def test_the_pdf_names_study_version_and_hash_on_every_page_at_a_realistic_size(tmp_path: Path) -> None:
    # 12 dimensions × 3 judges × 2 groups: several pages
    rows = []
    for dim in range(12):
        for item in range(60):
            for rater in range(6):
                rows.append(["big", f"it-{item}", f"dimension {dim} — λόγος", f"r{rater}", "human",
                             (item + rater % 2 + dim) % 5 + 1, "A" if rater < 3 else "B"])
            for judge in range(3):
                rows.append(["big", f"it-{item}", f"dimension {dim} — λόγος", f"judge-{judge}", "judge",
                             (item + judge) % 5 + 1, ""])
    study_import(path=_write_long(tmp_path / "big.csv", rows, group=True), study="big")
    snapshot = _snapshot(Study.objects.get(name="big"), n_resamples=20)
    assert snapshot.status == Snapshot.Status.READY, snapshot.error
    pages = pdf_pages(bytes(SnapshotFile.objects.get(snapshot=snapshot, format="pdf").content))
    assert len(pages) >= 3
    for page in pages:
        assert "rating study: big" in page and f"snapshot version 1 · input hash {snapshot.input_hash}" in page
    text = "\n".join(pages)
    assert "dimension 11 — λόγος" in text and "judge-2" in text and "group B" in text
    fluency = snapshot.payload["dimensions"]["dimension 0 — λόγος"]["humans"]["krippendorff_alpha"]
    assert f"{fluency:.3f}" in text


def test_manage_py_report_study_computes_lists_and_exports(tmp_path: Path) -> None:
    long_csv, _ = hanna_like(tmp_path, rows=20)
    study_import(path=long_csv, study="hanna")
    out = io.StringIO()
    call_command("report", "--study", "hanna", "--resamples", "30", "--format", "json",
                 "--out", str(tmp_path / "r.json"), stdout=out, stderr=io.StringIO())
    assert "study" in out.getvalue() and "report v1" in out.getvalue()
    stored = Snapshot.objects.of("study_report", Study.objects.get(name="hanna").pk).get(version=1)
    assert json.loads((tmp_path / "r.json").read_bytes()) == stored.payload
    call_command("report", "--study", "hanna", "--version", "1", "--format", "bundle",
                 "--out", str(tmp_path / "b.zip"), stderr=io.StringIO())
    assert (tmp_path / "b.zip").read_bytes() == bytes(SnapshotFile.objects.get(snapshot=stored, format="bundle").content)
    listing = io.StringIO()
    call_command("report", "--list", stdout=listing)
    assert "hanna" in listing.getvalue() and stored.input_hash in listing.getvalue()
    with pytest.raises(CommandError, match="no study"):
        call_command("report", "--study", "nope")
    with pytest.raises(CommandError, match="version 9"):
        call_command("report", "--study", "hanna", "--version", "9")
    with pytest.raises(CommandError, match="not both"):
        call_command("report", "1", "--study", "hanna")
