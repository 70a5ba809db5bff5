"""Notifications: who is told what, once; email at once or in a digest; the inbox; the role-aware home page."""
from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import Notification, User
from accounts.notifications import digests_send, notify
from annotations.lifecycle import assignment_reassign
from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from tests.annotations.factories import (
    MODEL_NAME_MARKER,
    MODEL_PROVIDER_MARKER,
    person,
    tradition,
    world_build,
)

pytestmark = pytest.mark.django_db
K = Notification.Kind


def notes(user: User, kind: str | None = None) -> list[Notification]:
    qs = Notification.objects.filter(user=user)
    return list(qs.filter(kind=kind) if kind else qs)


def test_a_committed_cycle_tells_each_expert_once_with_their_count(django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        world = world_build()
    for expert in (world.expert, world.other_expert, world.other_panel_expert):
        [note] = notes(expert, K.ASSIGNMENTS)  # one per cycle, not one per item
        count = Assignment.objects.filter(expert=expert, cycle=world.cycle).count()
        assert f"{count} new item" in note.text and world.cycle.name in note.text
        assert note.link == reverse("annotations:queue")
        assert MODEL_NAME_MARKER not in note.text and MODEL_PROVIDER_MARKER not in note.text
    assert notes(world.admin, K.ASSIGNMENTS) == []  # no assignments, no notice
    # Immediate is the default: one email each, sent once the cycle's transaction committed.
    assert sorted(m.to[0] for m in mail.outbox if "New assignments" in m.subject) == sorted(
        {a.expert.email for a in Assignment.objects.filter(cycle=world.cycle).select_related("expert")})
    assert all(MODEL_NAME_MARKER not in m.body for m in mail.outbox)


def test_a_reassigned_item_tells_its_new_expert(django_capture_on_commit_callbacks) -> None:
    world = world_build()
    newcomer = person(tradition=tradition("catholic"), name="Nina New")
    world.catholic.members.add(newcomer)
    old = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).first()
    assignment_reassign(assignment=old, to_expert=newcomer, actor=world.lead)
    [note] = notes(newcomer, K.ASSIGNMENTS)
    assert "A new item" in note.text
    second = Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).exclude(pk=old.pk).first()
    assignment_reassign(assignment=second, to_expert=newcomer, actor=world.lead)
    assert len(notes(newcomer, K.ASSIGNMENTS)) == 1  # still unread: not repeated


def test_a_disagreement_tells_the_panel_lead_once_per_cycle(django_capture_on_commit_callbacks) -> None:
    world = world_build(catholic_cases=3)
    items = sorted({a.item_id for a in world.assignments(world.expert) if a.panel_id == world.catholic.pk})
    for n, item_id in enumerate(items[:2]):
        for position, assignment in enumerate(Assignment.objects.filter(item_id=item_id).select_related("expert")):
            keys = sub_dimension_keys(assignment=assignment)
            scores = dict.fromkeys(keys, 0 if position == 0 else 3)  # three points apart: a disagreement
            with django_capture_on_commit_callbacks(execute=True):
                annotation_submit(assignment=assignment, actor=assignment.expert,
                                  data=AnnotationInput(scores=scores, rationale="why"))
        if n == 0:
            [note] = notes(world.lead, K.ADJUDICATION)
            assert world.cycle.name in note.text and note.link == reverse("calibration:adjudication_queue")
    assert len(notes(world.lead, K.ADJUDICATION)) == 1  # the second disputed item: the notice is still unread
    assert notes(world.other_lead, K.ADJUDICATION) == [] and notes(world.expert, K.ADJUDICATION) == []


def test_an_agreed_item_tells_nobody(django_capture_on_commit_callbacks) -> None:
    world = world_build()
    item_id = next(a.item_id for a in world.assignments(world.expert) if a.panel_id == world.catholic.pk)
    for assignment in Assignment.objects.filter(item_id=item_id).select_related("expert"):
        with django_capture_on_commit_callbacks(execute=True):
            annotation_submit(assignment=assignment, actor=assignment.expert,
                              data=AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), 2)))
    assert not Notification.objects.filter(kind=K.ADJUDICATION).exists()


def test_a_finished_report_tells_who_asked_for_it() -> None:
    world = world_build()
    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    [note] = notes(world.admin, K.REPORT_READY)
    assert f"Version {snapshot.version}" in note.text and note.link.endswith(f"?version={snapshot.version}")
    assert notes(world.lead, K.REPORT_READY) == []


def test_digests_group_what_is_new_and_send_it_once(django_capture_on_commit_callbacks) -> None:
    daily = person(name="Dora Digest")
    User.objects.filter(pk=daily.pk).update(email_mode=User.EmailMode.DIGEST)
    silent = person(name="Sam Silent")
    User.objects.filter(pk=silent.pk).update(email_mode=User.EmailMode.NONE)
    daily.refresh_from_db()
    silent.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(3):
            notify(users=[daily, silent], kind=K.REPORT_READY, text=f"Thing {n}", link=f"/x/{n}/")
    assert mail.outbox == []  # neither wants an email per notification
    assert digests_send() == 1
    [message] = mail.outbox
    assert message.to == [daily.email] and "3 new" in message.subject
    assert all(f"Thing {n}" in message.body and f"/x/{n}/" in message.body for n in range(3))
    assert digests_send() == 0  # nothing new


def test_the_inbox_is_ones_own(client) -> None:  # type: ignore[no-untyped-def]
    alice, bob = person(name="Alice Inbox"), person(name="Bob Inbox")
    [mine] = notify(users=[alice], kind=K.ASSIGNMENTS, text="Yours", link="/scoring/")
    [theirs] = notify(users=[bob], kind=K.ASSIGNMENTS, text="Bob's secret notice", link="/scoring/")
    client.force_login(alice)
    page = client.get(reverse("accounts:inbox")).content.decode()
    assert "Yours" in page and "Bob's secret notice" not in page
    badge = re.search(r'data-testid="unread-count"[^>]*>(\d+)<', page)
    assert badge and badge.group(1) == "1"
    assert client.post(reverse("accounts:inbox"), {"id": theirs.pk}).status_code == 404  # not even marked
    assert client.post(reverse("accounts:inbox"), {"id": "9" * 30}).status_code == 400
    assert Notification.objects.get(pk=theirs.pk).read_at is None
    response = client.post(reverse("accounts:inbox"), {"id": mine.pk, "follow": "1"})
    assert response.status_code == 302 and response["Location"] == "/scoring/"
    assert Notification.objects.get(pk=mine.pk).read_at is not None
    assert 'data-testid="unread-count"' not in client.get(reverse("accounts:inbox")).content.decode()
    client.post(reverse("accounts:inbox"), {"email_mode": "digest"})
    assert User.objects.get(pk=alice.pk).email_mode == "digest"
    client.post(reverse("accounts:inbox"), {"email_mode": "carrier-pigeon"})
    assert User.objects.get(pk=alice.pk).email_mode == "digest"
    assert Client().get(reverse("accounts:inbox")).status_code == 302  # sign in first


def test_the_home_page_shows_each_role_what_waits(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    client.force_login(world.expert)
    page = client.get(reverse("home")).content.decode()
    open_items = Assignment.objects.filter(expert=world.expert, cycle=world.cycle).count()
    assert f"{open_items} items to score" in page and world.cycle.name in page
    assert 'data-testid="home-lead"' not in page and 'data-testid="home-admin"' not in page
    assert MODEL_NAME_MARKER not in page and MODEL_PROVIDER_MARKER not in page
    client.force_login(world.lead)
    page = client.get(reverse("home")).content.decode()
    assert 'data-testid="home-lead"' in page and "0 items wait for adjudication" in page
    assert world.catholic.name in page and 'data-testid="home-admin"' not in page
    client.force_login(world.admin)
    page = client.get(reverse("home")).content.decode()
    assert 'data-testid="home-admin"' in page and "No report computed yet." in page


def test_the_admin_home_page_lists_a_calibrated_leaderboard_version(client) -> None:  # type: ignore[no-untyped-def]
    # A calibrated leaderboard's snapshot has neither cycle nor study (label_cycle and judge_run instead); the home
    # page's list of report versions once reversed the cycle report's URL with None for it (a 500 for every admin).
    from calibration.calibrated.snapshots import calibrated_snapshot_request
    from evaluations.models import JudgeRun

    world = world_build()
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="j", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    snapshot = calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=world.admin)
    client.force_login(world.admin)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert f'href="{reverse("calibrated:board", args=[run.pk])}?version={snapshot.version}"' in response.content.decode()
