"""The demo people: panels for every tradition, leads, one committed cycle with assignments; idempotent."""
from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from django.test import Client

from accounts.models import User
from annotations.models import Assignment, CalibrationCycle, Panel
from calibration.cycles.selectors import panel_size_warnings
from calibration.demo import DEMO_CYCLE_NAME, DEMO_PASSWORD, demo_people_create
from evaluations.models import Tradition
from tests.calibration.cycles.test_cycles import pool_create

pytestmark = pytest.mark.django_db


def test_demo_people_panels_and_cycle() -> None:
    pool_create(per_dimension_cases=8, models=4)  # 32 responses per dimension, like the demo data
    logins = demo_people_create()

    for tradition in Tradition.objects.all():
        panel = Panel.objects.get(tradition=tradition)
        assert panel.members.count() >= tradition.min_panel_size
        assert panel.members.count() == (2 if tradition.key == "pentecostal" else 3)
        assert panel.lead.role == User.Role.ADJUDICATOR
        assert all(m.expert_profile.tradition == tradition and m.expert_profile.degree for m in panel.members.all())
    assert panel_size_warnings() == []

    cycle = CalibrationCycle.objects.get(name=DEMO_CYCLE_NAME)
    assert cycle.items.count() == 6 * 16
    assert Assignment.objects.filter(cycle=cycle).count() > 0
    assert not Assignment.objects.filter(cycle=cycle).exclude(expert__in=User.objects.filter(panels__isnull=False)).exists()

    emails = {email for _, email, _ in logins}
    assert len(emails) == len(logins) == 1 + 5 + 14
    assert EmailAddress.objects.filter(email__in=emails, verified=True).count() == len(emails)
    assert {role for role, _, _ in logins} == {"admin", "adjudicator", "expert"}

    client = Client()
    expert_email = next(email for role, email, _ in logins if role == "expert")
    response = client.post("/accounts/login/", {"login": expert_email, "password": DEMO_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/scoring/"

    # Idempotent: a second run creates nothing new.
    assert demo_people_create() == logins
    assert CalibrationCycle.objects.count() == 1 and User.objects.count() == len(logins)


def test_demo_people_without_responses_skip_the_cycle() -> None:
    logins = demo_people_create()
    assert logins and not CalibrationCycle.objects.exists()
