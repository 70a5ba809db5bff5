"""`manage.py demo_totp`: the local demo's two-factor codes, refused outside development."""
from __future__ import annotations

import time
from io import StringIO

import pytest
from allauth.mfa.models import Authenticator
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.urls import reverse

from accounts.totp import totp_period
from calibration.demo import demo_totp_activate
from tests.annotations.factories import world_build

pytestmark = pytest.mark.django_db


def test_demo_staff_and_leads_get_totp_and_the_command_prints_a_valid_code() -> None:
    world = world_build()
    activated = demo_totp_activate()
    assert world.admin.email in activated and world.lead.email in activated
    assert world.expert.email not in activated  # experts are not asked for a second factor
    assert demo_totp_activate() == activated  # idempotent
    assert Authenticator.objects.filter(user=world.admin).count() == 1
    left = totp_period() - time.time() % totp_period()
    if left < 2:
        time.sleep(left)  # so the printed code is still valid when posted below
    with override_settings(DEBUG=True):
        out = StringIO()
        call_command("demo_totp", world.admin.email, stdout=out)
    code = out.getvalue().split()[0]
    assert len(code) == 6
    # The printed code is the one allauth asks for at sign-in.
    client = Client()
    response = client.post(reverse("account_login"), {"login": world.admin.email, "password": "pw-test-1234"})
    assert response["Location"] == reverse("mfa_authenticate")
    response = client.post(reverse("mfa_authenticate"), {"code": code})
    assert response.status_code == 302 and response["Location"] == "/calibration/"


def test_demo_totp_refuses_outside_development_and_for_real_accounts() -> None:
    world = world_build()
    demo_totp_activate()
    with pytest.raises(CommandError, match="DEBUG"):
        call_command("demo_totp", world.admin.email)
    with override_settings(DEBUG=True), pytest.raises(CommandError, match="demo accounts"):
        call_command("demo_totp", "someone@university.edu")
    with override_settings(DEBUG=True), pytest.raises(CommandError, match="no TOTP"):
        call_command("demo_totp", world.expert.email)
