"""Report snapshots: frozen, versioned, reproducible from their own bundle, never computed in a request."""
from __future__ import annotations

import hashlib
import io
import json
import sys
import types
import zipfile
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotation, Assignment
from annotations.services import AnnotationInput, annotation_reopen, annotation_submit, sub_dimension_keys
from calibration.reports.build import calibration_report_build
from calibration.reports.snapshots import (
    ratings_csv_parse,
    report_snapshot_compute,
    report_snapshot_request,
)
from evidence.models import Snapshot, SnapshotFile
from tests.accounts.api import token_auth
from tests.calibration.reports.test_report_views import compute, scored_world

FORMATS = ["json", "csv", "pdf", "zip", "ratings"]


@pytest.fixture
def scored(db, immediate_tasks):
    return scored_world()


def downloads(client, cycle, version):
    got = {}
    for fmt in FORMATS:
        response = client.get(reverse("calibration:report_export", args=[cycle.pk, fmt]), {"version": version})
        assert response.status_code == 200, (fmt, response.status_code)
        got[fmt] = response.content
    return got


def test_a_snapshot_is_frozen_while_scores_change_and_the_page_says_what_changed(scored, client):
    world, _ = scored
    client.force_login(world.admin)
    v1 = compute(client, world.cycle)
    first = downloads(client, world.cycle, 1)
    assert first["pdf"].startswith(b"%PDF") and first["zip"].startswith(b"PK")

    # Change the evidence: reopen two annotations and submit different scores.
    changed = 0
    for assignment in Assignment.objects.filter(cycle=world.cycle).select_related("expert", "panel")[:2]:
        annotation_reopen(assignment=assignment, actor=world.admin, note="second look")
        keys = sub_dimension_keys(assignment=assignment)
        annotation_submit(assignment=assignment, actor=assignment.expert,
                          data=AnnotationInput(scores=dict.fromkeys(keys, 3), rationale="changed my mind"))
        changed += 1

    again = downloads(client, world.cycle, 1)
    assert again == first  # byte for byte, every format
    page = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    # each changed score counts once, however many events (reopen, submit) changed it (issue 32)
    assert f"{changed} new or changed scores since version 1" in page

    v2 = compute(client, world.cycle)
    assert v2.version == 2 and v2.input_hash != v1.input_hash
    assert downloads(client, world.cycle, 1) == first  # version 1 is still there, unchanged
    page = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    assert "No changes since version 2" in page and 'data-testid="completeness"' in page


def test_the_bundle_is_citable_and_the_report_reproduces_from_its_own_ratings(scored, client):
    world, _ = scored
    client.force_login(world.admin)
    snapshot = compute(client, world.cycle)
    bundle = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "zip"])).content
    assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, "zip"])).content == bundle
    archive = zipfile.ZipFile(io.BytesIO(bundle))
    folder = f"faithbench-report-cycle-{world.cycle.pk}-v1/"
    names = sorted(n.removeprefix(folder) for n in archive.namelist())
    assert names == ["README.txt", "SHA256SUMS", "ratings.csv", "report.json", "report.pdf", "tables.csv"]
    assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in archive.infolist())
    ratings = archive.read(folder + "ratings.csv")
    assert hashlib.sha256(ratings).hexdigest() == snapshot.input_hash
    readme = archive.read(folder + "README.txt").decode()
    assert snapshot.input_hash in readme and "seed 20260101" in readme
    for line in archive.read(folder + "SHA256SUMS").decode().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256(archive.read(folder + name)).hexdigest() == digest
    report = json.loads(archive.read(folder + "report.json"))
    assert report["meta"]["snapshot"]["input_hash"] == snapshot.input_hash
    # No expert's identity leaves the page: the export uses pseudonyms only.
    assert "@" not in ratings.decode() and world.expert.email not in json.dumps(report)

    parsed = ratings_csv_parse(ratings)
    rebuilt = calibration_report_build(parsed.ratings, judge=parsed.judge, gold=parsed.gold, units=parsed.units,
                                       n_resamples=report["meta"]["n_resamples"], seed=report["meta"]["seed"])
    assert json.loads(json.dumps(rebuilt.to_json()["groups"])) == report["groups"]


def test_report_endpoints_answer_bad_parameters_with_400_and_missing_versions_with_404(scored, client):
    world, run = scored
    client.force_login(world.admin)
    report_url = reverse("calibration:report", args=[world.cycle.pk])
    assert client.get(report_url).status_code == 200  # no snapshot yet: the page offers to compute one
    assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, "pdf"])).status_code == 404
    compute(client, world.cycle)
    assert client.get(report_url, {"version": "abc"}).status_code == 400
    assert client.get(report_url, {"version": "0"}).status_code == 400
    assert client.get(report_url, {"version": "7"}).status_code == 404
    export = reverse("calibration:report_export", args=[world.cycle.pk, "json"])
    assert client.get(export, {"version": "-1"}).status_code == 400
    assert client.get(export, {"version": "9"}).status_code == 404
    assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, "xls"])).status_code == 404
    assert client.get(reverse("calibration:report", args=[999999])).status_code == 404
    bad = client.post(reverse("calibration:report_compute", args=[world.cycle.pk]),
                      {"seed": "x", "n_resamples": "100000"})
    assert bad.status_code == 422 and Snapshot.objects.count() == 1
    assert "less than or equal to 10000" in bad.content.decode()
    unknown_run = client.post(reverse("calibration:report_compute", args=[world.cycle.pk]),
                              {"seed": 1, "n_resamples": 10, "run": 424242})
    assert unknown_run.status_code == 422 and "424242" in unknown_run.content.decode()

    client.logout()
    auth = token_auth(world.admin, "reports:read", "data:write")
    api = reverse("api-cycle-report", args=[world.cycle.pk])
    assert client.get(api, {"version": "x"}, **auth).status_code == 400
    assert client.get(api, {"version": "5"}, **auth).status_code == 404
    assert client.get(reverse("api-cycle-report", args=[999999]), **auth).status_code == 404
    assert client.get(reverse("api-gold-labels"), {"cycle": "abc"}, **auth).status_code == 400
    assert client.get(reverse("api-gold-labels"), {"cycle": "999999"}, **auth).status_code == 404
    versions = reverse("api-cycle-report-versions", args=[world.cycle.pk])
    assert client.post(versions, {"n_resamples": -1}, content_type="application/json", **auth).status_code == 400
    listed = client.get(versions, **auth).json()
    assert [row["version"] for row in listed] == [1] and listed[0]["report"] is None


def test_the_api_queues_a_version_for_the_worker(scored, client, django_capture_on_commit_callbacks):
    world, _ = scored
    auth = token_auth(world.admin, "reports:read", "data:write")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("api-cycle-report-versions", args=[world.cycle.pk]),
                               {"seed": 7, "n_resamples": 50}, content_type="application/json", **auth)
    assert response.status_code == 202 and response.json()["version"] == 1
    body = client.get(reverse("api-cycle-report", args=[world.cycle.pk]), **auth).json()
    assert body["status"] == "ready" and body["seed"] == 7 and body["n_resamples"] == 50
    assert body["report"]["meta"]["seed"] == 7 and len(body["input_hash"]) == 64


def test_the_report_page_makes_no_call_into_stats(scored, client, monkeypatch):
    world, _ = scored
    client.force_login(world.admin)
    compute(client, world.cycle)

    def forbidden(*args, **kwargs):
        raise AssertionError("a statistic was computed inside a request")

    # Every function defined in stats/, wherever it has been imported to.
    for module in list(sys.modules.values()):
        if not isinstance(module, types.ModuleType):
            continue
        for name, value in list(vars(module).items()):
            if callable(value) and str(getattr(value, "__module__", None) or "").startswith("stats."):
                monkeypatch.setattr(module, name, forbidden)
    for fmt in FORMATS:
        assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, fmt])).status_code == 200
    page = client.get(reverse("calibration:report", args=[world.cycle.pk]))
    assert page.status_code == 200 and "Experts among themselves" in page.content.decode()


def test_report_page_queries_do_not_grow_with_versions(scored, client, django_assert_max_num_queries):
    world, _ = scored
    client.force_login(world.admin)
    compute(client, world.cycle)
    url = reverse("calibration:report", args=[world.cycle.pk])
    with django_assert_max_num_queries(14) as one:
        client.get(url)
        first = len(one)
    for _ in range(4):
        compute(client, world.cycle, n_resamples=0)
    with django_assert_max_num_queries(first):
        client.get(url)
    with django_assert_max_num_queries(8):
        client.get(reverse("calibration:report_export", args=[world.cycle.pk, "zip"]), {"version": 2})


def test_compute_is_idempotent_and_a_failure_is_recorded_without_files(scored, monkeypatch):
    world, _ = scored
    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=20)
    done = report_snapshot_compute(snapshot_id=snapshot.pk)
    assert done.status == "ready"
    files = dict(SnapshotFile.objects.filter(snapshot=done).values_list("format", "sha256"))
    again = report_snapshot_compute(snapshot_id=snapshot.pk)  # a second delivery of the same task
    assert again.status == "ready" and dict(SnapshotFile.objects.filter(snapshot=done)
                                            .values_list("format", "sha256")) == files

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("calibration.reports.snapshots.report_pdf", broken)
    failing = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=20)
    failed = report_snapshot_compute(snapshot_id=failing.pk)
    assert failed.status == "failed" and "disk full" in failed.error
    assert not SnapshotFile.objects.filter(snapshot=failed).exists() and failed.payload is None
    assert failing.version == 2


def test_a_snapshot_whose_worker_died_is_marked_failed_when_the_next_is_requested(scored):
    world, _ = scored
    stuck = report_snapshot_request(cycle=world.cycle, requested_by=None)
    Snapshot.objects.filter(pk=stuck.pk).update(status="running",
                                                      heartbeat_at=timezone.now() - timedelta(minutes=6))
    fresh = report_snapshot_request(cycle=world.cycle, requested_by=None)
    stuck.refresh_from_db()
    assert stuck.status == "failed" and "worker stopped" in stuck.error and fresh.version == 2


def test_manage_py_report_lists_computes_and_exports_every_format(scored, tmp_path, capsys):
    world, _ = scored
    call_command("report", "--list")
    assert world.cycle.name in capsys.readouterr().out
    call_command("report", str(world.cycle.pk), "--resamples", "30", "--seed", "5", verbosity=0)
    snapshot = Snapshot.objects.get(cycle=world.cycle, version=1)
    assert snapshot.status == "ready" and snapshot.seed == 5 and snapshot.requested_by is None
    call_command("report", "--list")
    assert f"v1 {snapshot.finished_at:%Y-%m-%d}" in capsys.readouterr().out
    for fmt in ["pdf", "csv", "json", "ratings", "bundle"]:
        out = tmp_path / f"out.{fmt}"
        call_command("report", world.cycle.name, "--version", "1", "--format", fmt, "--out", str(out))
        stored = SnapshotFile.objects.get(snapshot=snapshot, format=fmt)
        assert out.read_bytes() == bytes(stored.content)
    with pytest.raises(CommandError, match="no report version 4"):
        call_command("report", str(world.cycle.pk), "--version", "4")
    with pytest.raises(CommandError, match="no cycle"):
        call_command("report", "no-such-cycle")
    with pytest.raises(CommandError, match="n_resamples"):
        call_command("report", str(world.cycle.pk), "--resamples", "20000")


def test_only_submitted_scores_enter_a_snapshot(scored):
    world, _ = scored
    assignment = Assignment.objects.filter(cycle=world.cycle).select_related("expert").first()
    annotation_reopen(assignment=assignment, actor=world.admin)
    assert Annotation.objects.get(assignment=assignment).status == "draft"
    snapshot = report_snapshot_compute(snapshot_id=report_snapshot_request(
        cycle=world.cycle, requested_by=None, n_resamples=0).pk)
    ratings = bytes(SnapshotFile.objects.get(snapshot=snapshot, format="ratings").content).decode()
    keys = sub_dimension_keys(assignment=assignment)
    n_expert_rows = sum(1 for line in ratings.splitlines() if ",expert," in line)
    assert snapshot.input_counts["expert_ratings"] == n_expert_rows
    total = sum(len(sub_dimension_keys(assignment=a)) for a in Assignment.objects.filter(cycle=world.cycle))
    assert n_expert_rows == total - len(keys)
