"""The audit trail: append-only rows for sign-ins, access changes, tokens, judge runs, evidence, exports; the admins'
page and CSV; retention (issue 33, part 1)."""
from __future__ import annotations

import csv
import io
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiToken, User
from audit.context import request_forget, request_remember
from audit.models import AuditEvent, AuditImmutable
from audit.services import audit_prune, audit_record
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
A = AuditEvent.Action


def rows(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


def test_audit_log_rows_cannot_be_edited_or_deleted_from_the_app() -> None:
    event = audit_record(action=A.EXPORT, actor=None, target="x.csv")
    event.target = "changed"
    with pytest.raises(AuditImmutable):
        event.save()
    with pytest.raises(AuditImmutable):
        event.delete()
    with pytest.raises(AuditImmutable):
        AuditEvent.objects.filter(pk=event.pk).update(target="changed")
    with pytest.raises(AuditImmutable):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get(pk=event.pk).target == "x.csv"
    # Nor from Django's admin, superusers included.
    superuser = person(User.Role.ADMIN)
    request = RequestFactory().get("/admin/")
    request.user = superuser
    model_admin = admin.site._registry[AuditEvent]
    assert superuser.is_superuser
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, event)
    assert not model_admin.has_delete_permission(request, event)
    assert model_admin.has_view_permission(request, event)


def test_audit_log_records_sign_in_and_failures_without_storing_the_typed_address(client: Client) -> None:
    expert = person(email="signer@faithbench.test")
    client.post(reverse("account_login"), {"login": "signer@faithbench.test", "password": "wrong-password-1"})
    client.post(reverse("account_login"), {"login": "nobody-here@faithbench.test", "password": "whatever-123"})
    failed = rows(A.SIGN_IN_FAILED)
    assert [row.subject_user_id for row in failed] == [expert.pk, None]
    assert all("@" not in str(row.detail) and row.actor_id is None for row in failed)
    assert failed[0].detail["identifier_sha256"] != failed[1].detail["identifier_sha256"]
    response = client.post(reverse("account_login"), {"login": "signer@faithbench.test", "password": "pw-test-1234"})
    assert response.status_code == 302
    signed_in = rows(A.SIGN_IN)
    assert [(row.actor_id, row.subject_user_id) for row in signed_in] == [(expert.pk, expert.pk)]
    assert signed_in[0].ip == "127.0.0.1"
    client.post(reverse("account_logout"))
    assert [row.actor_id for row in rows(A.SIGN_OUT)] == [expert.pk]


def test_audit_log_records_role_and_permission_changes_with_before_and_after() -> None:
    admin_user = person(User.Role.ADMIN)
    expert = person()
    request = RequestFactory().post("/admin/accounts/user/")
    request.user = admin_user
    token = request_remember(request)  # as the admin's change form would run
    try:
        expert.role = User.Role.ADJUDICATOR
        expert.save()
        expert.is_active = False
        expert.save(update_fields=["is_active"])
        expert.last_login = timezone.now()
        expert.save(update_fields=["last_login"])  # not an access change: no row
        from django.contrib.auth.models import Group

        group = Group.objects.create(name="auditors")
        expert.groups.add(group)
    finally:
        request_forget(token)
    changes = [row.detail for row in rows(A.USER_CHANGED) if row.subject_user_id == expert.pk]
    assert changes[-2:] == [{"role": ["expert", "adjudicator"]}, {"is_active": [True, False]}]
    assert all(row.actor_id == admin_user.pk for row in rows(A.USER_CHANGED)[-2:])
    permissions = rows(A.PERMISSIONS_CHANGED)
    assert [(row.subject_user_id, row.detail) for row in permissions] == [(expert.pk, {"groups": {"added": [group.pk]}})]


def test_audit_log_records_panel_membership_and_lead_changes(world) -> None:  # type: ignore[no-untyped-def]
    newcomer = person()
    world.catholic.members.add(newcomer)
    world.catholic.members.remove(world.expert)
    world.catholic.lead = world.other_lead
    world.catholic.save()
    panel_rows = [row for row in rows(A.PANEL_CHANGED) if row.target_id == str(world.catholic.pk)]
    details = [row.detail for row in panel_rows]
    assert {"members_added": [newcomer.pk]} in details
    assert {"members_removed": [world.expert.pk]} in details
    assert {"created": False, "lead_id": [world.lead.pk, world.other_lead.pk]} in details
    assert next(row for row in panel_rows if row.detail == {"members_added": [newcomer.pk]}).subject_user_id == newcomer.pk


def test_audit_log_records_api_tokens_created_and_revoked_by_their_owner(client: Client) -> None:
    expert = person()
    client.force_login(expert)
    response = client.post(reverse("accounts:api_tokens"), {"name": "nightly", "scopes": ["reports:read"], "days": 30})
    assert response.status_code == 200
    token = ApiToken.objects.get(user=expert)
    client.post(reverse("accounts:api_token_revoke", args=[token.pk]))
    client.post(reverse("accounts:api_token_revoke", args=[token.pk]))  # already revoked: nothing new to record
    created, revoked = rows(A.TOKEN_CREATED), rows(A.TOKEN_REVOKED)
    assert [(r.actor_id, r.subject_user_id, r.target_id) for r in created] == [(expert.pk, expert.pk, str(token.pk))]
    assert [(r.actor_id, r.subject_user_id) for r in revoked] == [(expert.pk, expert.pk)]
    assert created[0].detail["scopes"] == ["reports:read"] and "fbt_" in created[0].target


def test_audit_log_records_judge_runs_started_and_cancelled(client: Client, world) -> None:  # type: ignore[no-untyped-def]
    from evaluations.models import JudgeRun

    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="j", base_url="http://127.0.0.1:9/v1",
                                  created_by=world.admin, total_items=3)
    client.force_login(world.admin)
    response = client.post(reverse("judge:run_cancel", args=[run.pk]))
    assert response.status_code in (200, 302)
    started, cancelled = rows(A.JUDGE_RUN_STARTED), rows(A.JUDGE_RUN_CANCELLED)
    assert [(r.actor_id, r.target_id) for r in started] == [(world.admin.pk, str(run.pk))]
    assert [(r.actor_id, r.target_id, r.detail["status"]) for r in cancelled] == [
        (world.admin.pk, str(run.pk), ["queued", "cancelled"])]


def test_audit_log_records_evidence_versions_and_every_download_with_its_version(client: Client, world) -> None:  # type: ignore[no-untyped-def]
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request

    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    assert [(r.actor_id, r.target_id) for r in rows(A.SNAPSHOT_REQUESTED)] == [(world.admin.pk, str(snapshot.pk))]
    computed = rows(A.SNAPSHOT_COMPUTED)
    assert [(r.actor_id, r.detail["version"], r.detail["input_hash"]) for r in computed] == [
        (None, 1, snapshot.input_hash)]
    client.force_login(world.admin)
    for fmt in ("json", "csv"):
        response = client.get(reverse("calibration:report_export", args=[world.cycle.pk, fmt]), {"version": 1})
        assert response.status_code == 200
    downloads = rows(A.DOWNLOAD)
    assert [(r.actor_id, r.detail["version"], r.detail["format"]) for r in downloads] == [
        (world.admin.pk, 1, "json"), (world.admin.pk, 1, "csv")]
    assert rows(A.EXPORT) == []  # a download is recorded once, with its version, not again as an export


def test_audit_log_records_other_csv_exports_by_file_name(client: Client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.admin)
    response = client.get(reverse("calibration:gold_export", args=[world.cycle.pk]))
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    exports = rows(A.EXPORT)
    assert len(exports) == 1 and exports[0].actor_id == world.admin.pk
    assert exports[0].target and exports[0].target in response["Content-Disposition"]
    assert exports[0].path == reverse("calibration:gold_export", args=[world.cycle.pk])


def test_audit_log_page_is_for_admins_and_filters_by_actor_action_and_date(client: Client) -> None:
    admin_user, expert = person(User.Role.ADMIN), person()
    audit_record(action=A.EXPORT, actor=expert, target="=HYPERLINK(\"http://x\")")
    audit_record(action=A.DATA_EXPORT, actor=admin_user, subject_user=expert)
    client.force_login(expert)
    assert client.get(reverse("audit_log")).status_code == 403
    assert client.get(reverse("audit_log_export")).status_code == 403
    client.force_login(admin_user)
    page = client.get(reverse("audit_log"), {"action": A.EXPORT, "actor": expert.pk})
    assert page.status_code == 200
    body = page.content.decode()
    assert "File exported" in body and "Personal data exported" not in body.split("<tbody>")[1]
    today = timezone.now().date()
    assert client.get(reverse("audit_log"), {"since": str(today + timedelta(days=1))}).content.decode().count(
        "No rows match") == 1
    bad = client.get(reverse("audit_log"), {"since": "yesterday"})
    assert bad.status_code == 400 and "valid date" in bad.content.decode()
    assert client.get(reverse("audit_log_export"), {"actor": "x"}).status_code == 400
    export = client.get(reverse("audit_log_export"), {"actor": expert.pk, "action": A.EXPORT})
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(export.content.decode())))
    assert table[0][:3] == ["at", "action", "actor_id"]
    assert [row[1] for row in table[1:]] == ["export"]
    assert table[1][6].startswith("'=")  # the formula is escaped by the one CSV writer
    # The export of the audit trail is itself recorded.
    assert AuditEvent.objects.filter(action=A.EXPORT, actor=admin_user, target="audit-trail.csv").count() == 1


def test_audit_log_prune_removes_only_rows_past_retention_and_records_itself(settings) -> None:
    settings.AUDIT_RETENTION_DAYS = 30
    # One row written 31 days ago (rows cannot be aged afterwards: on PostgreSQL a trigger refuses any update).
    with mock.patch("django.utils.timezone.now", return_value=timezone.now() - timedelta(days=31)):
        old = audit_record(action=A.EXPORT, actor=None, target="old")
    recent = audit_record(action=A.EXPORT, actor=None, target="recent")
    out = io.StringIO()
    call_command("prune_audit", stdout=out)
    assert "pruned 1 row" in out.getvalue()
    assert not AuditEvent.objects.filter(pk=old.pk).exists() and AuditEvent.objects.filter(pk=recent.pk).exists()
    pruned = rows(A.AUDIT_PRUNED)
    assert len(pruned) == 1 and pruned[0].detail["deleted"] == 1 and pruned[0].detail["retention_days"] == 30
    with pytest.raises(ValueError):
        audit_prune(days=0)


def test_audit_log_page_reads_a_fixed_number_of_queries(client: Client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    admin_user = person(User.Role.ADMIN)
    people = [person() for _ in range(5)]
    for index in range(60):
        audit_record(action=A.EXPORT, actor=people[index % 5], subject_user=people[(index + 1) % 5], target=f"f{index}")
    client.force_login(admin_user)
    with django_assert_max_num_queries(12):
        response = client.get(reverse("audit_log"))
    assert response.status_code == 200 and response.content.decode().count("File exported") >= 60


def test_audit_log_records_group_changes_made_from_the_groups_side() -> None:
    from django.contrib.auth.models import Group

    first, second = person(), person()
    group = Group.objects.create(name="reviewers")
    group.user_set.add(first, second)
    group.user_set.clear()
    details = sorted((row.subject_user_id, str(row.detail)) for row in rows(A.PERMISSIONS_CHANGED))
    assert details == sorted([(first.pk, str({"groups": {"added": [group.pk]}})),
                              (second.pk, str({"groups": {"added": [group.pk]}})),
                              (first.pk, str({"groups": {"removed": [group.pk]}})),
                              (second.pk, str({"groups": {"removed": [group.pk]}}))])


def test_audit_log_names_the_token_owner_for_an_api_download(world) -> None:  # type: ignore[no-untyped-def]
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
    from tests.accounts.api import token_auth

    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    response = Client().get(reverse("api-cycle-report-bundle", args=[world.cycle.pk]), **token_auth(world.admin))
    assert response.status_code == 200
    downloads = rows(A.DOWNLOAD)
    assert [(r.actor_id, r.detail["version"], r.detail["format"]) for r in downloads] == [(world.admin.pk, 1, "bundle")]


def test_audit_log_records_study_and_pairwise_judge_runs_started_and_a_study_run_cancelled(tmp_path, world) -> None:  # type: ignore[no-untyped-def]
    from calibration.models import Study
    from calibration.studies.importing import study_import
    from calibration.studies.judging import study_judge_run_cancel, study_judge_run_request
    from evaluations.models import PairwiseRun
    from tests.calibration.studies.test_study_judging import judge_bench_file

    study_import(path=judge_bench_file(tmp_path / "mini.json", n=3), study="mini", fmt="judge-bench")
    run = study_judge_run_request(study=Study.objects.get(name="mini"), model="j", requested_by=world.admin,
                                  base_url="http://127.0.0.1:9/v1")
    pairwise = PairwiseRun.objects.create(model="j", base_url="http://127.0.0.1:9/v1", total=2, created_by=world.admin)
    assert study_judge_run_cancel(run=run) is True
    assert study_judge_run_cancel(run=run) is False  # an ended run: nothing to cancel, nothing recorded
    started = {(r.target_type, r.target_id, r.actor_id) for r in rows(A.JUDGE_RUN_STARTED)}
    assert started == {("study judge run", str(run.pk), world.admin.pk),
                       ("pairwise judge run", str(pairwise.pk), world.admin.pk)}
    assert [(r.target_type, r.target_id, r.detail["status"]) for r in rows(A.JUDGE_RUN_CANCELLED)] == [
        ("study judge run", str(run.pk), ["queued", "cancelled"])]
