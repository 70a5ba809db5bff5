"""Report downloads: Django checks access; the bytes come from the database or, offloaded, from the web server.

With DOWNLOADS_OFFLOAD set, an authorised download answers with an empty body and a header naming the stored file
(written once under DOWNLOADS_ROOT by its SHA-256); refused users never get the header nor cause a write."""
from __future__ import annotations

import hashlib

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evidence.downloads import StoredFileCorrupt, snapshot_file_response, stored_file_path
from evidence.models import Snapshot, SnapshotFile
from evidence.services import snapshot_store
from tests.accounts.api import token_auth
from tests.annotations.factories import world_build

FILES = {
    SnapshotFile.Format.JSON: b'{"report": "stored json"}\n',
    SnapshotFile.Format.CSV: b"group,metric,value\noverall,alpha,0.61\n",
    SnapshotFile.Format.PDF: b"%PDF-1.4 stored pdf bytes\n" * 50,
    SnapshotFile.Format.RATINGS: b"item,rater,score\n1,R01,2\n",
    SnapshotFile.Format.BUNDLE: bytes(range(256)) * 40,
}


@pytest.fixture
def stored(db, settings, tmp_path, monkeypatch):
    """A world and a ready version of its cycle's report, stored by the real service with the files above (stand-in
    bytes, so the artefact checker is told they pass: what is tested here is how stored bytes are served)."""
    monkeypatch.setattr("evidence.services.snapshot_checks", lambda **kwargs: [])
    settings.DOWNLOADS_ROOT = tmp_path / "downloads"
    settings.DOWNLOADS_OFFLOAD = ""
    world = world_build()
    snapshot = Snapshot.objects.create(kind="cycle_report", subject=str(world.cycle.pk), cycle=world.cycle, version=1, seed=1, n_resamples=0,
                                             status=Snapshot.Status.RUNNING)
    snapshot_store(snapshot=snapshot, files=dict(FILES), input_hash="c" * 64)
    snapshot.refresh_from_db()
    return world, snapshot


def export_url(world, fmt: str) -> str:
    return reverse("calibration:report_export", args=[world.cycle.pk, fmt])


def written_files(settings) -> list:
    root = settings.DOWNLOADS_ROOT
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.parametrize("mode", ["", "x-accel-redirect", "x-sendfile"])
def test_experts_and_leads_are_refused_and_no_file_is_named_or_written(stored, client, settings, mode):
    world, _ = stored
    settings.DOWNLOADS_OFFLOAD = mode
    for user in (world.expert, world.lead):
        client.force_login(user)
        response = client.get(export_url(world, "zip"))
        assert response.status_code == 403
        assert "X-Accel-Redirect" not in response and "X-Sendfile" not in response
        assert FILES[SnapshotFile.Format.BUNDLE] not in response.content
    client.logout()
    api = client.get(reverse("api-cycle-report-bundle", args=[world.cycle.pk]), **token_auth(world.expert))
    assert api.status_code == 403 and "X-Accel-Redirect" not in api and "X-Sendfile" not in api
    assert written_files(settings) == []


def test_without_offloading_the_admin_gets_the_stored_bytes_from_the_application(stored, client, settings):
    world, snapshot = stored
    client.force_login(world.admin)
    for fmt, url_fmt in [("json", "json"), ("csv", "csv"), ("pdf", "pdf"), ("ratings", "ratings"), ("bundle", "zip")]:
        response = client.get(export_url(world, url_fmt), {"version": snapshot.version})
        assert response.status_code == 200
        assert response.content == FILES[fmt]
        assert response["ETag"] == f'"{hashlib.sha256(FILES[fmt]).hexdigest()}"'
        assert response["X-Input-Hash"] == "c" * 64
        assert "X-Accel-Redirect" not in response and "X-Sendfile" not in response
    assert written_files(settings) == []  # the fallback needs no disk


def test_x_accel_redirect_names_the_stored_file_by_its_hash_and_writes_exactly_its_bytes(stored, client, settings):
    world, snapshot = stored
    settings.DOWNLOADS_OFFLOAD = "x-accel-redirect"
    settings.DOWNLOADS_ACCEL_PREFIX = "/_protected/snapshots/"
    client.force_login(world.admin)
    response = client.get(export_url(world, "pdf"))
    sha = hashlib.sha256(FILES["pdf"]).hexdigest()
    assert response.status_code == 200
    assert response["X-Accel-Redirect"] == f"/_protected/snapshots/{sha[:2]}/{sha}"
    assert response.content == b""  # nginx sends the body
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == f'attachment; filename="irr-report-cycle-{world.cycle.pk}-v1.pdf"'
    assert response["ETag"] == f'"{sha}"' and response["X-Input-Hash"] == "c" * 64
    path = stored_file_path(sha)
    assert path == settings.DOWNLOADS_ROOT / sha[:2] / sha
    assert path.read_bytes() == FILES["pdf"]
    assert written_files(settings) == [path]  # one file, no temporary left behind
    assert path.stat().st_mode & 0o777 == 0o644  # readable by a web server running as another user


def test_an_offloaded_download_reads_the_bytes_from_the_database_only_while_the_file_is_missing(
        stored, client, settings):
    world, snapshot = stored
    settings.DOWNLOADS_OFFLOAD = "x-accel-redirect"
    client.force_login(world.admin)
    first = client.get(export_url(world, "zip"))
    path = stored_file_path(hashlib.sha256(FILES["bundle"]).hexdigest())
    assert first.status_code == 200 and path.read_bytes() == FILES["bundle"]
    with CaptureQueriesContext(connection) as on_disk:  # on disk already: the stored bytes are not read
        assert client.get(export_url(world, "zip"))["X-Accel-Redirect"].endswith(path.name)
    assert not any('"content"' in q["sql"] for q in on_disk.captured_queries)
    path.write_bytes(FILES["bundle"][:100])  # a truncated file (disk trouble) is written again, whole
    with CaptureQueriesContext(connection) as truncated:
        assert client.get(export_url(world, "zip")).status_code == 200
    assert any('"content"' in q["sql"] for q in truncated.captured_queries)
    assert path.read_bytes() == FILES["bundle"]


def test_x_sendfile_gives_the_web_server_the_file_path(stored, client, settings):
    world, _ = stored
    settings.DOWNLOADS_OFFLOAD = "x-sendfile"
    client.force_login(world.admin)
    response = client.get(export_url(world, "json"))
    sha = hashlib.sha256(FILES["json"]).hexdigest()
    assert response.status_code == 200 and response.content == b""
    assert response["X-Sendfile"] == str(settings.DOWNLOADS_ROOT / sha[:2] / sha)
    assert "X-Accel-Redirect" not in response
    assert (settings.DOWNLOADS_ROOT / sha[:2] / sha).read_bytes() == FILES["json"]


def test_the_api_bundle_is_offloaded_the_same_way(stored, client, settings):
    world, _ = stored
    settings.DOWNLOADS_OFFLOAD = "x-accel-redirect"
    response = client.get(reverse("api-cycle-report-bundle", args=[world.cycle.pk]), **token_auth(world.admin))
    sha = hashlib.sha256(FILES["bundle"]).hexdigest()
    assert response.status_code == 200, response.content[:300]
    assert response["X-Accel-Redirect"].endswith(f"/{sha[:2]}/{sha}") and response.content == b""
    assert response["ETag"] == f'"{sha}"'
    assert stored_file_path(sha).read_bytes() == FILES["bundle"]


def test_a_stored_file_that_does_not_match_its_hash_is_never_written_or_served(stored, settings):
    _, snapshot = stored
    settings.DOWNLOADS_OFFLOAD = "x-accel-redirect"
    SnapshotFile.objects.filter(snapshot=snapshot, format="csv").update(content=b"tampered")
    with pytest.raises(StoredFileCorrupt, match="csv"):
        snapshot_file_response(snapshot=snapshot, fmt="csv", content_type="text/csv", filename="t.csv")
    assert written_files(settings) == []


def test_an_unknown_offload_setting_is_refused_by_name(stored, client, settings):
    _, snapshot = stored
    settings.DOWNLOADS_OFFLOAD = "nginx"
    with pytest.raises(ImproperlyConfigured, match="DOWNLOADS_OFFLOAD"):
        snapshot_file_response(snapshot=snapshot, fmt="json", content_type="application/json", filename="r.json")


def test_stored_file_path_accepts_only_a_sha256(settings, tmp_path):
    settings.DOWNLOADS_ROOT = tmp_path
    with pytest.raises(ValueError, match="sha256"):
        stored_file_path("../../etc/passwd")
    assert stored_file_path("ab" * 32) == tmp_path / "ab" / ("ab" * 32)
