"""Admin for panels (with size warnings) and cycles (items can be marked as anchors)."""
from django.contrib import admin, messages
from django.db.models import Count
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from .models import CalibrationCycle, CycleItem, Panel
from .selectors import panel_size_warnings, panel_warnings


@admin.register(Panel)
class PanelAdmin(admin.ModelAdmin):
    list_display = ["name", "tradition", "size", "lead"]
    list_filter = ["tradition"]
    filter_horizontal = ["members"]
    autocomplete_fields = ["lead"]
    search_fields = ["name"]

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        return super().get_queryset(request).select_related("tradition", "lead").annotate(n_members=Count("members"))

    @admin.display(description="experts / minimum")
    def size(self, obj: Panel) -> str:
        n_members: int = getattr(obj, "n_members", 0)  # annotated by get_queryset
        flag = " ⚠ below minimum" if n_members < obj.min_size else ""
        return f"{n_members} / {obj.min_size}{flag}"

    def changelist_view(self, request: HttpRequest, extra_context=None):  # type: ignore[no-untyped-def]
        if request.method == "GET":
            for warning in panel_size_warnings():
                messages.warning(request, warning)
        return super().changelist_view(request, extra_context)

    def save_related(self, request, form, formsets, change):  # type: ignore[no-untyped-def]
        super().save_related(request, form, formsets, change)
        for warning in panel_warnings(panel=form.instance):
            messages.warning(request, warning)


class CycleItemInline(admin.TabularInline):
    model = CycleItem
    extra = 0
    can_delete = False
    fields = ["response", "source", "is_anchor"]
    readonly_fields = ["response", "source"]
    show_change_link = False

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(CalibrationCycle)
class CalibrationCycleAdmin(admin.ModelAdmin):
    """Cycles are created on the draw page (preview, then commit); here anchors and status are edited."""

    list_display = ["name", "status", "seed", "min_per_dimension", "previous", "created_at", "page"]
    list_filter = ["status"]
    list_select_related = ["previous"]
    fields = ["name", "status", "rubric", "previous", "seed", "min_per_dimension", "refresh_fraction",
              "edge_fraction", "show_reference_answers", "neutral_panel", "created_by"]
    readonly_fields = ["rubric", "previous", "seed", "min_per_dimension", "refresh_fraction", "edge_fraction",
                       "created_by"]
    inlines = [CycleItemInline]

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    @admin.display(description="draw")
    def page(self, obj: CalibrationCycle) -> str:
        return format_html('<a href="{}">stratification</a>', reverse("calibration:cycle", args=[obj.pk]))


@admin.register(CycleItem)
class CycleItemAdmin(admin.ModelAdmin):
    list_display = ["id", "cycle", "response", "source", "is_anchor"]
    list_filter = ["cycle", "source", "is_anchor", "response__test_case__dimension"]
    list_select_related = ["cycle", "response"]
    actions = ["mark_anchor", "unmark_anchor"]
    readonly_fields = ["cycle", "response", "source"]

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        return super().get_queryset(request).defer("cycle__draw_report")  # a large JSON per row, never shown

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    @admin.action(description="Mark as anchor (kept in every following cycle)")
    def mark_anchor(self, request: HttpRequest, queryset) -> None:  # type: ignore[no-untyped-def]
        messages.success(request, f"{queryset.update(is_anchor=True)} item(s) marked as anchors.")

    @admin.action(description="Unmark anchor")
    def unmark_anchor(self, request: HttpRequest, queryset) -> None:  # type: ignore[no-untyped-def]
        messages.success(request, f"{queryset.update(is_anchor=False)} item(s) no longer anchors.")

from .delphi import admin as delphi_admin  # noqa: E402, F401  (registers the Delphi models)
