"""Reads on accounts for pages, forms and commands: users, profiles, API tokens, notifications."""
from __future__ import annotations

from allauth.mfa.models import Authenticator
from django.db.models import QuerySet

from .models import ApiToken, ExpertProfile, Notification, User


def user_by_email(*, email: str) -> User | None:
    """The user with this email address (case-insensitive), or None."""
    return User.objects.filter(email__iexact=email.strip()).first()


def user_email_taken(*, email: str) -> bool:
    """Whether an account already uses this email address (case-insensitive)."""
    return User.objects.filter(email__iexact=email).exists()


def expert_profile_get(*, user: User) -> ExpertProfile | None:
    """The user's expert profile with its tradition, or None (admins have none)."""
    return ExpertProfile.objects.select_related("tradition").filter(user=user).first()


def api_token_list(*, user: User | None = None) -> QuerySet[ApiToken]:
    """API tokens with their users, all of them or one user's."""
    tokens = ApiToken.objects.select_related("user")
    return tokens if user is None else tokens.filter(user=user)


def api_tokens_of(*, user: User) -> QuerySet[ApiToken]:
    """One person's API tokens (their user is the person: no join)."""
    return ApiToken.objects.filter(user=user)


def api_token_get(*, pk: int) -> ApiToken | None:
    """The API token with this id, or None."""
    return ApiToken.objects.filter(pk=pk).first()


def notifications_of(*, user: User) -> QuerySet[Notification]:
    """One person's notifications in the model's order (newest first)."""
    return Notification.objects.filter(user=user)


def totp_authenticator_get(*, user: User) -> Authenticator | None:
    """The user's TOTP authenticator, or None."""
    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).first()


def users_active_non_admin() -> QuerySet[User]:
    """Active users other than admins, by name then email (a form's choice of experts)."""
    return User.objects.filter(is_active=True).exclude(role=User.Role.ADMIN).order_by("display_name", "email")
