"""Snapshots in the admin: listed and inspected, never added, edited or deleted (they are evidence)."""
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from .models import Snapshot
from .registry import KINDS
from .services import snapshot_page_url


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["kind", "subject_label", "version", "status", "short_hash", "seed", "n_resamples", "requested_at",
                    "page"]
    list_filter = ["kind", "status"]
    list_select_related = ["cycle"]
    search_fields = ["input_hash", "subject", "cycle__name"]
    shown = ("kind", "subject", "cycle", "label_cycle", "judge_run", "pairwise_run", "version", "status",
             "checks_list", "progress", "error", "seed", "n_resamples", "input_hash", "input_counts", "summary", "software", "requested_by",
             "requested_at", "started_at", "finished_at")
    fields = readonly_fields = shown

    def get_queryset(self, request: HttpRequest) -> QuerySet[Snapshot]:
        # the payload and the rater key are large and never listed; the cycle's draw report neither
        return super().get_queryset(request).defer("payload", "rater_key", "cycle__draw_report")

    @admin.display(description="artefact checks")
    def checks_list(self, obj: Snapshot) -> str:
        """The checker's problems, one a line (a *failed checks* version is never served as citable)."""
        if not obj.checks:
            return "passed" if obj.status == Snapshot.Status.READY else "—"
        return format_html("<ul>{}</ul>", format_html("".join("<li>{}</li>" for _ in obj.checks), *obj.checks))

    @admin.display(description="input hash")
    def short_hash(self, obj: Snapshot) -> str:
        return obj.input_hash[:16]

    @admin.display(description="subject")
    def subject_label(self, obj: Snapshot) -> str:
        spec = KINDS.get(obj.kind)
        if spec is not None and spec.describe is not None:  # a subject of an app above, named by its own app
            return f"{obj.subject_kind}: {spec.describe(obj)}"
        return obj.subject_name

    @admin.display(description="page")
    def page(self, obj: Snapshot) -> str:
        try:
            return format_html('<a href="{}">open</a>', snapshot_page_url(obj))
        except LookupError:
            return "—"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
