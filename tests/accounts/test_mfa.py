"""TOTP is required for staff, admins and adjudicators: until it is active, every page leads to its set-up."""
from __future__ import annotations

import time

import pytest
from allauth.mfa.models import Authenticator
from django.test import override_settings
from django.urls import reverse

from accounts.models import User
from accounts.totp import totp_activate, totp_code, totp_period, totp_secret_new
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db

SETUP = "/accounts/2fa/totp/activate/"


def _activate_totp(user: User) -> str:
    secret = totp_secret_new()
    totp_activate(user=user, secret=secret)
    return secret


def _code_valid_for_a_while(secret: str) -> str:
    """The current code, after waiting out a period's last two seconds so it is still valid when posted."""
    left = totp_period() - time.time() % totp_period()
    if left < 2:
        time.sleep(left)
    return totp_code(secret=secret, moment=time.time())


def test_the_test_settings_turn_the_requirement_off_for_other_tests(settings) -> None:  # type: ignore[no-untyped-def]
    assert settings.ACCOUNTS_MFA_REQUIRED is False


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
@pytest.mark.parametrize("role", [User.Role.ADJUDICATOR, User.Role.ADMIN])
def test_staff_and_adjudicators_without_totp_are_sent_to_the_setup_page(client, role) -> None:  # type: ignore[no-untyped-def]
    client.force_login(person(role))
    for url in ("/", "/scoring/", "/calibration/", "/admin/", "/scoring/lead/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"] == SETUP, url
    htmx = client.post("/scoring/a/anything/draft/", HTTP_HX_REQUEST="true")
    assert htmx.status_code == 204 and htmx["HX-Redirect"] == SETUP
    # The MFA pages, the rest of the account pages and sign-out stay reachable.
    assert client.get(reverse("mfa_index")).status_code == 200
    assert client.get(reverse("account_email")).status_code == 200
    assert client.get(reverse("account_logout")).status_code == 200


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
def test_experts_are_not_forced_to_set_up_totp(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(person(User.Role.EXPERT))
    assert client.get("/scoring/").status_code == 200


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
def test_with_an_active_totp_authenticator_pages_open(client) -> None:  # type: ignore[no-untyped-def]
    lead = person(User.Role.ADJUDICATOR)
    _activate_totp(lead)
    assert Authenticator.objects.filter(user=lead, type="totp").exists()
    client.force_login(lead)
    assert client.get("/scoring/lead/").status_code == 200


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
def test_sign_in_with_totp_asks_for_the_code(client) -> None:  # type: ignore[no-untyped-def]
    lead = person(User.Role.ADJUDICATOR, email="totp-lead@faithbench.test", password="pw-lead-9876")
    secret = _activate_totp(lead)
    response = client.post(reverse("account_login"), {"login": lead.email, "password": "pw-lead-9876"})
    assert response.status_code == 302 and response["Location"] == reverse("mfa_authenticate")
    assert client.get("/scoring/lead/").status_code == 302  # not signed in until the code is given
    # allauth's own check accepts the code accounts.totp computes; a wrong one is refused.
    code = _code_valid_for_a_while(secret)
    wrong = f"{(int(code) + 1) % 10 ** len(code):0{len(code)}d}"
    assert client.post(reverse("mfa_authenticate"), {"code": wrong}).status_code == 200
    assert client.get("/scoring/lead/").status_code == 302
    response = client.post(reverse("mfa_authenticate"), {"code": code})
    assert response.status_code == 302
    assert client.get("/scoring/lead/").status_code == 200
