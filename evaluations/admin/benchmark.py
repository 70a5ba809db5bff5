"""Admin for benchmark data: search, facet filters, import and export, held-out text read-only."""
from __future__ import annotations

import tempfile
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from access.policy import Action, allowed

from ..importing import ImportFailed, export_records, import_file
from ..models import (
    EvaluatedModel,
    GenerationCondition,
    ModelResponse,
    RubricDimension,
    RubricSubDimension,
    RubricVersion,
    TestCase,
    TheoBertCase,
    Tradition,
    Visibility,
)

CONTENT_TYPES = {"json": "application/json", "jsonl": "application/x-ndjson", "csv": "text/csv"}


def import_max_bytes() -> int:
    """The largest file an import page accepts (setting IMPORT_MAX_UPLOAD_BYTES, default 50 MB)."""
    return int(getattr(settings, "IMPORT_MAX_UPLOAD_BYTES", 50 * 1024 * 1024))


def too_large_message(size: int) -> str:
    return (f"The upload is {size / 1048576:.1f} MB; imports are limited to {import_max_bytes() / 1048576:.0f} MB "
            "(IMPORT_MAX_UPLOAD_BYTES). Split the file, or import it with manage.py import_data.")


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSON (array), JSONL or CSV; the format is taken from the file name.")
    dry_run = forms.BooleanField(required=False, help_text="Validate and count only; write nothing.")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > import_max_bytes():
            raise forms.ValidationError(too_large_message(upload.size), code="too_large")
        return upload


class ImportExportAdmin(admin.ModelAdmin):
    """A ModelAdmin with an "Import" page on its changelist and export actions for the selected rows."""

    import_kind: str = ""
    change_list_template = "admin/evaluations/change_list_import.html"
    actions = ["export_json", "export_jsonl", "export_csv"]

    def get_urls(self):
        info = self.model._meta.app_label, self.model._meta.model_name
        own = [path("import/", self.admin_site.admin_view(self.import_view), name=f"{info[0]}_{info[1]}_import")]
        return own + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        # Refused before the body is read (a proxy's body limit should sit in front as well).
        declared = request.META.get("CONTENT_LENGTH") or ""
        if request.method == "POST" and declared.isascii() and declared.isdigit() and int(declared) > import_max_bytes() + 1024 * 1024:
            return HttpResponse(too_large_message(int(declared)), status=413, content_type="text/plain; charset=utf-8")
        form = ImportForm(request.POST or None, request.FILES or None)
        status = 200
        if request.method == "POST" and not form.is_valid():
            status = 400
        elif request.method == "POST":
            upload = form.cleaned_data["file"]
            suffix = Path(upload.name).suffix.lower()
            with tempfile.NamedTemporaryFile(suffix=suffix) as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
                handle.flush()
                try:
                    report = import_file(path=handle.name, kind=self.import_kind, name=upload.name,
                                         dry_run=form.cleaned_data["dry_run"], progress=False)
                except ImportFailed as exc:
                    form.add_error("file", [str(e) for e in exc.errors])  # every bad row, next to the file
                    status = 400
                else:
                    prefix = "Dry run: " if form.cleaned_data["dry_run"] else ""
                    messages.success(request, prefix + str(report))
                    info = self.model._meta.app_label, self.model._meta.model_name
                    return redirect(reverse(f"admin:{info[0]}_{info[1]}_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Import {self.model._meta.verbose_name_plural}",
            "form": form,
            "kind": self.import_kind,
        }
        return render(request, "admin/evaluations/import.html", context, status=status)

    def _export(self, request: HttpRequest, queryset, fmt: str) -> StreamingHttpResponse:
        include_held_out = allowed(request.user, Action.VIEW_HELD_OUT)
        body = export_records(kind=self.import_kind, fmt=fmt, queryset=queryset, include_held_out=include_held_out)
        response = StreamingHttpResponse((piece.encode("utf-8") for piece in body), content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{self.import_kind}.{fmt}"'
        return response

    @admin.action(description="Export selected as JSON")
    def export_json(self, request, queryset):
        return self._export(request, queryset, "json")

    @admin.action(description="Export selected as JSONL")
    def export_jsonl(self, request, queryset):
        return self._export(request, queryset, "jsonl")

    @admin.action(description="Export selected as CSV")
    def export_csv(self, request, queryset):
        return self._export(request, queryset, "csv")


@admin.register(Tradition)
class TraditionAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "in_development", "min_panel_size"]
    list_filter = ["in_development"]
    search_fields = ["name", "key"]


class RubricSubDimensionInline(admin.TabularInline):
    model = RubricSubDimension
    extra = 0


class RubricDimensionInline(admin.TabularInline):
    model = RubricDimension
    extra = 0
    show_change_link = True


@admin.register(RubricVersion)
class RubricVersionAdmin(admin.ModelAdmin):
    list_display = ["version", "status", "based_on", "created_at"]
    list_filter = ["status"]
    list_select_related = ["based_on"]
    search_fields = ["version", "notes"]
    inlines = [RubricDimensionInline]


@admin.register(RubricDimension)
class RubricDimensionAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "weight", "rubric"]
    list_filter = ["rubric", "key"]
    search_fields = ["name", "key"]
    inlines = [RubricSubDimensionInline]


@admin.register(RubricSubDimension)
class RubricSubDimensionAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "weight", "dimension"]
    list_filter = ["dimension__rubric", "dimension__key"]
    search_fields = ["name", "key"]


HELD_OUT_TEXT_FIELDS = ("prompt", "reference_answer")


@admin.register(TestCase)
class TestCaseAdmin(ImportExportAdmin):
    import_kind = "cases"
    list_display = ["external_id", "dimension", "difficulty", "tradition", "question_type", "visibility", "is_active", "version"]
    list_filter = ["dimension", "difficulty", "tradition", "question_type", "visibility", "is_active", "is_anchor", "rotation"]
    search_fields = ["external_id", "prompt"]
    list_select_related = ["tradition"]

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        # Searching held-out prompts would let a non-superuser probe their text.
        return self.search_fields if allowed(request.user, Action.VIEW_HELD_OUT) else ["external_id"]

    def get_readonly_fields(self, request: HttpRequest, obj: TestCase | None = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and obj.visibility == Visibility.HELD_OUT and not allowed(request.user, Action.VIEW_HELD_OUT):
            readonly += HELD_OUT_TEXT_FIELDS + ("visibility",)
        return readonly


@admin.register(EvaluatedModel)
class EvaluatedModelAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "family"]
    list_filter = ["family", "provider"]
    search_fields = ["name", "provider", "family"]


@admin.register(ModelResponse)
class ModelResponseAdmin(ImportExportAdmin):
    import_kind = "responses"
    list_display = ["test_case", "model", "run_label", "condition", "repetition", "completion_tokens", "created_at"]
    list_filter = ["model", "run_label", "condition", "test_case__dimension", "test_case__difficulty", "test_case__tradition",
                   "test_case__visibility"]
    search_fields = ["test_case__external_id", "model__name", "run_label", "text"]
    list_select_related = ["test_case", "model", "condition"]
    raw_id_fields = ["test_case"]

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        if allowed(request.user, Action.VIEW_HELD_OUT):
            return self.search_fields
        return ["test_case__external_id", "model__name", "run_label"]


@admin.register(GenerationCondition)
class GenerationConditionAdmin(admin.ModelAdmin):
    """Generation conditions (docs/conditions.md). The standard one is made by migration and cannot be deleted while
    responses use it (PROTECT); its defining settings are read-only, so "standard" keeps meaning §9.1."""

    list_display = ["name", "is_standard", "route", "reasoning", "reasoning_effort", "temperature", "max_tokens",
                    "language"]
    list_filter = ["reasoning", "language", "is_standard"]
    search_fields = ["name", "route", "description"]

    def get_readonly_fields(self, request: HttpRequest, obj: GenerationCondition | None = None) -> list[str]:
        if obj is not None and obj.is_standard:
            return ["name", "is_standard", *GenerationCondition.AXES]
        return ["is_standard"]


@admin.register(TheoBertCase)
class TheoBertCaseAdmin(ImportExportAdmin):
    import_kind = "theobert"
    list_display = ["case_id", "type", "category", "difficulty", "pass_condition", "k", "reference"]
    list_filter = ["type", "category", "difficulty", "pass_condition"]
    search_fields = ["case_id", "input", "reference", "reasoning"]
