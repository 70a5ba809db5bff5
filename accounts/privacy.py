"""Personal data: a person's own data as JSON (GDPR Art. 15 access, Art. 20 portability) and pseudonymisation on
request (Art. 17 erasure) — docs/data-protection.md.

Every app that stores something about a person contributes a *section*: what to export, and what to erase when
the person is pseudonymised. Accounts' own sections are here; the apps above accounts (scores, panels, reviews,
Delphi answers, evidence) register theirs at start-up (`config/personal_data.py`), since accounts may not import
them. Pseudonymisation erases identity (name, e-mail addresses, sign-in ability, qualifications) and keeps the
person's scores under the same user id, now named by a stable pseudonym, so every stored report still reproduces:
the reports' inputs name raters by id, never by name or address.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from allauth.account.models import EmailAddress
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent
from audit.selectors import audit_event_row, audit_events_about
from audit.services import audit_record

from .models import ApiToken, ExpertProfile, Invitation, Notification, User
from .services import api_token_revoke

PSEUDONYM_DOMAIN = "pseudonymised.invalid"  # RFC 2606: never a deliverable address


@dataclass(frozen=True)
class PersonalDataSection:
    """One part of a person's data: `export(user)` returns plain JSON data; `erase(user, pseudonym)` removes
    identifying copies when the person is pseudonymised (None: the section holds no identity of its own)."""

    name: str
    export: Callable[[User], Any]
    erase: Callable[[User, str], None] | None = None


_sections: dict[str, PersonalDataSection] = {}


def personal_data_register(section: PersonalDataSection) -> None:
    """Add a section (apps call this once, at start-up); a name registered twice keeps the last one."""
    _sections[section.name] = section


def personal_data_sections() -> list[PersonalDataSection]:
    return list(_sections.values())


def pseudonym_for(user: User) -> str:
    """The stable pseudonym of a person: derived from the user id alone, so it never changes and reveals nothing."""
    return f"pseudonym-{user.pk}"


def is_pseudonymised(user: User) -> bool:
    return user.email == f"{pseudonym_for(user)}@{PSEUDONYM_DOMAIN}"


# --- accounts' own sections ---------------------------------------------------------------------------------

def _account_export(user: User) -> dict[str, Any]:
    profile = ExpertProfile.objects.select_related("tradition").filter(user=user).first()
    return {
        "id": user.pk, "email": user.email, "display_name": user.display_name, "first_name": user.first_name,
        "last_name": user.last_name, "role": user.role, "is_active": user.is_active,
        "date_joined": user.date_joined.isoformat(), "last_login": user.last_login.isoformat() if user.last_login else None,
        "email_mode": user.email_mode,
        "email_addresses": list(EmailAddress.objects.filter(user=user).values("email", "verified", "primary")),
        "profile": None if profile is None else {
            "tradition": profile.tradition.key if profile.tradition else None, "degree": profile.degree,
            "institution": profile.institution, "languages": profile.languages,
            "qualifications": profile.qualifications, "updated_at": profile.updated_at.isoformat(),
        },
    }


def _tokens_export(user: User) -> list[dict[str, Any]]:
    return [{"name": t.name, "prefix": t.prefix, "scopes": t.scopes, "created_at": t.created_at.isoformat(),
             "expires_at": t.expires_at.isoformat(), "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
             "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None}
            for t in ApiToken.objects.filter(user=user)]


def _notifications_export(user: User) -> list[dict[str, Any]]:
    return [{"kind": n.kind, "text": n.text, "link": n.link, "created_at": n.created_at.isoformat(),
             "read_at": n.read_at.isoformat() if n.read_at else None}
            for n in Notification.objects.filter(user=user)]


def _audit_export(user: User) -> list[dict[str, Any]]:
    return [audit_event_row(event) for event in audit_events_about(user=user)]


def _notifications_erase(user: User, pseudonym: str) -> None:
    Notification.objects.filter(user=user).delete()


def _invitations_erase(user: User, pseudonym: str) -> None:
    address = f"{pseudonym}@{PSEUDONYM_DOMAIN}"
    Invitation.objects.filter(accepted_user=user).update(email=address)
    Invitation.objects.filter(email__iexact=user.email).update(email=address)


for _section in (
    PersonalDataSection("account", _account_export),
    PersonalDataSection("api_tokens", _tokens_export),
    PersonalDataSection("notifications", _notifications_export, _notifications_erase),
    PersonalDataSection("invitations", lambda user: [], _invitations_erase),
    PersonalDataSection("audit_trail", _audit_export),
):
    personal_data_register(_section)


# --- the two requests -------------------------------------------------------------------------------------

@transaction.atomic
def personal_data_export(*, user: User, requested_by: User) -> dict[str, Any]:
    """Everything stored about `user`, by section, as JSON-ready data; the request is recorded in the audit trail
    (in this transaction). Only the person themself asks this from the site (`accounts:my_data`)."""
    data: dict[str, Any] = {"format": "faithbench-personal-data/1", "generated_at": timezone.now().isoformat(),
                            "user_id": user.pk}
    for section in personal_data_sections():
        data[section.name] = section.export(user)
    audit_record(action=AuditEvent.Action.DATA_EXPORT, actor=requested_by, subject_user=user, target_type="user",
                 target_id=user.pk, detail={"sections": [s.name for s in personal_data_sections()]})
    return data


@transaction.atomic
def user_pseudonymise(*, user: User, actor: User | None, reference: str = "") -> User:
    """Erase a person's identity on their request and keep their work under a stable pseudonym.

    Name, e-mail (here and in allauth), qualifications, password, two-factor devices and sign-in ability go;
    API tokens are revoked; every registered section erases its identifying copies (notifications, invitations,
    the rater keys of stored reports). Scores, rationales, reviews and answers stay, under the same user id, so
    stored reports reproduce with unchanged input hashes. Recorded in the audit trail; refused twice.
    """
    user = User.objects.select_for_update().get(pk=user.pk)
    if is_pseudonymised(user):
        raise ValidationError(f"user #{user.pk} is already pseudonymised", code="already_pseudonymised")
    if actor is not None and actor.pk == user.pk:
        raise ValidationError("ask another admin: you cannot pseudonymise yourself", code="self")
    pseudonym = pseudonym_for(user)
    for section in personal_data_sections():
        if section.erase is not None:
            section.erase(user, pseudonym)  # before the address changes: some sections find copies by it
    from allauth.mfa.models import Authenticator  # needs the app registry (allauth.mfa checks its settings)

    Authenticator.objects.filter(user=user).delete()
    EmailAddress.objects.filter(user=user).delete()
    for token in ApiToken.objects.active().filter(user=user):
        api_token_revoke(token=token)
    ExpertProfile.objects.filter(user=user).update(degree="", institution="", languages="", qualifications="")
    user.email = f"{pseudonym}@{PSEUDONYM_DOMAIN}"
    user.display_name, user.first_name, user.last_name = pseudonym, "", ""
    user.set_unusable_password()
    user.is_active = False
    user.save()
    audit_record(action=AuditEvent.Action.PSEUDONYMISED, actor=actor, subject_user=user, target_type="user",
                 target_id=user.pk, target=pseudonym, detail={"reference": reference.strip()[:200]})
    return user
