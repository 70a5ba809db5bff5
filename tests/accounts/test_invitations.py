"""Invitation-only sign-up: an admin invites, the emailed single-use link leads to a locked sign-up form."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from accounts.models import ExpertProfile, Invitation, User, invitation_token_hash
from accounts.services import invitation_create, invitation_resend, invitation_revoke
from tests.annotations.factories import person, tradition

pytestmark = pytest.mark.django_db

LINK_RE = re.compile(r"http://testserver(/accounts/invitation/[^/\s]+/)")


def _link(message) -> str:  # type: ignore[no-untyped-def]
    match = LINK_RE.search(message.body)
    assert match, message.body
    return match.group(1)


def _sign_up(client, path: str, email: str, password: str = "a-long-passphrase-42"):  # type: ignore[no-untyped-def]
    response = client.get(path)
    assert response.status_code == 302 and response["Location"] == reverse("account_signup")
    return client.post(reverse("account_signup"), {"email": email, "password1": password, "password2": password,
                                                   "display_name": "New Expert"})


def test_invitation_email_carries_a_single_use_link_and_only_its_hash_is_stored() -> None:
    admin = person(User.Role.ADMIN)
    invitation, token = invitation_create(email="New@Example.org", tradition=tradition("reformed"), invited_by=admin)
    assert invitation.email == "new@example.org"
    assert invitation.token_hash == invitation_token_hash(token) and token not in invitation.token_hash
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["new@example.org"]
    assert message.subject.startswith("[FaithBench]")
    assert _link(message) == f"/accounts/invitation/{token}/"
    assert "Reformed" in message.body


def test_invited_expert_signs_up_with_verified_email_role_and_tradition(client) -> None:
    invitation, _ = invitation_create(email="theologian@example.org", role=User.Role.ADJUDICATOR,
                                      tradition=tradition("orthodox"))
    response = _sign_up(client, _link(mail.outbox[0]), "theologian@example.org")
    assert response.status_code == 302, response.content.decode()[:2000]
    user = User.objects.get(email="theologian@example.org")
    assert user.role == User.Role.ADJUDICATOR and user.display_name == "New Expert"
    assert ExpertProfile.objects.get(user=user).tradition.key == "orthodox"
    assert EmailAddress.objects.get(user=user).verified  # the link proved the inbox: no confirmation mail
    invitation.refresh_from_db()
    assert invitation.accepted_user == user and invitation.status == Invitation.Status.ACCEPTED
    assert response.wsgi_request.user.is_authenticated


def test_invitation_link_works_only_once(client) -> None:
    invitation_create(email="once@example.org")
    path = _link(mail.outbox[0])
    assert _sign_up(client, path, "once@example.org").status_code == 302
    client.logout()
    again = client.get(path)
    assert again.status_code == 404
    assert b"not valid" in again.content


def test_sign_up_is_closed_without_an_invitation(client) -> None:
    response = client.post(reverse("account_signup"), {"email": "walk-in@example.org", "password1": "a-long-pass-42",
                                                       "password2": "a-long-pass-42"})
    assert not User.objects.filter(email="walk-in@example.org").exists()
    assert b"closed" in response.content.lower()


def test_sign_up_must_use_the_invited_address(client) -> None:
    invitation_create(email="invited@example.org")
    response = _sign_up(client, _link(mail.outbox[0]), "someone-else@example.org")
    assert response.status_code == 200
    assert b"your invitation was sent to" in response.content
    assert not User.objects.filter(email="someone-else@example.org").exists()


def test_expired_revoked_and_replaced_links_are_refused(client) -> None:
    invitation, token = invitation_create(email="late@example.org")
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(reverse("accounts:invitation_accept", kwargs={"token": token})).status_code == 404

    invitation, token = invitation_create(email="revoked@example.org")
    invitation_revoke(invitation=invitation)
    assert client.get(reverse("accounts:invitation_accept", kwargs={"token": token})).status_code == 404

    invitation, old = invitation_create(email="resent@example.org")
    new = invitation_resend(invitation=invitation)
    assert client.get(reverse("accounts:invitation_accept", kwargs={"token": old})).status_code == 404
    assert client.get(reverse("accounts:invitation_accept", kwargs={"token": new})).status_code == 302


def test_cannot_invite_an_existing_user_or_an_admin() -> None:
    existing = person()
    with pytest.raises(ValidationError) as exc:
        invitation_create(email=existing.email.upper())
    assert exc.value.code == "user_exists"
    with pytest.raises(ValidationError) as exc:
        invitation_create(email="boss@example.org", role=User.Role.ADMIN)
    assert exc.value.code == "invalid_role"


def test_a_new_invitation_revokes_the_older_pending_one() -> None:
    first, _ = invitation_create(email="twice@example.org")
    invitation_create(email="twice@example.org")
    first.refresh_from_db()
    assert first.status == Invitation.Status.REVOKED


def test_admin_invites_from_the_admin_page(client) -> None:
    admin = person(User.Role.ADMIN)
    client.force_login(admin)
    response = client.post(reverse("admin:accounts_invitation_add"),
                           {"email": "from-admin@example.org", "role": "expert", "tradition": tradition("catholic").pk})
    assert response.status_code == 302
    invitation = Invitation.objects.get(email="from-admin@example.org")
    assert invitation.invited_by == admin and invitation.sent_at is not None
    assert len(mail.outbox) == 1
    response = client.post(reverse("admin:accounts_invitation_changelist"),
                           {"action": "resend", "_selected_action": [invitation.pk]})
    assert response.status_code == 302 and len(mail.outbox) == 2
    assert _link(mail.outbox[0]) != _link(mail.outbox[1])
