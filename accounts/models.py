"""Users sign in by email; a role says what they may do; experts record qualifications; admins invite."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.utils import timezone


class UserManager(BaseUserManager["User"]):
    """Manager for an email-identified user with no username."""

    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra: object) -> User:
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        extra.setdefault("role", User.Role.ADMIN)
        return self._create_user(email, password, **extra)


class User(AbstractUser):
    """A person who signs in with an email address."""

    class Role(models.TextChoices):
        EXPERT = "expert", "Expert"
        ADJUDICATOR = "adjudicator", "Adjudicator (panel lead)"
        ADMIN = "admin", "Admin"

    username = None  # type: ignore[assignment]  # sign-in is by email: the username column is removed
    email = models.EmailField("email address", unique=True)
    display_name = models.CharField(max_length=150, blank=True)
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.EXPERT)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    # The stubs type AbstractUser.objects as contrib's UserManager, whose create_user needs a username.
    objects: ClassVar[UserManager] = UserManager()  # type: ignore[assignment]

    class Meta:
        ordering = ["email"]
        verbose_name = "user"
        verbose_name_plural = "users"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role__in=["expert", "adjudicator", "admin"]), name="user_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.display_name or self.email

    @property
    def is_admin_role(self) -> bool:
        return self.role == self.Role.ADMIN or self.is_superuser

    @property
    def is_adjudicator(self) -> bool:
        return self.role == self.Role.ADJUDICATOR

    @property
    def requires_mfa(self) -> bool:
        """Staff, admins and adjudicators (panel leads) must sign in with TOTP."""
        return bool(self.is_staff or self.is_superuser or self.role in (self.Role.ADMIN, self.Role.ADJUDICATOR))


class ExpertProfile(models.Model):
    """An expert's recorded qualifications (methodology §6.1.1 asks for them per panel)."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="expert_profile")
    tradition = models.ForeignKey(
        "evaluations.Tradition", null=True, blank=True, on_delete=models.PROTECT, related_name="expert_profiles",
        help_text="The tradition the expert belongs to and scores for; empty for tradition-neutral experts.",
    )
    degree = models.CharField(max_length=200, blank=True, help_text="Highest theological degree, e.g. M.Div., Th.D.")
    institution = models.CharField(max_length=200, blank=True, help_text="Awarding or current institution.")
    languages = models.CharField(
        max_length=200, blank=True, help_text="Comma-separated working languages, e.g. Greek, Hebrew, Latin."
    )
    qualifications = models.TextField(
        blank=True, help_text="Other qualifications: faculty or pastoral experience, publications."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user__email"]
        verbose_name = "expert profile"

    def __str__(self) -> str:
        return f"Profile of {self.user}"

    @property
    def language_list(self) -> list[str]:
        return [part.strip() for part in self.languages.split(",") if part.strip()]


def invitation_expiry_default() -> datetime:
    return timezone.now() + timedelta(days=getattr(settings, "ACCOUNTS_INVITATION_DAYS", 14))


def invitation_token_hash(token: str) -> str:
    """Only a SHA-256 of the token is stored: a database leak does not leak usable sign-up links."""
    return hashlib.sha256(token.encode()).hexdigest()


class InvitationQuerySet(models.QuerySet["Invitation"]):
    def pending(self) -> InvitationQuerySet:
        return self.filter(accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now())


class Invitation(models.Model):
    """An admin's invitation to sign up; the emailed link carries a single-use token."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REVOKED = "revoked", "Revoked"
        EXPIRED = "expired", "Expired"

    email = models.EmailField()
    role = models.CharField(
        max_length=20, choices=[(User.Role.EXPERT, "Expert"), (User.Role.ADJUDICATOR, "Adjudicator (panel lead)")],
        default=User.Role.EXPERT, help_text="Admins are created by a superuser, never by invitation.",
    )
    tradition = models.ForeignKey(
        "evaluations.Tradition", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Copied to the new expert's profile.",
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="invitations_sent")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(default=invitation_expiry_default)
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_user = models.OneToOneField(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="accepted_invitation"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "invitation"
        constraints = [
            models.CheckConstraint(condition=models.Q(role__in=["expert", "adjudicator"]), name="invitation_role_valid"),
            models.CheckConstraint(
                condition=models.Q(accepted_at__isnull=True) | models.Q(revoked_at__isnull=True),
                name="invitation_not_both_accepted_and_revoked",
            ),
        ]

    def __str__(self) -> str:
        return f"Invitation for {self.email} ({self.get_role_display()})"

    @property
    def status(self) -> str:
        if self.accepted_at:
            return self.Status.ACCEPTED
        if self.revoked_at:
            return self.Status.REVOKED
        if self.expires_at <= timezone.now():
            return self.Status.EXPIRED
        return self.Status.PENDING

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING
