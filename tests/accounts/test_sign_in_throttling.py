"""Sign-in throttling per account AND per IP: a room of experts behind one NAT all get in; guessing one
account's password is stopped; behind a proxy, DJANGO_TRUSTED_PROXY_COUNT gives each client its own bucket."""
from __future__ import annotations

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
ROOM_IP = "203.0.113.7"  # one NAT address for the whole room (TEST-NET-3)


def sign_in(client: Client, email: str, password: str, **headers: str) -> bool:
    response = client.post(reverse("account_login"), {"login": email, "password": password}, **headers)
    return response.wsgi_request.user.is_authenticated


def test_forty_experts_behind_one_nat_all_sign_in_within_a_minute_even_with_typos() -> None:
    experts = [person(email=f"room{i:02d}@faithbench.test", password="pw-correct-123") for i in range(40)]
    signed_in = 0
    for i, expert in enumerate(experts):
        client = Client(REMOTE_ADDR=ROOM_IP)
        if i % 3 == 0:  # one in three mistypes the password first (14 failures from one address)
            assert not sign_in(client, expert.email, "pw-typo-123")
        signed_in += sign_in(client, expert.email, "pw-correct-123")
    assert signed_in == 40


def test_ten_wrong_passwords_on_one_account_are_blocked_from_any_address() -> None:
    target = person(email="target@faithbench.test", password="pw-correct-123")
    results = [sign_in(Client(REMOTE_ADDR=f"198.51.100.{i}"), target.email, f"guess-{i}") for i in range(10)]
    assert results == [False] * 10
    # the account is locked for the window: the right password from a fresh address is refused too
    client = Client(REMOTE_ADDR="198.51.100.200")
    response = client.post(reverse("account_login"), {"login": target.email, "password": "pw-correct-123"})
    assert not response.wsgi_request.user.is_authenticated
    assert b"Too many failed login attempts" in response.content
    # ...while other accounts from the same addresses are unaffected
    other = person(email="bystander@faithbench.test", password="pw-correct-123")
    assert sign_in(Client(REMOTE_ADDR="198.51.100.3"), other.email, "pw-correct-123")


def test_one_address_spraying_wrong_passwords_over_many_accounts_is_blocked() -> None:
    accounts = [person(email=f"spray{i:02d}@faithbench.test", password="pw-correct-123") for i in range(31)]
    client = Client(REMOTE_ADDR="192.0.2.66")
    for account in accounts[:30]:
        assert not sign_in(client, account.email, "Winter2026!")
    response = client.post(reverse("account_login"), {"login": accounts[30].email, "password": "pw-correct-123"})
    assert not response.wsgi_request.user.is_authenticated  # the 31st failure-limited attempt is refused


@override_settings(ALLAUTH_TRUSTED_PROXY_COUNT=1)
def test_behind_a_proxy_each_client_address_has_its_own_bucket() -> None:
    """Every request arrives from the proxy (REMOTE_ADDR 10.0.0.2); X-Forwarded-For names the client."""
    accounts = [person(email=f"proxied{i:02d}@faithbench.test", password="pw-correct-123") for i in range(31)]
    attacker = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="192.0.2.66")
    for account in accounts[:30]:
        assert not sign_in(attacker, account.email, "Winter2026!")
    assert not sign_in(attacker, accounts[30].email, "pw-correct-123")  # the attacker's address is throttled
    expert = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert sign_in(expert, accounts[30].email, "pw-correct-123")  # through the same proxy, not throttled


def test_without_the_proxy_count_everyone_behind_the_proxy_shares_one_bucket() -> None:
    """Why the setting matters (and why X-Forwarded-For is ignored unless it is set: a client could forge it)."""
    accounts = [person(email=f"shared{i:02d}@faithbench.test", password="pw-correct-123") for i in range(31)]
    attacker = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="192.0.2.66")
    for account in accounts[:30]:
        assert not sign_in(attacker, account.email, "Winter2026!")
    expert = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert not sign_in(expert, accounts[30].email, "pw-correct-123")
