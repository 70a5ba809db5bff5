"""Admin for panels (with size warnings) and cycles (items can be marked as anchors; close and reopen).

The models belong to `annotations`; their admin lives here because it uses calibration's panel
warnings and sampling vocabulary (calibration may import annotations, not the reverse). Lifecycle
changes — removing a panel member, closing or reopening a cycle — go through annotations.lifecycle,
the same services every other entry point uses.
"""
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from accounts.models import User
from annotations.lifecycle import cycle_close, cycle_reopen, panel_member_remove
from annotations.models import CalibrationCycle, CycleEvent, CycleItem, Panel

from .forms import CycleReasonForm
from .selectors import panel_size_warnings, panel_warnings


@admin.register(Panel)
class PanelAdmin(admin.ModelAdmin):
    list_display = ["name", "tradition", "language", "size", "lead"]
    list_filter = ["tradition"]
    filter_horizontal = ["members"]
    autocomplete_fields = ["lead"]
    search_fields = ["name"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("tradition", "lead").annotate(n_members=Count("members"))

    @admin.display(description="experts / minimum")
    def size(self, obj: Panel) -> str:
        n_members: int = getattr(obj, "n_members", 0)  # annotated by get_queryset
        flag = " ⚠ below minimum" if n_members < obj.min_size else ""
        return f"{n_members} / {obj.min_size}{flag}"

    def changelist_view(self, request: HttpRequest, extra_context=None):
        if request.method == "GET":
            for warning in panel_size_warnings():
                messages.warning(request, warning)
        return super().changelist_view(request, extra_context)

    def save_related(self, request, form, formsets, change):
        # A member taken off the panel goes through the service, which withdraws their open assignments.
        if change and "members" in form.cleaned_data:
            kept = {user.pk for user in form.cleaned_data["members"]}
            for expert in User.objects.filter(panels=form.instance).exclude(pk__in=kept).order_by("email"):
                withdrawn = panel_member_remove(panel=form.instance, expert=expert, actor=request.user)
                if withdrawn:
                    messages.info(request, f"{expert.email} left {form.instance}: {withdrawn} open assignment(s) "
                                           "withdrawn; a lead can reassign them.")
        super().save_related(request, form, formsets, change)
        for warning in panel_warnings(panel=form.instance):
            messages.warning(request, warning)


class CycleItemInline(admin.TabularInline):
    model = CycleItem
    extra = 0
    can_delete = False
    fields = ["response", "source", "is_anchor", "inclusion_probability", "inclusion_basis"]
    readonly_fields = ["response", "source", "inclusion_probability", "inclusion_basis"]  # a record of the draw
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


class CycleEventInline(admin.TabularInline):
    model = CycleEvent
    extra = 0
    can_delete = False
    fields = ["at", "kind", "actor", "reason", "details"]
    readonly_fields = ["at", "kind", "actor", "reason", "details"]
    verbose_name_plural = "audit trail"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(CalibrationCycle)
class CalibrationCycleAdmin(admin.ModelAdmin):
    """Cycles are created on the draw page (preview, then commit); here anchors are edited, and the cycle is
    closed or reopened (with a reason) through the lifecycle services — status is never edited directly."""

    list_display = ["name", "status", "seed", "min_per_dimension", "previous", "created_at", "page"]
    list_filter = ["status"]
    list_select_related = ["previous"]
    fields = ["name", "status", "lifecycle", "rubric", "previous", "seed", "min_per_dimension", "refresh_fraction",
              "edge_fraction", "draw_strategy", "show_reference_answers", "neutral_panel", "retest_enabled",
              "retest_share", "retest_min_days", "created_by"]
    readonly_fields = ["status", "lifecycle", "rubric", "previous", "seed", "min_per_dimension", "refresh_fraction",
                       "edge_fraction", "draw_strategy", "created_by"]
    inlines = [CycleItemInline, CycleEventInline]
    actions = ["close_cycles"]

    def has_add_permission(self, request):
        return False

    def get_urls(self):
        info = self.model._meta.app_label, self.model._meta.model_name
        own = [
            path("<int:pk>/close/", self.admin_site.admin_view(self.close_view), name=f"{info[0]}_{info[1]}_close"),
            path("<int:pk>/reopen/", self.admin_site.admin_view(self.reopen_view), name=f"{info[0]}_{info[1]}_reopen"),
        ]
        return own + super().get_urls()

    @admin.display(description="lifecycle")
    def lifecycle(self, obj: CalibrationCycle) -> str:
        if obj.status == CalibrationCycle.Status.CLOSED:
            return format_html('<a class="button" href="{}">Reopen with a reason…</a>',
                               reverse("admin:annotations_calibrationcycle_reopen", args=[obj.pk]))
        return format_html('<a class="button" href="{}">Close for scoring…</a>',
                           reverse("admin:annotations_calibrationcycle_close", args=[obj.pk]))

    @admin.action(description="Close the selected cycles for scoring")
    def close_cycles(self, request: HttpRequest, queryset) -> None:
        for cycle in queryset:
            try:
                cycle_close(cycle=cycle, actor=request.user, reason="")  # type: ignore[arg-type]
            except (ValidationError, PermissionDenied) as exc:
                messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
            else:
                messages.success(request, f"{cycle} closed for scoring.")

    def close_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._lifecycle_view(request, pk, reopen=False)

    def reopen_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._lifecycle_view(request, pk, reopen=True)

    def _lifecycle_view(self, request: HttpRequest, pk: int, *, reopen: bool) -> HttpResponse:
        """A form with the reason (required to reopen); the service checks who may and records the event."""
        cycle = get_object_or_404(CalibrationCycle, pk=pk)
        if not self.has_change_permission(request, cycle):
            raise PermissionDenied
        form = CycleReasonForm(request.POST or None, reason_required=reopen)
        status = 200
        if request.method == "POST":
            status = 400
            if form.is_valid():
                service = cycle_reopen if reopen else cycle_close
                try:
                    service(cycle=cycle, actor=request.user, reason=form.cleaned_data["reason"])  # type: ignore[arg-type]
                except ValidationError as exc:
                    form.add_error(None, exc)
                    status = 409
                else:
                    messages.success(request, f"{cycle} {'reopened' if reopen else 'closed for scoring'}; "
                                              "the audit trail has the reason.")
                    return HttpResponseRedirect(reverse("admin:annotations_calibrationcycle_change", args=[cycle.pk]))
        verb = "Reopen" if reopen else "Close"
        return TemplateResponse(request, "admin/annotations/calibrationcycle/lifecycle.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "original": cycle,
            "title": f"{verb} {cycle}", "form": form, "verb": verb, "reopen": reopen,
        }, status=status)

    @admin.display(description="draw")
    def page(self, obj: CalibrationCycle) -> str:
        return format_html('<a href="{}">stratification</a>', reverse("calibration:cycle", args=[obj.pk]))


@admin.register(CycleItem)
class CycleItemAdmin(admin.ModelAdmin):
    list_display = ["id", "cycle", "response", "source", "is_anchor", "inclusion_probability", "inclusion_basis"]
    list_filter = ["cycle", "source", "is_anchor", "inclusion_basis", "response__test_case__dimension"]
    list_select_related = ["cycle", "response"]
    actions = ["mark_anchor", "unmark_anchor"]
    readonly_fields = ["cycle", "response", "source", "inclusion_probability", "inclusion_basis", "stratum"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("cycle__draw_report")  # a large JSON per row, never shown

    def has_add_permission(self, request):
        return False

    @admin.action(description="Mark as anchor (kept in every following cycle)")
    def mark_anchor(self, request: HttpRequest, queryset) -> None:
        messages.success(request, f"{queryset.update(is_anchor=True)} item(s) marked as anchors.")

    @admin.action(description="Unmark anchor")
    def unmark_anchor(self, request: HttpRequest, queryset) -> None:
        messages.success(request, f"{queryset.update(is_anchor=False)} item(s) no longer anchors.")
