"""Admin for judge runs and results: start a run (form), cancel or resume runs (actions), read results.

Django autodiscovers only evaluations/admin.py; it must import this module
(``from .judge import admin as _judge_admin  # noqa: F401,E402``) for these registrations to exist.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.html import format_html

from access.policy import Action, allowed

from ..judge.services import judge_run_cancel, judge_run_resume
from ..models import EvaluatedModel, JudgeResult, JudgeRun, JudgeScore, RubricVersion
from ..selectors import rubric_active
from ..tasks import judge_run_enqueue, judge_run_start


class JudgeRunStartForm(forms.Form):
    rubric = forms.ModelChoiceField(queryset=RubricVersion.objects.all())
    models = forms.ModelMultipleChoiceField(
        queryset=EvaluatedModel.objects.all(), required=False, help_text="None selected: every model."
    )
    cases = forms.CharField(
        required=False, help_text='Case filter, e.g. "dimension=textual|doctrinal,difficulty=hard|expert,'
                                  'tradition=reformed|none,visibility=public,external_id=TXT-*". Empty: every active case.'
    )
    run_label = forms.CharField(required=False, help_text="Only responses with this run label.")
    limit = forms.IntegerField(required=False, min_value=1, help_text="At most this many responses.")
    label = forms.CharField(required=False, max_length=100, help_text="A name for the run.")

    # The service's refusals that are about one field (e.g. a case filter it cannot read) go on that field.
    SERVICE_ERROR_FIELDS = {"bad_case_filter": "cases", "unknown_model": "models", "bad_limit": "limit"}

    def add_service_error(self, exc: ValidationError) -> None:
        self.add_error(self.SERVICE_ERROR_FIELDS.get(str(exc.code)), exc)


class JudgeScoreInline(admin.TabularInline):
    model = JudgeScore
    extra = 0
    can_delete = False
    fields = ["sub_dimension", "raw_score", "consistency_flag", "reasoning"]
    readonly_fields = ["sub_dimension", "raw_score", "consistency_flag", "reasoning"]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    change_list_template = "evaluations/judge/admin/change_list.html"
    list_display = ["id", "label", "status", "progress", "flagged_auth_error", "rubric", "primary_model", "created_at",
                    "created_by"]
    list_filter = ["status", "flagged_auth_error", "rubric"]
    search_fields = ["label", "primary_model"]
    list_select_related = ["rubric", "created_by"]
    actions = ["cancel_runs", "resume_runs"]
    readonly_fields = [f.name for f in JudgeRun._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs are started with the "Start a judge run" form

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return request.method in ("GET", "HEAD") and super().has_change_permission(request, obj)

    @admin.display(description="progress")
    def progress(self, run: JudgeRun) -> str:
        return format_html('<a href="{}">{} / {}</a>', run.get_absolute_url(), run.processed_items, run.total_items)

    def get_urls(self):
        own = [path("start/", self.admin_site.admin_view(self.start_view), name="evaluations_judgerun_start")]
        return own + super().get_urls()

    def start_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request) or not allowed(request.user, Action.VIEW_JUDGE_OUTPUT):
            return HttpResponse(status=403)
        form = JudgeRunStartForm(request.POST or None, initial={"rubric": rubric_active()})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                run = judge_run_start(
                    rubric=data["rubric"], created_by=request.user, models=[m.name for m in data["models"]],
                    cases=data["cases"], run_label=data["run_label"] or None, limit=data["limit"], label=data["label"],
                )
            except ValidationError as exc:
                form.add_service_error(exc)
            else:  # the run's page says it is queued, and says so only while it is (no lingering banner)
                return redirect(run.get_absolute_url())
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "title": "Start a judge run"}
        return render(request, "evaluations/judge/admin/start.html", context)

    @admin.action(description="Cancel selected runs")
    def cancel_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        for run in queryset:
            try:
                judge_run_cancel(run=run)
            except ValidationError as exc:
                self.message_user(request, f"Run {run.pk}: {'; '.join(exc.messages)}", messages.WARNING)
            else:
                self.message_user(request, f"Run {run.pk}: cancel requested.")

    @admin.action(description="Resume selected runs (only unfinished items are sent)")
    def resume_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        for run in queryset:
            try:
                run = judge_run_resume(run=run)
            except ValidationError as exc:
                self.message_user(request, f"Run {run.pk}: {'; '.join(exc.messages)}", messages.WARNING)
            else:
                judge_run_enqueue(run=run)
                self.message_user(request, f"Run {run.pk}: queued again.")

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        extra = {"start_url": reverse("admin:evaluations_judgerun_start"), **(extra_context or {})}
        return super().changelist_view(request, extra)


@admin.register(JudgeResult)
class JudgeResultAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "response", "judge_model", "role", "status", "error_class", "composite",
                    "consistency_flag", "attempts"]
    list_filter = ["status", "role", "error_class", "consistency_flag", "judge_model", "run"]
    search_fields = ["response__test_case__external_id", "response__model__name", "judge_model"]
    list_select_related = ["run", "response"]
    raw_id_fields = ["run", "response"]
    readonly_fields = [f.name for f in JudgeResult._meta.fields]
    inlines = [JudgeScoreInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return request.method in ("GET", "HEAD") and super().has_change_permission(request, obj)
