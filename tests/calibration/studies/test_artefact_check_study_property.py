"""Issue 32's property test for study reports: random studies (sizes, scale, level, noise, regular disagreement,
rater groups, judges) through the real builder and renderers; the artefact check passes on every one, and finds each
seeded defect — a moved number, a wrong method label, an interval outside its range. Few examples (the suite's time
budget); `benchmarks/artefact_check.py` runs 200."""
from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.artefact_check import StudyDesign, study_artefact
from calibration.studies.checks import study_check
from evidence.kit.checker import bundle_members
from evidence.models import Snapshot, SnapshotFile

designs = st.builds(
    StudyDesign, n_items=st.integers(3, 30), n_humans=st.integers(2, 4), n_judges=st.integers(0, 2),
    n_categories=st.integers(2, 5), level=st.sampled_from(["nominal", "ordinal", "interval"]),
    noise=st.floats(0.0, 0.6), shift=st.sampled_from([0, 1, 2]), groups=st.booleans(), seed=st.integers(0, 2**16))


def _check(files: dict[str, bytes]) -> list[str]:
    return [str(p) for p in study_check(Snapshot(kind=Snapshot.Kind.STUDY_REPORT), files)]


def _csv_edit(files: dict[str, bytes], edit) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    rows = list(csv.DictReader(io.StringIO(files[SnapshotFile.Format.CSV].decode("utf-8"))))
    target = next((r for r in rows if r["comparison"] == "humans" and r["ci_low"]), None)
    if target is None:
        return files
    edit(target)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return {**files, SnapshotFile.Format.CSV: buffer.getvalue().encode("utf-8")}


def _readme_edit(files: dict[str, bytes], old: str, new: str) -> dict[str, bytes]:
    members = bundle_members(files[SnapshotFile.Format.BUNDLE])
    readme = members.pop("README.txt").decode("utf-8")
    start = readme.find("95 % intervals: ")
    line_end = readme.find("\n", start)
    readme = readme[:start] + readme[start:line_end].replace(old, new) + readme[line_end:]
    return {**files, SnapshotFile.Format.BUNDLE: _zip({"README.txt": readme.encode("utf-8"), **members})}

def _zip(members: dict[str, bytes]) -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(f"edited/{name}", content)
    return buffer.getvalue()


@settings(max_examples=12, deadline=None)
@given(design=designs)
def test_artefact_check_passes_on_every_generated_study_and_finds_seeded_defects(design: StudyDesign) -> None:
    files, _seconds = study_artefact(design, n_resamples=100)
    assert _check(files) == []

    def moved(row: dict[str, str]) -> None:
        row["value"] = repr(float(row["value"]) + 0.05)

    problems = _check(_csv_edit(files, moved))
    has_interval = any(",humans," in line and line.split(",")[5]
                       for line in files[SnapshotFile.Format.CSV].decode("utf-8").splitlines()[1:])
    if has_interval:
        assert any(p.startswith("tables.csv: ") and ": value " in p for p in problems), problems

        def outside(row: dict[str, str]) -> None:
            row["ci_high"] = "1.5"

        problems = _check(_csv_edit(files, outside))
        assert any("outside the figure's range" in p for p in problems), problems

        readme = bundle_members(files[SnapshotFile.Format.BUNDLE])["README.txt"].decode("utf-8")
        line = readme[readme.find("95 % intervals: "):].splitlines()[0]
        stated = line.removeprefix("95 % intervals: ")
        wrong = "95 % intervals: " + ("percentile" if "percentile" not in stated else "BCa" if "BCa" not in stated
                                      else "Wilson")  # a label its rows do not use
        problems = _check(_readme_edit(files, line, wrong))
        assert any(p.startswith("README.txt: interval method: ") for p in problems), problems


def test_artefact_check_study_pdf_rows_are_read_and_a_moved_pdf_number_or_method_is_found() -> None:
    import json

    from calibration.studies.checks import json_reading, pdf_reading
    from evidence.kit.checker import artefact_check, pdf_text

    files, _seconds = study_artefact(StudyDesign(30, 4, 1, 4, "ordinal", 0.3, 0, True, 3), n_resamples=100)
    document = json.loads(files[SnapshotFile.Format.JSON])
    text = pdf_text(files[SnapshotFile.Format.PDF])
    pdf = pdf_reading(text, document)
    assert len(pdf.figures) == 21  # 7 coefficients × (all raters, group A, group B)
    assert artefact_check([json_reading(document), pdf]) == []
    line = next(row for row in text.splitlines() if "all raters" in row and "Krippendorff's α" in row)
    value = line.split()[4]
    moved = text.replace(line, line.replace(value, f"{float(value) + 0.01:.3f}", 1))
    problems = [str(p) for p in artefact_check([json_reading(document), pdf_reading(moved, document)])]
    assert problems and problems[0].startswith("report.pdf: fluency//humans/krippendorff_alpha: value ")
    relabelled = text.replace(line, line.replace("BCa", "percentile") if "BCa" in line else
                              line.replace("percentile", "BCa"))
    problems = [str(p) for p in artefact_check([json_reading(document), pdf_reading(relabelled, document)])]
    assert any(": method " in p for p in problems), problems
