"""Delphi's notices: a round that opens tells its panelists; `manage.py notify_due` reminds them once; the home
page lists the open rounds a panelist has not answered.

(Moved from tests/accounts/test_notifications.py with the `delphi` app; the inbox and e-mail rules stay there.)
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Notification, User
from delphi.models import DelphiRound
from delphi.selectors import rounds_awaiting_answer
from delphi.services import delphi_response_submit, delphi_round_close
from tests.delphi.factories import allocation, delphi_world_build, submit_all

pytestmark = pytest.mark.django_db
K = Notification.Kind


def notes(user: User, kind: str | None = None) -> list[Notification]:
    qs = Notification.objects.filter(user=user)
    return list(qs.filter(kind=kind) if kind else qs)


def test_delphi_rounds_tell_their_panelists_and_reminders_come_once() -> None:
    world = delphi_world_build()
    panelists = [world.expert, *world.others]
    for person_ in panelists:
        [note] = notes(person_, K.DELPHI_OPEN)
        assert "Round 1" in note.text and note.link == reverse("delphi:respond", kwargs={"pk": world.study.pk})
    assert notes(world.outsider) == [] and notes(world.admin, K.DELPHI_OPEN) == []
    round1 = DelphiRound.objects.get(study=world.study, number=1)
    DelphiRound.objects.filter(pk=round1.pk).update(opened_at=timezone.now() - timedelta(days=4))
    call_command("notify_due", stdout=open("/dev/null", "w"))
    call_command("notify_due", "--days", "0", stdout=open("/dev/null", "w"))  # a second run reminds nobody again
    for person_ in panelists:
        assert len(notes(person_, K.DELPHI_REMINDER)) == 1
    submit_all(world, world.round(1), [-15, -5, 5, 15, 0])
    delphi_round_close(round=round1, actor=world.admin)
    assert [n.text[:7] for n in notes(world.expert, K.DELPHI_OPEN)] == ["Round 2", "Round 1"]


def test_the_home_page_lists_the_open_rounds_a_panelist_has_not_answered() -> None:
    world = delphi_world_build()
    round1 = world.round(1)
    assert rounds_awaiting_answer(expert=world.expert) == [round1]
    assert rounds_awaiting_answer(expert=world.outsider) == []
    client = Client()
    client.force_login(world.expert)
    respond = reverse("delphi:respond", kwargs={"pk": world.study.pk})
    assert respond in client.get("/").content.decode()
    delphi_response_submit(round=round1, expert=world.expert, allocation=allocation(world.structure))
    assert rounds_awaiting_answer(expert=world.expert) == []
    assert rounds_awaiting_answer(expert=world.others[0]) == [round1]  # the others have not answered yet
    assert respond not in client.get("/").content.decode()
