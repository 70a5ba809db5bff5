"""The user admin's answer to "delete this person": pseudonymisation (Art. 17), never a cascade.

Deleting a person who has scored would delete or orphan evidence (annotations, their history, reviews, Delphi
answers) that stored reports cite, so Django refuses it ("would require deleting related objects"). The admin
offers pseudonymisation instead: the delete link and the bulk action lead to a confirmation page that erases the
person's identity and keeps their work under a stable pseudonym (`accounts.privacy.user_pseudonymise`).
"""
from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from access.policy import Action, allowed

from .models import User
from .privacy import is_pseudonymised, pseudonym_for, user_pseudonymise


class PseudonymiseAdminMixin:
    """For `UserAdmin`: the delete page becomes the pseudonymise page; no bulk delete."""

    def get_urls(self) -> list[Any]:
        own = [path("<path:object_id>/pseudonymise/", self.admin_site.admin_view(self.pseudonymise_view),  # type: ignore[attr-defined]
                    name="accounts_user_pseudonymise")]
        return own + super().get_urls()  # type: ignore[misc]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)  # type: ignore[misc]
        actions.pop("delete_selected", None)
        return actions

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        return HttpResponseRedirect(reverse("admin:accounts_user_pseudonymise", args=[object_id]))

    def pseudonymise_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: what will happen; POST: pseudonymise (recorded in the audit trail)."""
        if not allowed(request.user, Action.ADMIN_SITE) or not self.has_change_permission(request):  # type: ignore[attr-defined]
            raise PermissionDenied
        if not object_id.isdigit() or len(object_id) > 18:
            raise PermissionDenied
        person = get_object_or_404(User, pk=int(object_id))
        change_url = reverse("admin:accounts_user_change", args=[person.pk])
        if request.method == "POST":
            try:
                user_pseudonymise(user=person, actor=request.user,  # type: ignore[arg-type]
                                  reference=request.POST.get("reference", ""))
            except ValidationError as exc:
                messages.error(request, " ".join(exc.messages))
            else:
                messages.success(request, f"User #{person.pk} is now {pseudonym_for(person)}: identity erased, "
                                          "scores kept under the pseudonym.")
            return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": "Pseudonymise this person", "person": person, "pseudonym": pseudonym_for(person),
            "already": is_pseudonymised(person), "change_url": change_url,
            "opts": self.model._meta,  # type: ignore[attr-defined]
        }
        return TemplateResponse(request, "admin/accounts/user/pseudonymise.html", context)


@admin.action(description="Pseudonymise (erasure request) — opens the confirmation for the first selected person")
def pseudonymise_selected(modeladmin: Any, request: HttpRequest, queryset: Any) -> HttpResponse | None:
    person = queryset.order_by("pk").first()
    if person is None:
        return None
    return HttpResponseRedirect(reverse("admin:accounts_user_pseudonymise", args=[person.pk]))
