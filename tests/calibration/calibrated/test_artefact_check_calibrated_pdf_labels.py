"""The calibrated board's PDF names cells by their labels, as the page does: the artefact check reads the PDF's text
and refuses an internal dimension or tradition key where a label exists (issue 32)."""
from __future__ import annotations

import json

import pytest

from calibration.calibrated import checks
from calibration.calibrated.files import FACET_LABELS
from evidence.models import SnapshotFile


def _files(pdf_text: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.setattr(checks, "pdf_text", lambda content: pdf_text)
    document = {"models": [{"model": "vendor/a", "by_dimension": {"doctrinal": {}, "apologetics": {}},
                            "by_tradition": {"catholic": {}, "neutral": {}}, "by_language": {"es": {}}}]}
    return {SnapshotFile.Format.JSON: json.dumps(document).encode(), SnapshotFile.Format.PDF: b"%PDF"}


def test_artefact_check_calibrated_pdf_with_an_internal_dimension_key_fails(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    files = _files("vendor/a   doctrinal   0.514   0.416   0.000–0.978", monkeypatch)
    problems = checks.calibrated_check(None, files)  # type: ignore[arg-type]
    assert [(p.file, p.figure) for p in problems] == [("report.pdf", "doctrinal")]


def test_artefact_check_calibrated_pdf_with_labels_passes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shown = " · ".join([FACET_LABELS["by_dimension"]("doctrinal"), FACET_LABELS["by_dimension"]("apologetics"),
                        FACET_LABELS["by_tradition"]("catholic"), FACET_LABELS["by_language"]("es"), "neutral"])
    assert "doctrinal" not in shown and "Spanish" in shown
    assert checks.calibrated_check(None, _files(f"vendor/a  {shown}", monkeypatch)) == []  # type: ignore[arg-type]
