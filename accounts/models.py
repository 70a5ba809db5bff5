"""Users sign in by email; a role says what they may do; experts record qualifications; admins invite."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from access.policy import is_admin, is_lead


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
        EXPERT = "expert", _("Expert")
        ADJUDICATOR = "adjudicator", _("Adjudicator (panel lead)")
        ADMIN = "admin", _("Admin")

    username = None  # type: ignore[assignment]  # sign-in is by email: the username column is removed
    email = models.EmailField("email address", unique=True)
    display_name = models.CharField(max_length=150, blank=True)
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.EXPERT)

    class EmailMode(models.TextChoices):
        IMMEDIATE = "immediate", "Email each notification at once"
        DIGEST = "digest", "One email a day with everything new"
        NONE = "none", "No email (the inbox only)"

    email_mode = models.CharField(max_length=10, choices=EmailMode.choices, default=EmailMode.IMMEDIATE,
                                  help_text="How notifications reach this person by email.")
    # No `choices`: the interface languages are settings.LANGUAGES (a new language must not need a migration);
    # accounts.services.user_language_set checks the value against them.
    language = models.CharField(
        max_length=12, blank=True,
        help_text="Interface language (a code of settings.LANGUAGES); empty: the browser's preference.",
    )

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

    def save(self, *args: object, **kwargs: object) -> None:
        """The Admin role and superusers always carry Django's staff flag (`access.policy.is_admin`)."""
        if (self.role == self.Role.ADMIN or self.is_superuser) and not self.is_staff:
            self.is_staff = True
            fields = kwargs.get("update_fields")
            if fields is not None:
                kwargs["update_fields"] = {*fields, "is_staff"}  # type: ignore[misc]
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def requires_mfa(self) -> bool:
        """Admins and leads (`access.policy`: Adjudicators and every panel's lead) must sign in with TOTP."""
        return is_admin(self) or is_lead(self)


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
    scoring_languages = models.JSONField(
        default=list, blank=True,
        help_text="BCP 47 tags of the languages the expert scores cases in, e.g. [\"es\", \"en\"]. Draws and "
                  "assignments give them only cases in these languages; empty: English only (the admin warns).",
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

    @property
    def scores_in(self) -> list[str]:
        """The languages the expert scores in; none recorded: English only (issue 35)."""
        return list(self.scoring_languages) or ["en"]

    def clean(self) -> None:
        from evaluations.domain import language_tag_clean

        tags = self.scoring_languages if isinstance(self.scoring_languages, list) else None
        if tags is None or not all(isinstance(t, str) for t in tags):
            raise ValidationError({"scoring_languages": "a list of language tags, e.g. [\"es\", \"en\"]"})
        try:
            self.scoring_languages = [language_tag_clean(t) for t in tags]
        except ValueError as exc:
            raise ValidationError({"scoring_languages": str(exc)}) from exc


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


def api_token_hash(secret: str) -> str:
    """Only a SHA-256 of an API token is stored (the secret has 256 random bits, so a fast hash suffices)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def api_token_expiry_default() -> datetime:
    return timezone.now() + timedelta(days=getattr(settings, "ACCOUNTS_API_TOKEN_DAYS", 90))


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())


class ApiToken(models.Model):
    """A personal API token: hashed, scoped, expiring, revocable; its secret is shown once, at creation."""

    class Scope(models.TextChoices):
        REPORTS_READ = "reports:read", "Read reports, gold labels and the leaderboard"
        DATA_WRITE = "data:write", "Write data (import, request report versions)"
        JUDGE_RUN = "judge:run", "Start and cancel judge runs"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        EXPIRED = "expired", "Expired"
        REVOKED = "revoked", "Revoked"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'nightly report export'.")
    prefix = models.CharField(max_length=16, editable=False,
                              help_text="The secret's first characters, to recognise it; not enough to use it.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.JSONField(default=list, help_text="What the token may do (a list of scopes).")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(default=api_token_expiry_default)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Written at most once a minute (ACCOUNTS_API_TOKEN_TOUCH_SECONDS).")

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"
        constraints = [
            models.CheckConstraint(condition=models.Q(expires_at__gt=models.F("created_at")),
                                   name="api_token_expires_after_creation"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def status(self) -> str:
        if self.revoked_at:
            return self.Status.REVOKED
        if self.expires_at <= timezone.now():
            return self.Status.EXPIRED
        return self.Status.ACTIVE

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


class Notification(models.Model):
    """Something a person should know or do: in their inbox, and by email (at once or in a daily digest)."""

    class Kind(models.TextChoices):
        ASSIGNMENTS = "assignments", "New assignments"
        DELPHI_OPEN = "delphi_open", "Delphi round opened"
        DELPHI_REMINDER = "delphi_reminder", "Delphi round waiting for your answer"
        ADJUDICATION = "adjudication", "Items wait for adjudication"
        REPORT_READY = "report_ready", "Report ready"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    text = models.CharField(max_length=300)
    link = models.CharField(max_length=300, blank=True, help_text="A path on this site.")
    key = models.CharField(max_length=120, blank=True,
                           help_text="While one with this key is unread, another is not created (e.g. one per cycle).")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "read_at"]), models.Index(fields=["emailed_at", "user"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.user}: {self.text}"
