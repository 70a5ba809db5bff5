from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from .admin_privacy import PseudonymiseAdminMixin, pseudonymise_selected
from .forms import InvitationAdminForm, UserCreateForm, UserEditForm
from .models import ApiToken, ExpertProfile, Invitation, User
from .services import (
    api_token_revoke,
    experts_without_scoring_languages,
    invitation_create,
    invitation_resend,
    invitation_revoke,
)


def warn_experts_without_languages(request: HttpRequest) -> None:
    """Issue 35: an expert who lists no scoring language is given English cases only; say so where experts are
    managed, naming them."""
    names = experts_without_scoring_languages()
    if names:
        messages.warning(request, f"{len(names)} expert(s) list no scoring language and are treated as English-only "
                                  f"(they are given only English cases): {', '.join(names[:10])}"
                                  f"{' …' if len(names) > 10 else ''}. Set their scoring languages on the profile.")


class ExpertProfileInline(admin.StackedInline):
    model = ExpertProfile
    can_delete = False
    fields = ("tradition", "degree", "institution", "languages", "scoring_languages", "qualifications")


@admin.register(User)
class UserAdmin(PseudonymiseAdminMixin, DjangoUserAdmin):
    add_form = UserCreateForm
    form = UserEditForm
    ordering = ["email"]
    list_display = ["email", "display_name", "role", "is_staff", "is_active"]

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        warn_experts_without_languages(request)
        return super().changelist_view(request, extra_context)
    list_filter = ["role", "is_staff", "is_superuser", "is_active"]
    search_fields = ["email", "display_name", "first_name", "last_name"]
    inlines = [ExpertProfileInline]
    actions = [pseudonymise_selected]  # deleting a person is pseudonymising them (accounts/admin_privacy.py)
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Profile", {"fields": ("display_name", "first_name", "last_name", "role")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "role", "password1", "password2")}),)


@admin.register(ExpertProfile)
class ExpertProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "tradition", "degree", "institution", "languages", "scoring_languages"]

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        warn_experts_without_languages(request)
        return super().changelist_view(request, extra_context)
    list_filter = ["tradition"]
    search_fields = ["user__email", "user__display_name", "institution"]
    autocomplete_fields = ["user"]
    list_select_related = ["user", "tradition"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Add an invitation to email a single-use sign-up link; the actions re-send or revoke it."""

    form = InvitationAdminForm
    list_display = ["email", "role", "tradition", "status", "invited_by", "sent_at", "expires_at"]
    list_filter = ["role", "tradition"]
    list_select_related = ["tradition", "invited_by"]
    search_fields = ["email"]
    actions = ["resend", "revoke"]
    readonly_fields = ["invited_by", "sent_at", "expires_at", "accepted_at", "accepted_user", "revoked_at"]

    def has_change_permission(self, request: HttpRequest, obj: Invitation | None = None) -> bool:
        return False if obj is not None else super().has_change_permission(request, obj)

    def save_model(self, request, obj, form, change):
        # Through the service: a token is generated, only its hash stored, and the link emailed.
        try:
            created, _token = invitation_create(
                email=obj.email, role=obj.role, tradition=obj.tradition, invited_by=request.user
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
            return
        obj.pk = created.pk
        messages.success(request, f"Invitation emailed to {created.email}.")

    def response_add(self, request, obj, post_url_continue=None):
        from django.shortcuts import redirect

        return redirect("admin:accounts_invitation_changelist")

    @admin.action(description="Send a new link (the old one stops working)")
    def resend(self, request: HttpRequest, queryset) -> None:
        sent = 0
        for invitation in queryset:
            try:
                invitation_resend(invitation=invitation)
                sent += 1
            except ValidationError as exc:
                messages.warning(request, f"{invitation.email}: {' '.join(exc.messages)}")
        messages.success(request, f"{sent} invitation(s) sent again.")

    @admin.action(description="Revoke")
    def revoke(self, request: HttpRequest, queryset) -> None:
        for invitation in queryset:
            invitation_revoke(invitation=invitation)
        messages.success(request, "Revoked.")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created on the account page or with `manage.py api_token`; here they are listed and revoked."""

    list_display = ["name", "user", "prefix", "status", "created_at", "expires_at", "last_used_at"]
    list_select_related = ["user"]
    search_fields = ["name", "user__email", "prefix"]
    readonly_fields = ["user", "name", "prefix", "scopes", "created_at", "expires_at", "revoked_at", "last_used_at"]
    exclude = ["key_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the secret must be shown to its owner once: create on the account page or by command

    @admin.action(description="Revoke")
    def revoke(self, request: HttpRequest, queryset) -> None:
        for token in queryset:
            api_token_revoke(token=token)
        messages.success(request, "Revoked.")
