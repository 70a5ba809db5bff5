"""Admin views of assignments and annotations: read-only; changes go through the services (audited).

Withdrawing and reassigning assignments: the panel lead's pages (annotations/lead_views.py).
"""
from django.contrib import admin

from .models import AdjudicationDecision, Annotation, AnnotationEvent, Assignment, GoldScore, SubScore


class ReadOnlyMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["public_id", "expert", "cycle", "panel", "position", "status", "withdrawn_reason", "updated_at"]
    list_filter = ["cycle", "panel", "status", "withdrawn_reason"]
    search_fields = ["public_id", "expert__email"]
    list_select_related = ["expert", "cycle", "panel"]


class SubScoreInline(ReadOnlyMixin, admin.TabularInline):
    model = SubScore
    extra = 0
    can_delete = False


class AnnotationEventInline(ReadOnlyMixin, admin.TabularInline):
    model = AnnotationEvent
    extra = 0
    can_delete = False
    fields = ("at", "actor", "kind", "changes", "note")
    readonly_fields = ("at", "actor", "kind", "changes", "note")


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["assignment", "status", "flagged_broken", "seconds_spent", "submitted_at"]
    list_filter = ["status", "flagged_broken", "assignment__cycle"]
    search_fields = ["assignment__public_id", "assignment__expert__email"]
    inlines = [SubScoreInline, AnnotationEventInline]
    list_select_related = ["assignment"]


@admin.register(AnnotationEvent)
class AnnotationEventAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["at", "kind", "actor", "annotation"]
    list_filter = ["kind"]
    list_select_related = ["actor", "annotation__assignment"]

    def has_delete_permission(self, request, obj=None):
        return False  # the audit history is append-only


class GoldScoreInline(admin.TabularInline):
    model = GoldScore
    extra = 0
    can_delete = False

    def has_change_permission(self, request, obj=None):
        return False  # decisions are superseded by new ones, never edited

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(AdjudicationDecision)
class AdjudicationDecisionAdmin(admin.ModelAdmin):
    list_display = ["item", "adjudicator", "reason", "is_current", "created_at"]
    list_filter = ["reason", "is_current", "item__cycle"]
    # The item shows as "cycle · response id": not every foreign key down to the test case, nor the draw report.
    list_select_related = ["adjudicator", "item__cycle"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("item__cycle__draw_report")
    search_fields = ["note", "item__response__test_case__external_id"]
    readonly_fields = ["item", "adjudicator", "reason", "note", "is_current", "supersedes", "created_at"]
    inlines = [GoldScoreInline]

    def has_add_permission(self, request):
        return False  # gold scores are recorded on the adjudication page, which enforces adjudicator ≠ rater
