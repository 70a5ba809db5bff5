"""The cycle report's page read by the artefact checker (calibration/reports/checks.py `page_reading`): the body a
reader's browser shows, rendered from the tree as the page renders it, agrees with report.json; a moved number and a
wrong method label on the page are found."""
from __future__ import annotations

import json
import re

from calibration.reports.checks import json_reading, page_body, page_reading
from calibration.reports.schema import Report
from evidence.kit.checker import artefact_check
from evidence.models import Snapshot, SnapshotFile
from tests.calibration.reports.test_artefact_check_report import _artefact


def test_artefact_check_reads_the_report_page_and_finds_a_moved_page_number_and_method() -> None:
    files = _artefact(n_resamples=200)
    report = Report.from_json(json.loads(files[SnapshotFile.Format.JSON]))
    body = page_body(Snapshot(kind=Snapshot.Kind.CYCLE_REPORT, subject="1", version=1), report)
    page = page_reading(body, report)
    keys = {figure.key for figure in page.figures}
    assert "overall:all/experts/krippendorff_alpha" in keys and len(keys) >= 8
    assert artefact_check([json_reading(report), page]) == []

    alpha = next(f for f in page.figures if f.key == "overall:all/experts/krippendorff_alpha")
    shown = f"{alpha.value:.3f}"
    row = re.search(r"<tr><td>Krippendorff&#x27;s α \(ordinal\)</td><td class=\"num\">" + re.escape(shown), body)
    assert row is not None
    moved = body[:row.start()] + row.group(0).replace(shown, f"{alpha.value + 0.02:.3f}") + body[row.end():]
    problems = [str(p) for p in artefact_check([json_reading(report), page_reading(moved, report)])]
    assert any(p.startswith("page: overall:all/experts/krippendorff_alpha: value ") for p in problems), problems

    assert alpha.method in ("BCa", "percentile")
    other = "percentile" if alpha.method == "BCa" else "BCa"
    tail = body[row.end():]
    cell = f"<td>{alpha.method}</td>"
    relabelled = body[:row.end()] + tail.replace(cell, f"<td>{other}</td>", 1)
    problems = [str(p) for p in artefact_check([json_reading(report), page_reading(relabelled, report)])]
    assert any(p.startswith("page: overall:all/experts/krippendorff_alpha: method ") for p in problems), problems
