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


class FakeClock:
    """The command's clock and sleep: time only moves when the command waits."""

    def __init__(self, now: float) -> None:
        self.now, self.slept = now, []  # type: ignore[var-annotated]

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def run_demo_totp(email: str, clock: FakeClock, monkeypatch) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    from accounts.management.commands import demo_totp

    monkeypatch.setattr(demo_totp, "clock", clock.time)
    monkeypatch.setattr(demo_totp, "sleep", clock.sleep)
    out, err = StringIO(), StringIO()
    with override_settings(DEBUG=True):
        call_command("demo_totp", email, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _secret(user) -> str:  # type: ignore[no-untyped-def]
    from allauth.mfa.adapter import get_adapter

    return get_adapter().decrypt(Authenticator.objects.get(user=user, type="totp").data["secret"])


def test_demo_totp_waits_for_the_next_code_when_the_current_one_was_used(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from accounts.totp import totp_code

    world = world_build()
    demo_totp_activate()
    period = totp_period()
    window_start = (int(time.time()) // period) * period
    clock = FakeClock(window_start + 10.0)  # 20 s left in this window
    Authenticator.objects.filter(user=world.admin).update(last_used_at=datetime.fromtimestamp(window_start + 4, UTC))
    out, err = run_demo_totp(world.admin.email, clock, monkeypatch)
    assert clock.slept == [pytest.approx(20.2)]
    assert "was already used to sign in" in err and "waiting 20 s for the next code" in err
    code = out.split()[0]
    assert code == totp_code(secret=_secret(world.admin), moment=window_start + period)  # the next window's code
    assert code != totp_code(secret=_secret(world.admin), moment=window_start)

    # used in the previous window: the current code is fresh, printed at once
    Authenticator.objects.filter(user=world.admin).update(
        last_used_at=datetime.fromtimestamp(window_start - 1, UTC))
    clock = FakeClock(window_start + 10.0)
    out, err = run_demo_totp(world.admin.email, clock, monkeypatch)
    assert clock.slept == [] and err == ""
    assert out.split()[0] == totp_code(secret=_secret(world.admin), moment=window_start)
    assert "(valid for 20 s more)" in out

    # two seconds left: too short to type, so it waits for the next one too
    clock = FakeClock(window_start + period - 2.0)
    out, err = run_demo_totp(world.admin.email, clock, monkeypatch)
    assert clock.slept == [pytest.approx(2.2)] and "expires in 2 s" in err
    assert out.split()[0] == totp_code(secret=_secret(world.admin), moment=window_start + period)


def test_a_real_sign_in_makes_demo_totp_wait_instead_of_printing_the_used_code(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    demo_totp_activate()
    period = totp_period()
    left = period - time.time() % period
    if left < 5:
        time.sleep(left)  # the sign-in and the command below happen in one window
    clock = FakeClock(time.time())
    used_code = run_demo_totp(world.admin.email, clock, monkeypatch)[0].split()[0]
    client = Client()
    client.post(reverse("account_login"), {"login": world.admin.email, "password": "pw-test-1234"})
    response = client.post(reverse("mfa_authenticate"), {"code": used_code})
    assert response.status_code == 302 and response["Location"] == "/calibration/"  # allauth took the code
    # allauth recorded the use in the database; the command sees it and waits for the next window
    clock = FakeClock(time.time())
    out, err = run_demo_totp(world.admin.email, clock, monkeypatch)
    assert "was already used to sign in" in err and len(clock.slept) == 1
    assert out.split()[0] != used_code
