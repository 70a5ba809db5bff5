"""Sign-in by email (no usernames), rate-limited failures, password reset, mandatory email verification."""
from __future__ import annotations

import re

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.urls import reverse

from accounts.models import ExpertProfile, User
from accounts.services import user_create
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db


def test_sign_in_by_email_lands_experts_on_their_queue(client) -> None:  # type: ignore[no-untyped-def]
    person(email="expert@faithbench.test", password="pw-correct-123")
    response = client.post(reverse("account_login"), {"login": "Expert@FaithBench.test", "password": "pw-correct-123"})
    assert response.status_code == 302 and response["Location"] == "/scoring/"
    assert b"username" not in client.get(reverse("account_login")).content.lower()


def test_staff_land_on_the_calibration_overview(client) -> None:  # type: ignore[no-untyped-def]
    person(User.Role.ADMIN, email="boss@faithbench.test", password="pw-correct-123")
    response = client.post(reverse("account_login"), {"login": "boss@faithbench.test", "password": "pw-correct-123"})
    assert response["Location"] == "/calibration/"


def test_failed_sign_ins_are_rate_limited_per_account(client) -> None:  # type: ignore[no-untyped-def]
    person(email="target@faithbench.test", password="pw-correct-123")
    for _ in range(5):
        response = client.post(reverse("account_login"), {"login": "target@faithbench.test", "password": "wrong"})
        assert response.status_code == 200 and not response.wsgi_request.user.is_authenticated
    # Sixth attempt within five minutes: refused even with the right password.
    response = client.post(reverse("account_login"), {"login": "target@faithbench.test", "password": "pw-correct-123"})
    assert not response.wsgi_request.user.is_authenticated
    assert b"Too many failed login attempts" in response.content


def test_failed_sign_ins_from_one_address_are_limited_at_30_a_minute_whatever_the_accounts(client) -> None:  # type: ignore[no-untyped-def]
    """The per-IP rule ("30/m/ip" in DJANGO_LOGIN_FAILED_RATE_LIMIT): one address may fail 30 times a minute over
    any accounts (one guess each, so the per-account rule never fires); the 31st attempt from it is refused, even
    with a right password; another address is not affected."""
    from django.core.cache import cache

    cache.clear()
    person(email="victim@faithbench.test", password="pw-correct-123")
    attacker = {"REMOTE_ADDR": "203.0.113.7"}
    for i in range(30):
        response = client.post(reverse("account_login"), {"login": f"guess{i}@faithbench.test", "password": "x"},
                               **attacker)
        assert b"Too many failed login attempts" not in response.content, i
    refused = client.post(reverse("account_login"), {"login": "victim@faithbench.test", "password": "pw-correct-123"},
                          **attacker)
    assert not refused.wsgi_request.user.is_authenticated
    assert b"Too many failed login attempts" in refused.content
    elsewhere = client.post(reverse("account_login"), {"login": "victim@faithbench.test", "password": "pw-correct-123"},
                            REMOTE_ADDR="198.51.100.20")
    assert elsewhere.status_code == 302 and elsewhere.wsgi_request.user.is_authenticated


def test_failed_sign_ins_from_many_addresses_against_one_account_meet_the_per_account_rule(client) -> None:  # type: ignore[no-untyped-def]
    """Spreading guesses over many addresses does not get past the per-account rule ("5/5m/key"): five failures
    from five addresses lock the account for the window, whichever address tries next."""
    from django.core.cache import cache

    cache.clear()
    person(email="spread@faithbench.test", password="pw-correct-123")
    for i in range(5):
        client.post(reverse("account_login"), {"login": "spread@faithbench.test", "password": "wrong"},
                    REMOTE_ADDR=f"192.0.2.{10 + i}")
    refused = client.post(reverse("account_login"), {"login": "spread@faithbench.test", "password": "pw-correct-123"},
                          REMOTE_ADDR="192.0.2.99")
    assert not refused.wsgi_request.user.is_authenticated
    assert b"Too many failed login attempts" in refused.content


def test_password_reset_sends_a_link(client) -> None:  # type: ignore[no-untyped-def]
    person(email="forgetful@faithbench.test")
    response = client.post(reverse("account_reset_password"), {"email": "forgetful@faithbench.test"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1 and "/accounts/password/reset/key/" in mail.outbox[0].body


def test_unverified_email_must_be_confirmed_before_sign_in(client) -> None:  # type: ignore[no-untyped-def]
    user_create(email="unverified@faithbench.test", password="pw-correct-123", email_verified=False)
    response = client.post(reverse("account_login"), {"login": "unverified@faithbench.test", "password": "pw-correct-123"})
    assert response.status_code == 302 and "confirm-email" in response["Location"]
    assert not client.get("/scoring/").wsgi_request.user.is_authenticated
    assert len(mail.outbox) == 1
    assert not EmailAddress.objects.get(email="unverified@faithbench.test").verified


def test_expert_edits_their_own_qualifications(client) -> None:  # type: ignore[no-untyped-def]
    expert = person()
    client.force_login(expert)
    response = client.post(reverse("accounts:profile"), {"degree": "M.Div.", "institution": "Princeton Seminary",
                                                         "languages": "Greek, Hebrew", "qualifications": "Pastor"})
    assert response.status_code == 302
    expert.expert_profile.refresh_from_db()
    assert expert.expert_profile.language_list == ["Greek", "Hebrew"]
    assert expert.expert_profile.degree == "M.Div."


def test_a_too_long_profile_entry_is_shown_with_its_error_and_nothing_is_saved(client) -> None:  # type: ignore[no-untyped-def]
    expert = person()
    client.force_login(expert)
    before = ExpertProfile.objects.get(user=expert)
    response = client.post(reverse("accounts:profile"), {"degree": "D" * 201, "institution": "Princeton Seminary",
                                                         "languages": "Greek", "qualifications": ""})
    assert response.status_code == 422  # refused, with its error (never a 200 that looks saved)
    html = response.content.decode()
    assert re.search(r'<ul class="errorlist" id="id_degree_error"><li>Ensure this value has at most 200 characters '
                     r'\(it has 201\).</li></ul>\s*<p>\s*<label for="id_degree">', html)
    after = ExpertProfile.objects.get(user=expert)
    assert (after.degree, after.institution, after.updated_at) == (before.degree, before.institution, before.updated_at)
