"""The audit trail in Django's admin: read only (no add, change or delete for anyone, superusers included)."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "action", "actor", "subject_user", "target_type", "target_id", "target", "ip"]
    list_filter = ["action", "at"]
    list_select_related = ["actor", "subject_user"]
    search_fields = ["target", "target_id", "path"]
    date_hierarchy = "at"
    readonly_fields = [field.name for field in AuditEvent._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
