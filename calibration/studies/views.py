"""Pages of imported rating studies: the list, and a study's report (stored snapshots, never computed here)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access.policy import Action, policy_required
from access.web import query_whole_number
from accounts.http import AuthedRequest
from evidence.models import Snapshot
from evidence.selectors import (
    snapshot_for,
    snapshot_is_stale,
    snapshot_latest_ready,
    snapshot_versions,
)
from evidence.views import SnapshotPages

from ..models import Study, StudyJudgeRun
from .forms import (
    ImportOptions,
    StudyJudgeForm,
    StudyMappingForm,
    StudySnapshotRequestForm,
    StudyUploadForm,
    too_large_message,
    upload_max_bytes,
)
from .importing import ImportSummary, study_file_preview
from .judging import study_judge_run_cancel, study_judge_run_start
from .report import (
    HUMAN_METRICS,
    METRIC_LABELS,
    StudyDimension,
    StudyGroup,
    StudyJudge,
    StudyReport,
    summary_interval,
)
from .selectors import studies_listing, study_judge_runs_recent, study_named
from .tasks import study_snapshot_start, study_upload_start
from .uploads import (
    upload_cancel,
    upload_current,
    upload_discard,
    upload_options_set,
    upload_state,
    upload_store,
)

STUDY = Snapshot.Kind.STUDY_REPORT

@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def studies(request: AuthedRequest) -> HttpResponse:
    """Every imported study with its size and newest report version."""
    page_number = query_whole_number(request.GET.get("page", "1")) or 1
    page = Paginator(studies_listing(), 50).get_page(page_number)
    latest = snapshot_latest_ready(kind=STUDY, subjects=[str(s.pk) for s in page])
    rows = [{"study": s, "snapshot": latest.get(str(s.pk))} for s in page]
    return render(request, "calibration/studies/list.html", {"rows": rows, "page": page})


@dataclass(frozen=True)
class MetricRow:
    label: str
    value: float | None
    ci: tuple[float | None, float | None]


@dataclass(frozen=True)
class JudgeRow:
    """A judge's numbers (StudyJudge) with its confusion matrix as (label, row) pairs for the table."""

    judge: StudyJudge
    confusion_rows: list[tuple[float, list[int]]]

    def __getattr__(self, name: str) -> object:  # the template reads the judge's fields on the row
        return getattr(self.judge, name)


@dataclass(frozen=True)
class Block:
    """All raters or one group: the humans' coefficients as table rows, the judges and the notes."""

    label: str
    n_items: int
    n_humans: int
    rows: list[MetricRow]
    judges: list[JudgeRow]
    warnings: list[str]


@dataclass(frozen=True)
class DimensionView:
    """A dimension of the report as the page shows it: its numbers and its blocks."""

    key: str
    entry: StudyDimension
    blocks: list[Block]

    def __getattr__(self, name: str) -> object:  # level, scale, n_items, n_humans … of the dimension
        return getattr(self.entry, name)


def _blocks(entry: StudyDimension) -> list[Block]:
    """All raters, then each group: the humans' coefficients as table rows, and the judges."""
    out = []
    parts: list[tuple[str, StudyDimension | StudyGroup]] = [("All raters", entry)] + [
        (f"Group {g}", b) for g, b in entry.groups.items()]
    for label, block in parts:
        humans = block.humans
        rows = []
        for m in HUMAN_METRICS:
            value = humans.get(m) if humans else None
            if humans and (value is None or isinstance(value, (int, float))):
                rows.append(MetricRow(label=METRIC_LABELS[m], value=value, ci=summary_interval(humans, m)))
        judges = [JudgeRow(judge=judge, confusion_rows=list(zip(judge.confusion.labels, judge.confusion.matrix,
                                                                  strict=True)) if judge.confusion else [])
                  for judge in block.judges]
        out.append(Block(label=label, n_items=block.n_items, n_humans=block.n_humans, rows=rows, judges=judges,
                         warnings=humans.get("warnings", []) if humans else []))
    return out


def _judge_form(study: Study, data: Any = None) -> StudyJudgeForm:
    return StudyJudgeForm(data, study_dimensions=list(study.dimensions.order_by("id").values_list("key", flat=True)))


def _context(study: Study, snapshot: Snapshot | None, form: StudySnapshotRequestForm,
             judge_form: StudyJudgeForm | None = None) -> dict[str, Any]:
    versions = list(snapshot_versions(kind=STUDY, subject=study.pk).select_related("requested_by"))
    pending = next((s for s in versions if s.is_pending), None)
    context: dict[str, Any] = {
        "study": study, "snapshot": snapshot, "versions": versions, "pending": pending, "form": form,
        "pending_stale": bool(pending and snapshot_is_stale(snapshot=pending)),
        "progress_url": reverse("calibration:study_report_progress", args=[study.pk, pending.version]) if pending else "",
        "judge_form": judge_form or _judge_form(study),
        "judge_runs": study_judge_runs_recent(study=study),
    }
    if snapshot is not None and snapshot.is_ready:
        report = StudyReport.from_json(snapshot.payload or {})  # the stored JSON read back into the typed tree
        context["report"] = report
        context["dimensions"] = [DimensionView(key=key, entry=entry, blocks=_blocks(entry))
                                 for key, entry in report.dimensions.items()]
    return context


def _study(pk: int) -> Study:
    return get_object_or_404(Study, pk=pk)


def _start(request: AuthedRequest, study: Study, form: StudySnapshotRequestForm) -> Snapshot:
    return study_snapshot_start(study=study, requested_by=request.user, seed=form.cleaned_data["seed"],
                                n_resamples=form.cleaned_data["n_resamples"])


# A study's report: the chosen (or newest ready) version and every version; queuing a new version (the worker
# computes it while the page shows progress), its progress, and a stored file's download.
PAGES = SnapshotPages(kind=STUDY, noun="study", subject=_study, template="calibration/studies/report.html",
                      context=_context, form=StudySnapshotRequestForm, start=_start,
                      page_url="calibration:study_report", progress_url="calibration:study_report_progress")
study_report, study_report_compute, study_report_progress, study_report_download = PAGES.views(
    Action.MANAGE_CALIBRATION)


@policy_required(Action.MANAGE_CALIBRATION)
@require_POST
def study_judge(request: AuthedRequest, pk: int) -> HttpResponse:
    """Start a judge run over the study's items (the worker runs it; the page lists it with its counts)."""
    study = _study(pk)
    form = _judge_form(study, request.POST)
    if form.is_valid():
        try:
            run = study_judge_run_start(study=study, requested_by=request.user, model=form.cleaned_data["model"],
                                        dimensions=form.cleaned_data["dimensions"] or None,
                                        limit=form.cleaned_data["limit"])
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, f"Judge run #{run.pk} ({run.model}) is queued for the worker.")
            return redirect("calibration:study_report", pk=study.pk)
    return render(request, "calibration/studies/report.html",
                  _context(study, snapshot_for(kind=STUDY, subject=study.pk), StudySnapshotRequestForm(), form), status=422)


@policy_required(Action.MANAGE_CALIBRATION)
@require_POST
def study_judge_cancel(request: AuthedRequest, pk: int, run_id: int) -> HttpResponse:
    run = get_object_or_404(StudyJudgeRun, pk=run_id, study_id=pk)
    if study_judge_run_cancel(run=run):
        messages.success(request, f"Judge run #{run.pk} will stop.")
    else:
        messages.warning(request, f"Judge run #{run.pk} had already ended.")
    return redirect("calibration:study_report", pk=pk)


# --- uploading a study: upload → preview and mapping → confirm ------------------------------------------------

MAX_ERRORS_SHOWN = 200


@policy_required(Action.MANAGE_CALIBRATION)
@require_http_methods(["GET", "POST"])
def study_upload(request: AuthedRequest) -> HttpResponse:
    """Step 1: the study's name, the format and the file (kept on the server, for this session, for the next steps)."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    if request.method == "POST" and declared.isascii() and declared.isdigit() \
            and int(declared) > upload_max_bytes() + 1024 * 1024:  # refused before the body is read
        return HttpResponse(too_large_message(int(declared)), status=413, content_type="text/plain; charset=utf-8")
    form = StudyUploadForm(request.POST, request.FILES) if request.method == "POST" else StudyUploadForm()
    if request.method == "POST" and form.is_valid():
        upload_store(session=request.session, upload=form.cleaned_data["file"], study=form.cleaned_data["study"],
                     fmt=form.cleaned_data["fmt"])
        return redirect("calibration:study_upload_mapping")
    return render(request, "calibration/studies/upload.html", {"form": form, "step": 1},
                  status=400 if request.method == "POST" else 200)


def _mapping_initial(fmt: str, header: list[str], guess: dict[str, str],
                     options: ImportOptions | None) -> dict[str, object]:
    if fmt == "long":
        if options:
            return {**options.get("columns", {}), "default_dimension": options.get("dimension"),
                    "default_kind": options.get("rater_kind"), "level": options.get("level")}
        return {c: guess.get(c, "") for c in ("item", "rater", "score", "dimension", "rater_kind", "group")}
    if fmt == "wide":
        if options:
            return {**options, "default_dimension": options.get("dimension")}
        item = guess.get("item", "")
        return {"id_column": item, "rater_columns": [c for c in header if c != item]}
    return {}


@policy_required(Action.MANAGE_CALIBRATION)
@require_http_methods(["GET", "POST"])
def study_upload_mapping(request: AuthedRequest) -> HttpResponse:
    """Step 2: the file's first rows, which column is which, and the level of measurement."""
    pending = upload_current(session=request.session)
    if pending is None:
        messages.warning(request, "Upload a file first (an upload waits here for a day).")
        return redirect("calibration:study_upload")
    preview = study_file_preview(path=pending.path, fmt=pending.fmt, label=pending.name)
    initial = _mapping_initial(pending.fmt, preview.header, preview.guess, pending.options)
    form = StudyMappingForm(request.POST if request.method == "POST" else None, fmt=pending.fmt,
                            header=preview.header, initial=initial)
    if request.method == "POST" and form.is_valid():
        upload_options_set(session=request.session, options=form.import_options())
        return redirect("calibration:study_upload_confirm")
    return render(request, "calibration/studies/upload_mapping.html",
                  {"form": form, "pending": pending, "preview": preview, "step": 2},
                  status=400 if request.method == "POST" else 200)


@policy_required(Action.MANAGE_CALIBRATION)
@require_http_methods(["GET", "POST"])
def study_upload_confirm(request: AuthedRequest) -> HttpResponse:
    """Step 3: the worker checks the whole file (a dry run: what the import will do) while the page shows its
    progress; then the import, on the worker too — all or nothing. Either can be cancelled while it runs."""
    pending = upload_current(session=request.session)
    if pending is None:
        messages.warning(request, "Upload a file first (an upload waits here for a day).")
        return redirect("calibration:study_upload")
    if pending.options is None:
        return redirect("calibration:study_upload_mapping")
    state = upload_state(pending=pending)
    if request.method == "POST":
        action = request.POST.get("action", "import")
        if action == "cancel":
            if upload_cancel(pending=pending):
                messages.info(request, "The job stops at its next step; nothing it did is kept.")
        elif action == "import" and state and state.get("status") == "checked":
            study_upload_start(pending=pending, dry_run=False)
        elif action == "check" and (state is None or state.get("status") in ("cancelled",)) and pending.path.is_file():
            study_upload_start(pending=pending, dry_run=True)
        return redirect("calibration:study_upload_confirm")
    if state is None and pending.path.is_file():
        study_upload_start(pending=pending, dry_run=True)  # the check starts when the page is first shown
        state = upload_state(pending=pending)
    state = state or {}
    if state.get("status") == "imported":
        summary = state.get("summary") or {}
        upload_discard(session=request.session)
        study = study_named(name=str(summary.get("study", "")))
        messages.success(request, f"Imported {ImportSummary(**summary)}. Compute its first report below.")
        return redirect("calibration:study_report", pk=study.pk) if study else redirect("calibration:studies")
    errors = list(state.get("errors") or [])
    shown = errors[:MAX_ERRORS_SHOWN]
    return render(request, "calibration/studies/upload_confirm.html", {
        "pending": pending, "state": state, "running": state.get("status") in ("queued", "running"),
        "summary": state.get("summary") if state.get("status") == "checked" else None,
        "errors": shown, "more_errors": max(0, int(state.get("n_errors") or len(errors)) - len(shown)),
        "existing": study_named(name=pending.study), "step": 3,
    }, status=422 if state.get("status") == "failed" else 200)
