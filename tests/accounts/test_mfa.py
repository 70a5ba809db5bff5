"""TOTP is required for staff, admins and adjudicators: until it is active, every page leads to its set-up."""
from __future__ import annotations

import pytest
from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value, yield_hotp_counters_from_time
from django.test import override_settings
from django.urls import reverse

from accounts.models import User
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db

SETUP = "/accounts/2fa/totp/activate/"


def _activate_totp(user: User) -> str:
    from allauth.mfa.totp.internal.auth import TOTP, generate_totp_secret

    secret = generate_totp_secret()
    TOTP.activate(user, secret)
    return secret


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
    code = format_hotp_value(hotp_value(secret, next(yield_hotp_counters_from_time())))
    response = client.post(reverse("mfa_authenticate"), {"code": code})
    assert response.status_code == 302
    assert client.get("/scoring/lead/").status_code == 200
