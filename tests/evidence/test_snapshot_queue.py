"""A report version is queued once: while version N of a cycle's (or a study's) report is queued or running, the
service refuses N+1 (code "pending"), the page offers no "Compute version N+1" and a second POST only shows a
message, the API answers 409, the CLI says what to do. The pages that wait for the worker say when none is alive."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiToken
from calibration.models import Study
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from calibration.studies.snapshots import study_snapshot_compute, study_snapshot_request
from config.health import worker_heartbeat_beat, worker_status
from config.models import WorkerHeartbeat
from evidence.models import Snapshot
from evidence.services import snapshot_pending_error
from tests.accounts.api import token_auth
from tests.calibration.reports.test_report_views import scored_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world, _ = scored_world()
    return world


def refused(call) -> ValidationError:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as caught:
        call()
    assert snapshot_pending_error(caught.value), caught.value
    return caught.value


def test_a_second_version_is_refused_while_one_is_queued_or_running_and_allowed_after(world) -> None:
    queued = report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    error = refused(lambda: report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0))
    assert error.messages == [f"Version {queued.version} is queued for the background worker; "
                              "a new version can be requested once it has finished."]
    Snapshot.objects.filter(pk=queued.pk).update(status="running", progress=42, heartbeat_at=timezone.now())
    assert "being computed (42 %)" in refused(
        lambda: report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)).messages[0]
    assert Snapshot.objects.filter(cycle=world.cycle).count() == 1  # nothing was written by the refusals
    Snapshot.objects.filter(pk=queued.pk).update(status="queued")
    assert report_snapshot_compute(snapshot_id=queued.pk).status == "ready"
    assert report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0).version == 2


def test_a_failed_or_abandoned_version_does_not_block_the_next(world) -> None:
    first = report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    Snapshot.objects.filter(pk=first.pk).update(status="failed")
    second = report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    # a running version whose worker stopped writing progress is abandoned, not waited for
    Snapshot.objects.filter(pk=second.pk).update(status="running",
                                                       heartbeat_at=timezone.now() - timedelta(minutes=6))
    assert report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0).version == 3


def test_a_study_version_is_queued_once_too(world) -> None:
    study = Study.objects.create(name="queued once")
    queued = study_snapshot_request(study=study, requested_by=None, n_resamples=0)
    refused(lambda: study_snapshot_request(study=study, requested_by=None, n_resamples=0))
    # another subject is not blocked by this one
    assert report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0).version == 1
    study_snapshot_compute(snapshot_id=queued.pk)
    assert study_snapshot_request(study=study, requested_by=None, n_resamples=0).version == 2


def test_the_page_offers_no_second_version_and_a_second_post_queues_nothing(world, client) -> None:
    client.force_login(world.admin)
    url = reverse("calibration:report", args=[world.cycle.pk])
    page = client.get(url).content.decode()
    assert "Compute version 1" in page and 'data-testid="compute-pending"' not in page
    response = client.post(reverse("calibration:report_compute", args=[world.cycle.pk]),
                           {"seed": 1, "n_resamples": 0})
    assert response.status_code == 302  # the test settings' database backend queues; no worker runs here
    page = client.get(url).content.decode()
    assert "Compute version" not in page
    assert "A new version can be requested once version 1 has finished." in page
    again = client.post(reverse("calibration:report_compute", args=[world.cycle.pk]), {"seed": 1, "n_resamples": 0},
                        follow=True)
    assert again.status_code == 200
    assert "Version 1 is queued for the background worker" in again.content.decode()
    assert Snapshot.objects.filter(cycle=world.cycle).count() == 1


def test_the_api_answers_409_to_a_second_request(world, client) -> None:
    headers = token_auth(world.admin, ApiToken.Scope.DATA_WRITE, ApiToken.Scope.REPORTS_READ)
    first = client.post(reverse("api-reports"), {"cycle": world.cycle.pk, "n_resamples": 0},
                        content_type="application/json", **headers)
    assert first.status_code == 202, first.content
    second = client.post(reverse("api-reports"), {"cycle": world.cycle.pk, "n_resamples": 0},
                         content_type="application/json", **headers)
    assert second.status_code == 409
    assert second.json()["detail"].startswith("Version 1 is queued")
    versions = client.post(reverse("api-cycle-report-versions", args=[world.cycle.pk]), {"n_resamples": 0},
                           content_type="application/json", **headers)
    assert versions.status_code == 409
    assert Snapshot.objects.filter(cycle=world.cycle).count() == 1


def test_the_cli_says_a_version_is_pending_and_how_it_gets_computed(world) -> None:
    report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    with pytest.raises(CommandError, match=r"Version 1 is queued.*manage.py run_worker"):
        call_command("report", str(world.cycle.pk), "--resamples", "0", verbosity=0)


def test_a_waiting_version_says_when_no_worker_is_alive(world, client, settings) -> None:
    client.force_login(world.admin)
    report_snapshot_request(cycle=world.cycle, requested_by=None, n_resamples=0)
    progress = reverse("calibration:report_progress", args=[world.cycle.pk, 1])
    assert worker_status().alive is False and worker_status().never_seen
    body = client.get(progress).content.decode()
    assert 'data-testid="worker-notice"' in body and "No task worker is running: this version will wait" in body
    assert "No worker has reported itself on this database yet." in body
    assert "manage.py run_worker" in body and "db_worker" not in body

    worker_heartbeat_beat(worker_id="w1", started_at=timezone.now())
    assert worker_status().alive
    body = client.get(progress).content.decode()
    assert 'data-testid="worker-notice"' not in body and "Waiting for the background worker to pick it up" in body

    WorkerHeartbeat.objects.update(beat_at=timezone.now() - timedelta(seconds=settings.HEALTH_WORKER_MAX_AGE + 30))
    body = client.get(progress).content.decode()
    assert "The last worker was heard from" in body and 'data-testid="worker-notice"' in body


def test_the_notice_costs_no_query_on_pages_that_do_not_show_it(world, client) -> None:
    client.force_login(world.admin)
    with CaptureQueriesContext(connection) as counted:
        assert client.get(reverse("calibration:index")).status_code == 200
    assert not any("config_workerheartbeat" in q["sql"] for q in counted.captured_queries)
