"""Writes on accounts: users with verified email, expert profiles, invitations (single-use tokens)."""
from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta

from allauth.account.models import EmailAddress
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import models, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent
from audit.services import audit_record
from evaluations.models import Tradition

from .mfa import mfa_satisfied
from .models import (
    ApiToken,
    ExpertProfile,
    Invitation,
    User,
    api_token_hash,
    invitation_expiry_default,
    invitation_token_hash,
)

API_TOKEN_PREFIX = "fbt_"  # marks the string as a FaithBench token (secret scanners, logs)


@transaction.atomic
def user_create(
    *,
    email: str,
    password: str | None,
    role: str = User.Role.EXPERT,
    display_name: str = "",
    is_staff: bool = False,
    is_superuser: bool = False,
    tradition: Tradition | None = None,
    degree: str = "",
    institution: str = "",
    languages: str = "",
    email_verified: bool = True,
) -> User:
    """Create a user with a primary (verified) allauth email address and, for non-admins, an expert profile."""
    email = email.strip().lower()
    if User.objects.filter(email__iexact=email).exists():
        raise ValidationError(f"a user with the email {email} already exists", code="user_exists")
    user = User.objects.create_user(
        email=email, password=password, role=role, display_name=display_name,
        is_staff=is_staff or role == User.Role.ADMIN, is_superuser=is_superuser,
    )
    EmailAddress.objects.create(user=user, email=email, primary=True, verified=email_verified)
    if role != User.Role.ADMIN:
        ExpertProfile.objects.create(
            user=user, tradition=tradition, degree=degree, institution=institution, languages=languages
        )
    return user


def _invitation_send(*, invitation: Invitation, token: str) -> None:
    # Rendered here rather than by allauth's adapter: invitations are also sent outside a request
    # (admin actions, scripts), where allauth cannot work out the site.
    link = str(settings.SITE_URL).rstrip("/") + reverse("accounts:invitation_accept", kwargs={"token": token})
    context = {"invitation": invitation, "link": link, "days": settings.ACCOUNTS_INVITATION_DAYS}
    prefix = getattr(settings, "ACCOUNT_EMAIL_SUBJECT_PREFIX", "") or ""
    subject = prefix + " ".join(render_to_string("account/email/invitation_subject.txt", context).split())
    body = render_to_string("account/email/invitation_message.txt", context)
    send_mail(subject, body, None, [invitation.email])
    invitation.sent_at = timezone.now()
    invitation.save(update_fields=["sent_at"])


@transaction.atomic
def invitation_create(
    *, email: str, role: str = User.Role.EXPERT, tradition: Tradition | None = None, invited_by: User | None = None
) -> tuple[Invitation, str]:
    """Invite someone by email: revoke their older pending invitations, store a token hash, email the link."""
    email = email.strip().lower()
    if role not in (User.Role.EXPERT, User.Role.ADJUDICATOR):
        raise ValidationError("only experts and adjudicators are invited; admins are created by a superuser",
                              code="invalid_role")
    if User.objects.filter(email__iexact=email).exists():
        raise ValidationError(f"{email} already has an account", code="user_exists")
    Invitation.objects.pending().filter(email__iexact=email).update(revoked_at=timezone.now())
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        email=email, role=role, tradition=tradition, invited_by=invited_by, token_hash=invitation_token_hash(token)
    )
    _invitation_send(invitation=invitation, token=token)
    return invitation, token


@transaction.atomic
def invitation_resend(*, invitation: Invitation) -> str:
    """Issue a fresh token (the old link stops working), extend the expiry and email the new link."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.accepted_at or invitation.revoked_at:
        raise ValidationError("this invitation was already used or revoked", code="not_pending")
    token = secrets.token_urlsafe(32)
    invitation.token_hash = invitation_token_hash(token)
    invitation.expires_at = invitation_expiry_default()
    invitation.save(update_fields=["token_hash", "expires_at"])
    _invitation_send(invitation=invitation, token=token)
    return token


def invitation_revoke(*, invitation: Invitation) -> None:
    """Revoke a pending invitation; its link stops working."""
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).update(revoked_at=timezone.now())


def invitation_pending_get(*, token: str) -> Invitation | None:
    """The pending invitation whose token this is, or None (unknown, used, revoked or expired)."""
    if not token or len(token) > 128:
        return None
    return Invitation.objects.pending().filter(token_hash=invitation_token_hash(token)).first()


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Invitation:
    """Mark the invitation used by the new user (once only) and apply its role and tradition."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if not invitation.is_pending:
        raise ValidationError("this invitation link was already used, revoked or has expired", code="not_pending")
    if invitation.email.lower() != user.email.lower():
        raise ValidationError("the invitation is for another email address", code="email_mismatch")
    invitation.accepted_at = timezone.now()
    invitation.accepted_user = user
    invitation.save(update_fields=["accepted_at", "accepted_user"])
    user.role = invitation.role
    user.save(update_fields=["role"])
    ExpertProfile.objects.update_or_create(user=user, defaults={"tradition": invitation.tradition})
    return invitation


def profile_update(*, user: User, degree: str, institution: str, languages: str, qualifications: str) -> ExpertProfile:
    """An expert updates their own qualifications (the tradition is set by an admin)."""
    profile, _ = ExpertProfile.objects.get_or_create(user=user)
    profile.degree, profile.institution = degree.strip(), institution.strip()
    profile.languages, profile.qualifications = languages.strip(), qualifications.strip()
    profile.save()
    return profile


def api_token_days_default() -> int:
    return int(getattr(settings, "ACCOUNTS_API_TOKEN_DAYS", 90))


def api_token_days_max() -> int:
    return int(getattr(settings, "ACCOUNTS_API_TOKEN_MAX_DAYS", 365))


@transaction.atomic
def api_token_create(*, user: User, name: str, scopes: list[str], days: int | None = None) -> tuple[ApiToken, str]:
    """Issue a token for `user` (whose MFA must be satisfied); returns it and its secret, which is never stored."""
    days = api_token_days_default() if days is None else days
    errors: dict[str, list[str]] = {}
    if not user.is_active:
        errors.setdefault("user", []).append("inactive users cannot have API tokens")
    elif not mfa_satisfied(user):
        errors.setdefault("user", []).append(
            "activate a TOTP authenticator first: staff, admins and adjudicators need two-factor sign-in "
            "before they can create API tokens")
    if not name.strip():
        errors.setdefault("name", []).append("give the token a name")
    unknown = sorted(set(scopes) - set(ApiToken.Scope.values))
    if unknown:
        errors.setdefault("scopes", []).append(f"unknown scope(s): {', '.join(unknown)}")
    if not scopes:
        errors.setdefault("scopes", []).append("choose at least one scope")
    if not 1 <= days <= api_token_days_max():
        errors.setdefault("days", []).append(f"a token lasts between 1 and {api_token_days_max()} days")
    if errors:
        raise ValidationError(errors, code="invalid_token")
    secret = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name.strip(), prefix=secret[:len(API_TOKEN_PREFIX) + 6], key_hash=api_token_hash(secret),
        scopes=[scope for scope in ApiToken.Scope.values if scope in scopes],
        expires_at=timezone.now() + timedelta(days=days),
    )
    audit_record(action=AuditEvent.Action.TOKEN_CREATED, subject_user=user, target_type="API token",
                 target_id=token.pk, target=f"{token.name[:80]} ({token.prefix}…)",
                 detail={"scopes": token.scopes, "expires_at": token.expires_at.isoformat()})
    return token, secret


@transaction.atomic
def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke a token (idempotent: the first revocation time is kept); requests with it fail from now on."""
    if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
        audit_record(action=AuditEvent.Action.TOKEN_REVOKED, subject_user_id=token.user_id, target_type="API token",
                     target_id=token.pk, target=f"{token.name[:80]} ({token.prefix}…)")


def api_token_touch(*, token: ApiToken) -> None:
    """Record a use, at most once per ACCOUNTS_API_TOKEN_TOUCH_SECONDS (default 60): one UPDATE, no lock."""
    now = timezone.now()
    interval = timedelta(seconds=int(getattr(settings, "ACCOUNTS_API_TOKEN_TOUCH_SECONDS", 60)))
    if token.last_used_at is not None and now - token.last_used_at < interval:
        return
    # The condition repeats in SQL so that concurrent requests write once per interval, not once each.
    stale = models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lt=now - interval)
    ApiToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


def user_email_mode_set(*, user: User, mode: str) -> None:
    """Set how a person's notifications are emailed (one of `User.EmailMode`); one UPDATE, no signals."""
    if mode not in User.EmailMode.values:
        raise ValidationError({"email_mode": ["Choose one of the email options."]}, code="invalid_email_mode")
    User.objects.filter(pk=user.pk).update(email_mode=mode)


@transaction.atomic
def invited_signup_save(*, save: Callable[[], User], display_name: str = "") -> User:
    """Save an invited sign-up in one transaction: `save` (allauth's form save, which accepts the invitation)
    and the display name; when the invitation was used by a concurrent sign-up, no account is left behind."""
    user = save()
    if display_name:
        user.display_name = display_name
        user.save(update_fields=["display_name"])
    return user

def interface_language_codes() -> set[str]:
    """The interface languages a user may choose: settings.LANGUAGES's codes."""
    return {code for code, _ in settings.LANGUAGES}


@transaction.atomic
def user_language_set(*, user: User, language: str) -> User:
    """Save a user's interface language ("" = follow the browser); an unknown code is refused, naming the field."""
    language = language.strip()
    if language and language not in interface_language_codes():
        raise ValidationError({"language": f"unknown interface language {language!r}; expected one of "
                                           f"{', '.join(sorted(interface_language_codes()))}"})
    if user.language != language:
        user.language = language
        user.save(update_fields=["language"])
    return user


def experts_without_scoring_languages() -> list[str]:
    """Active experts and leads whose profile lists no scoring language (they are treated as English-only)."""
    users = (User.objects.filter(is_active=True, role__in=[User.Role.EXPERT, User.Role.ADJUDICATOR])
             .filter(models.Q(expert_profile__isnull=True) | models.Q(expert_profile__scoring_languages=[]))
             .order_by("email"))
    return [str(u) for u in users]
