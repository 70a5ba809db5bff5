"""Report snapshots in the admin: listed and inspected, never added, edited or deleted (they are evidence)."""
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from ..models import ReportSnapshot
from ..reports.snapshots import snapshot_page_url


@admin.register(ReportSnapshot)
class ReportSnapshotAdmin(admin.ModelAdmin):
    list_display = ["subject", "version", "status", "short_hash", "seed", "n_resamples", "requested_at", "page"]
    list_filter = ["status", "cycle"]
    list_select_related = ["cycle", "study"]
    search_fields = ["input_hash", "cycle__name", "study__name"]
    shown = ("cycle", "study", "version", "status", "progress", "error", "judge_run", "seed", "n_resamples", "input_hash",
             "input_counts", "software", "requested_by", "requested_at", "started_at", "finished_at")
    fields = readonly_fields = shown

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReportSnapshot]:
        # the payload and the rater key are large and never listed; the cycle's draw report neither
        return super().get_queryset(request).defer("payload", "rater_key", "cycle__draw_report")

    @admin.display(description="input hash")
    def short_hash(self, obj: ReportSnapshot) -> str:
        return obj.input_hash[:16]

    @admin.display(description="cycle or study")
    def subject(self, obj: ReportSnapshot) -> str:
        return f"study: {obj.study}" if obj.study_id else str(obj.cycle)

    @admin.display(description="report")
    def page(self, obj: ReportSnapshot) -> str:
        return format_html('<a href="{}">open</a>', snapshot_page_url(obj))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
