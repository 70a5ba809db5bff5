"""The artefact checker at the end of every compute and on stored versions: a computed cycle report is checked
before it is stored (clean → ready; contradicted → *failed checks* with the list, never downloadable), and
`manage.py check_artefact` exits 0 on a clean version and 1 naming the figure and file on an edited bundle."""
from __future__ import annotations

import io
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from evidence.models import Snapshot, SnapshotFile
from tests.calibration.reports.test_report_views import scored_world


@pytest.fixture
def scored(db, immediate_tasks):  # type: ignore[no-untyped-def]
    return scored_world()


def compute(client, cycle) -> Snapshot:  # type: ignore[no-untyped-def]
    """A new version through the page, computed on commit (whatever its status)."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("calibration:report_compute", args=[cycle.pk]),
                               {"seed": 7, "n_resamples": 200})
    assert response.status_code == 302, response.content.decode()[:2000]
    found = Snapshot.objects.filter(cycle=cycle).order_by("-version").first()
    assert found is not None
    return found


def _edited_bundle(bundle: bytes, name: str, old: bytes, new: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(bundle))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            data = source.read(info)
            archive.writestr(info, data.replace(old, new, 1) if info.filename.endswith("/" + name) else data)
    return out.getvalue()


def test_artefact_check_a_computed_report_is_checked_and_stored_ready(scored, client, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    world, _ = scored
    client.force_login(world.admin)
    snapshot = compute(client, world.cycle)
    assert snapshot.status == Snapshot.Status.READY and snapshot.checks == []
    call_command("check_artefact", str(snapshot.pk))
    assert "clean" in capsys.readouterr().out

    bundle = bytes(SnapshotFile.objects.get(snapshot=snapshot, format="bundle").content)
    csv_text = zipfile.ZipFile(io.BytesIO(bundle)).read(
        next(n for n in zipfile.ZipFile(io.BytesIO(bundle)).namelist() if n.endswith("/tables.csv"))).decode()
    row = next(line for line in csv_text.splitlines() if line.startswith("overall,all,experts,krippendorff_alpha,"))
    value = row.split(",")[4]
    moved = f"{float(value) + 0.05:.6f}"
    edited = tmp_path / "edited.zip"
    edited.write_bytes(_edited_bundle(bundle, "tables.csv", f"krippendorff_alpha,{value},".encode(),
                                      f"krippendorff_alpha,{moved},".encode()))
    with pytest.raises(SystemExit) as exit_status:
        call_command("check_artefact", str(snapshot.pk), "--bundle", str(edited))
    assert exit_status.value.code == 1
    out = capsys.readouterr().out
    assert f"tables.csv: overall:all/experts/krippendorff_alpha: value {float(moved)}" in out


def test_artefact_check_a_contradicted_version_is_stored_as_failed_checks_and_never_served(  # type: ignore[no-untyped-def]
        scored, client, monkeypatch) -> None:
    """A version whose README names a method its rows did not use is kept for admins, with the list; its
    downloads and the API refuse it, and the page's default stays the newest clean version."""
    world, _ = scored
    client.force_login(world.admin)
    clean = compute(client, world.cycle)
    from calibration.reports import snapshots

    monkeypatch.setattr(snapshots, "methods_sentence", lambda methods: "percentile")
    failed = compute(client, world.cycle)
    assert failed.status == Snapshot.Status.FAILED_CHECKS
    assert any(c.startswith("README.txt: interval method: BCa intervals are reported but the file does not name")
               for c in failed.checks), failed.checks
    for fmt in ("zip", "pdf", "csv"):
        response = client.get(reverse("calibration:report_export", args=[world.cycle.pk, fmt]),
                              {"version": failed.version})
        assert response.status_code == 404
    newest = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "json"]))
    assert newest.status_code == 200
    assert newest.content == bytes(SnapshotFile.objects.get(snapshot=clean, format="json").content)
    page = client.get(reverse("calibration:report", args=[world.cycle.pk]), {"version": failed.version})
    assert b'data-testid="snapshot-checks"' in page.content and b"BCa intervals are reported" in page.content
    with pytest.raises(SystemExit):
        call_command("check_artefact", str(failed.pk))
