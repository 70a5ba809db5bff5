"""Personal data (issue 33, part 2): one's own data as JSON, pseudonymisation on request with every stored report
still reproducing, and panel membership (special-category data) shown only to admins and the panel's lead."""
from __future__ import annotations

import hashlib
import json

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import authenticate
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from accounts.models import ApiToken, User
from accounts.privacy import is_pseudonymised, user_pseudonymise
from accounts.services import api_token_create
from annotations.models import Annotation, SubScore
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from audit.models import AuditEvent
from calibration.cycles.ratings import report_inputs
from calibration.reports.snapshots import ratings_csv, report_snapshot_compute, report_snapshot_request
from evidence.models import Snapshot, SnapshotFile
from tests.annotations.factories import MODEL_NAME_MARKER, OTHER_EXPERT_EMAIL, world_build

pytestmark = pytest.mark.django_db


def submit_own(world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    annotation_submit(assignment=assignment, actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, 3), rationale="my own reasons zq-7781"))


def test_personal_data_export_is_the_persons_own_data_as_json(client: Client) -> None:
    world = world_build()
    submit_own(world)
    client.force_login(world.expert)
    response = client.get(reverse("accounts:my_data"), {"user": world.other_expert.pk})  # a parameter changes nothing
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert "attachment" in response["Content-Disposition"]
    text = response.content.decode()
    data = json.loads(text)
    assert data["user_id"] == world.expert.pk and data["account"]["email"] == world.expert.email
    assert data["account"]["profile"]["tradition"] == "catholic"
    assert sorted(p["name"] for p in data["panels"]) == ["Catholic panel", "Neutral panel"]
    submitted = [s for s in data["scores"] if s["status"] == "submitted"]
    assert len(submitted) == 1 and submitted[0]["rationale"] == "my own reasons zq-7781"
    assert set(submitted[0]["scores"].values()) == {3}
    assert any(row["action"] == "sign_in" for row in data["audit_trail"])
    # Only their own: no other person, no model, no judge.
    assert OTHER_EXPERT_EMAIL not in text and MODEL_NAME_MARKER not in text and "Orthodox panel" not in text
    recorded = AuditEvent.objects.filter(action=AuditEvent.Action.DATA_EXPORT)
    assert [(e.actor_id, e.subject_user_id) for e in recorded] == [(world.expert.pk, world.expert.pk)]
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT).exists()  # recorded once, as what it is


def test_personal_data_export_needs_a_sign_in() -> None:
    response = Client().get(reverse("accounts:my_data"))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_personal_data_pseudonymise_keeps_every_stored_report_reproducible(immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    from tests.calibration.reports.test_report_views import scored_world

    world, _run = scored_world()
    expert = world.expert
    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    assert snapshot.status == Snapshot.Status.READY and expert.email in snapshot.rater_key.values()
    stored = {f.format: f.sha256 for f in SnapshotFile.objects.filter(snapshot=snapshot)}
    scores_before = list(SubScore.objects.filter(annotation__assignment__expert=expert).values_list("key", "score"))
    api_token_create(user=expert, name="mine", scopes=["reports:read"])
    email = expert.email

    user_pseudonymise(user=expert, actor=world.admin, reference="request 2026-17")

    expert.refresh_from_db()
    assert is_pseudonymised(expert) and expert.display_name == f"pseudonym-{expert.pk}"
    assert email not in (expert.email, expert.display_name, expert.first_name, expert.last_name)
    assert not expert.is_active and not expert.has_usable_password()
    assert authenticate(email=email, password="pw-test-1234") is None
    assert not EmailAddress.objects.filter(user=expert).exists() and not EmailAddress.objects.filter(email=email).exists()
    assert not ApiToken.objects.active().filter(user=expert).exists()
    assert expert.expert_profile.institution == "" and expert.expert_profile.tradition.key == "catholic"
    # The scores stay, under the same id.
    assert list(SubScore.objects.filter(annotation__assignment__expert=expert).values_list("key", "score")) == scores_before
    # The stored report: files untouched, the rater key no longer names the person.
    snapshot.refresh_from_db()
    assert {f.format: f.sha256 for f in SnapshotFile.objects.filter(snapshot=snapshot)} == stored
    assert email not in json.dumps(snapshot.rater_key) and expert.email in snapshot.rater_key.values()
    # It reproduces: the inputs read now hash as they did, and a new version has the same input hash.
    assert hashlib.sha256(ratings_csv(report_inputs(cycle=world.cycle, run=snapshot.judge_run))).hexdigest() \
        == snapshot.input_hash
    again = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=again.pk)
    again.refresh_from_db()
    assert again.version == 2 and again.input_hash == snapshot.input_hash
    assert SnapshotFile.objects.get(snapshot=again, format="ratings").sha256 == stored["ratings"]
    # Recorded, and refused twice.
    recorded = AuditEvent.objects.get(action=AuditEvent.Action.PSEUDONYMISED)
    assert (recorded.actor_id, recorded.subject_user_id, recorded.detail) == (
        world.admin.pk, expert.pk, {"reference": "request 2026-17"})
    assert email not in json.dumps(list(AuditEvent.objects.values("target", "detail")))
    with pytest.raises(ValidationError):
        user_pseudonymise(user=expert, actor=world.admin)


def test_personal_data_admin_delete_offers_pseudonymisation_instead_of_failing(client: Client) -> None:
    world = world_build()
    submit_own(world)
    client.force_login(world.expert)
    page = reverse("admin:accounts_user_pseudonymise", args=[world.other_expert.pk])
    assert client.get(page).status_code in (302, 403)
    assert client.post(page).status_code in (302, 403)
    world.other_expert.refresh_from_db()
    assert not is_pseudonymised(world.other_expert)
    client.force_login(world.admin)
    delete = client.get(reverse("admin:accounts_user_delete", args=[world.expert.pk]))
    assert delete.status_code == 302 and delete["Location"] == page.replace(str(world.other_expert.pk), str(world.expert.pk))
    confirm = client.get(delete["Location"])
    assert confirm.status_code == 200 and "pseudonym-" in confirm.content.decode()
    changelist = client.get(reverse("admin:accounts_user_changelist"))
    assert "delete_selected" not in changelist.content.decode()
    done = client.post(delete["Location"], {"reference": "ticket 7"})
    assert done.status_code == 302
    world.expert.refresh_from_db()
    assert is_pseudonymised(world.expert)
    assert Annotation.objects.filter(assignment__expert=world.expert, status="submitted").count() == 1


def test_personal_data_panel_membership_is_shown_only_to_admins_and_the_panels_lead(client: Client) -> None:
    world = world_build()
    orthodox_members = list(world.orthodox.members.values_list("email", flat=True))
    # Members of the Orthodox panel only (Olga sits on the Neutral panel too, which the Catholic lead also leads).
    led = set(User.objects.filter(panels__lead=world.lead).values_list("email", flat=True))
    orthodox_only = [email for email in orthodox_members if email not in led]
    assert orthodox_only
    catholic_members = [e for e in world.catholic.members.values_list("email", flat=True) if e != world.expert.email]
    expert_pages = [reverse(name) for name in ("home", "annotations:queue", "review:queue", "delphi:index",
                                               "accounts:profile", "accounts:inbox", "help")]
    client.force_login(world.expert)
    for url in expert_pages:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        for email in orthodox_members + catholic_members:
            assert email not in body, (url, email)
        assert "Orthodox panel" not in body, url
    # The Catholic panel's lead sees their own panel's people, never the Orthodox panel's.
    client.force_login(world.lead)
    for url in (reverse("annotations:lead"), reverse("annotations:lead_assignments"), reverse("review:cycles")):
        response = client.get(url)
        assert response.status_code == 200, url
        for email in orthodox_only:
            assert email not in response.content.decode(), (url, email)
    # Nobody but admins reaches the panels page or the API that lists panels' work.
    for user in (world.expert, world.lead):
        client.force_login(user)
        assert client.get(reverse("calibration:panels")).status_code == 403
    client.force_login(world.admin)
    panels_page = client.get(reverse("calibration:panels")).content.decode()
    assert "Orthodox panel" in panels_page


def test_personal_data_a_pseudonymised_person_cannot_be_pseudonymised_by_themself() -> None:
    world = world_build()
    with pytest.raises(ValidationError):
        user_pseudonymise(user=world.admin, actor=world.admin)
    assert not is_pseudonymised(User.objects.get(pk=world.admin.pk))
