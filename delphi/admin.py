"""Admin for Delphi studies, rounds and responses (read-mostly: the pages under /delphi/ run the study).

Django's admin autodiscovery imports this module.
"""
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from .models import DelphiAllocation, DelphiResponse, DelphiRound, DelphiStudy


class DelphiRoundInline(admin.TabularInline):
    model = DelphiRound
    extra = 0
    can_delete = False
    fields = readonly_fields = ("number", "status", "opened_at", "closed_at", "invited", "responded", "converged")
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(DelphiStudy)
class DelphiStudyAdmin(admin.ModelAdmin):
    list_display = ["name", "tradition", "rubric", "status", "converged", "planned_rounds", "page"]
    list_filter = ["status", "tradition"]
    list_select_related = ["tradition", "rubric"]
    search_fields = ["name"]
    filter_horizontal = ["panelists"]
    readonly_fields = ["status", "converged", "proposal", "proposed_rubric", "rescoring", "created_by", "created_at",
                       "closed_by", "closed_at", "approved_by", "approved_at"]
    inlines = [DelphiRoundInline]

    @admin.display(description="study page")
    def page(self, obj: DelphiStudy) -> str:
        return format_html('<a href="{}">open</a>', reverse("delphi:study", args=[obj.pk]))


class DelphiAllocationInline(admin.TabularInline):
    model = DelphiAllocation
    extra = 0
    fields = readonly_fields = ("key", "points", "rationale")
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(DelphiRound)
class DelphiRoundAdmin(admin.ModelAdmin):
    list_display = ["__str__", "status", "invited", "responded", "converged", "closed_at"]
    list_filter = ["status", "study"]
    list_select_related = ["study"]
    readonly_fields = ["study", "number", "status", "opened_at", "closed_at", "closed_by", "invited", "responded",
                       "converged", "summary"]

    def has_add_permission(self, request):
        return False


@admin.register(DelphiResponse)
class DelphiResponseAdmin(admin.ModelAdmin):
    list_display = ["__str__", "expert", "submitted_at", "updated_at"]
    list_filter = ["round__study"]
    list_select_related = ["round__study", "expert"]
    readonly_fields = ["round", "expert", "submitted_at", "updated_at"]
    inlines = [DelphiAllocationInline]

    def has_add_permission(self, request):
        return False
