"""The cycle report through the real builder and renderers, read back by the artefact checker
(calibration/reports/checks.py): every generated artefact passes, each seeded defect is found, and the demo's
two defects (README.txt naming "percentile" while BCa was used; the PDF's raw sub-dimension keys) stay fixed.

Property test: 12 examples in the suite; `ARTEFACT_CHECK_EXAMPLES=200` runs the issue's 200 generated artefacts
(benchmarks/README.md)."""
from __future__ import annotations

import csv
import io
import os
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.reports.checks import report_check
from calibration.reports.snapshots import snapshot_files_render
from evidence.kit.checker import bundle_members, pdf_text
from evidence.models import Snapshot, SnapshotFile
from tests.calibration.synthetic import synthetic_cycle

Files = dict[str, bytes]
EXAMPLES = int(os.environ.get("ARTEFACT_CHECK_EXAMPLES", "12"))


def _artefact(*, n_traditions: int = 2, extra_raters: int = 1, n_dimensions: int = 1, items: int = 3,
              missing: float = 0.1, seed: int = 5, n_resamples: int = 200) -> Files:
    cycle = synthetic_cycle(n_raters=2 * n_traditions + extra_raters, n_dimensions=n_dimensions,
                            n_traditions=n_traditions, items_per_cell=items, missing_share=missing, seed=seed,
                            cycle_name="Property cycle")
    report = cycle.report(n_resamples=n_resamples, seed=seed)
    snapshot = Snapshot(kind=Snapshot.Kind.CYCLE_REPORT, subject="1", version=1)
    return snapshot_files_render(report=report, ratings=b"item\n", snapshot=snapshot, input_hash="0" * 64)


def _check(files: Files) -> list[str]:
    return [str(p) for p in report_check(Snapshot(kind=Snapshot.Kind.CYCLE_REPORT), files)]


def _bundle_with(files: Files, name: str, content: bytes) -> bytes:
    members = bundle_members(files[SnapshotFile.Format.BUNDLE])
    members[name] = content
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in members.items():
            archive.writestr(f"bundle/{member}", data)
    return buffer.getvalue()


def _csv_edit(files: Files, edit: dict[str, str], where: dict[str, str]) -> Files:
    rows = list(csv.DictReader(io.StringIO(files[SnapshotFile.Format.CSV].decode("utf-8"))))
    target = next(row for row in rows if all(row[k] == v for k, v in where.items()) and row["ci_low"])
    target.update(edit)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return {**files, SnapshotFile.Format.CSV: out.getvalue().encode("utf-8")}


@pytest.fixture(scope="module")
def artefact() -> Files:
    return _artefact(n_dimensions=2, items=4)


def test_artefact_check_passes_a_report_from_the_real_builder_and_renderers(artefact: Files) -> None:
    assert _check(artefact) == []


def test_artefact_check_readme_names_bca_where_bca_was_used(artefact: Files) -> None:
    """The demo's defect: "95 % percentile intervals" while tables.csv said ci_method=bca on most rows."""
    readme = bundle_members(artefact[SnapshotFile.Format.BUNDLE])["README.txt"].decode("utf-8")
    methods = {row["ci_method"] for row in csv.DictReader(io.StringIO(artefact["csv"].decode("utf-8")))} - {""}
    assert "bca" in methods
    assert "BCa" in readme and "95 % percentile intervals" not in readme
    as_before = readme.replace(readme[readme.index("95 % intervals"):readme.index("\n", readme.index("Bootstrap:"))],
                               "95 % percentile intervals")
    problems = _check({**artefact, "bundle": _bundle_with(artefact, "README.txt", as_before.encode("utf-8"))})
    assert "README.txt: interval method: BCa intervals are reported but the file does not name BCa" in problems


def test_artefact_check_pdf_shows_labels_not_keys(artefact: Files) -> None:
    """The demo's defect: the PDF said "sub dimension: allusionDetection" where the page says the label."""
    text = pdf_text(artefact[SnapshotFile.Format.PDF])
    assert "Sub-dimension: Lexical Accuracy" in " ".join(text.split())
    assert "lexicalAccuracy" not in text and "sub dimension:" not in text


def test_artefact_check_finds_a_moved_number_in_the_csv(artefact: Files) -> None:
    where = {"group_kind": "overall", "comparison": "experts", "metric": "krippendorff_alpha"}
    row = next(r for r in csv.DictReader(io.StringIO(artefact["csv"].decode("utf-8")))
               if all(r[k] == v for k, v in where.items()))
    moved = _csv_edit(artefact, {"value": f"{float(row['value']) + 0.01:.6f}"}, where)
    assert any(p.startswith("tables.csv: overall:all/experts/krippendorff_alpha: value") for p in _check(moved))


def test_artefact_check_finds_a_wrong_method_label_in_the_csv(artefact: Files) -> None:
    where = {"group_kind": "overall", "comparison": "experts", "ci_method": "bca"}
    wrong = _csv_edit(artefact, {"ci_method": "percentile"}, where)
    assert any("method percentile where report.json has BCa" in p for p in _check(wrong))


def test_artefact_check_finds_an_interval_outside_its_range(artefact: Files) -> None:
    where = {"group_kind": "overall", "comparison": "experts", "metric": "krippendorff_alpha"}
    outside = _csv_edit(artefact, {"ci_high": "1.200000"}, where)
    assert any(p.startswith("tables.csv: overall:all/experts/krippendorff_alpha: interval [") and
               "lies outside the figure's range" in p for p in _check(outside))


def test_artefact_check_finds_a_changed_figure_in_the_pdf(artefact: Files) -> None:
    """The PDF is read as printed: a report whose PDF was made from other numbers fails."""
    other = _artefact(n_dimensions=2, items=4, seed=6)
    mixed = {**artefact, SnapshotFile.Format.PDF: other[SnapshotFile.Format.PDF]}
    assert any(p.startswith("report.pdf: ") for p in _check(mixed))


@pytest.mark.simulation
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_traditions=st.integers(1, 3), extra_raters=st.integers(0, 3), n_dimensions=st.integers(1, 2),
       items=st.integers(1, 3), missing=st.sampled_from([0.0, 0.2, 0.5]), seed=st.integers(0, 10_000))
def test_artefact_check_passes_every_generated_cycle_report(n_traditions: int, extra_raters: int, n_dimensions: int,
                                                           items: int, missing: float, seed: int) -> None:
    files = _artefact(n_traditions=n_traditions, extra_raters=extra_raters, n_dimensions=n_dimensions, items=items,
                      missing=missing, seed=seed, n_resamples=100)
    assert _check(files) == []
