"""The admin site: who may enter is `access.policy`'s ADMIN_SITE (each model's permissions still apply)."""
from __future__ import annotations

from django.contrib.admin import AdminSite
from django.http import HttpRequest

from access.policy import Action, allowed


class PolicyAdminSite(AdminSite):
    def has_permission(self, request: HttpRequest) -> bool:
        return allowed(request.user, Action.ADMIN_SITE)
