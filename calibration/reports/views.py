"""Report pages and downloads. They render stored snapshots and never compute statistics in a request."""
from __future__ import annotations

from django.urls import reverse

from access.policy import Action
from accounts.http import AuthedRequest
from annotations.models import CalibrationCycle
from annotations.selectors import cycle_with_rubric
from evidence.models import Snapshot
from evidence.selectors import snapshot_is_stale, snapshot_versions
from evidence.views import SnapshotPages

from .forms import SnapshotRequestForm
from .pages import ReportPage, stored_page
from .snapshots import snapshot_changes
from .tasks import report_snapshot_start

CYCLE = Snapshot.Kind.CYCLE_REPORT


def _cycle(pk: int) -> CalibrationCycle:
    return cycle_with_rubric(pk=pk)


def _report_context(cycle: CalibrationCycle, snapshot: Snapshot | None, form: SnapshotRequestForm) -> dict:
    """What the report page shows: the snapshot's report and charts, what changed since, every version."""
    versions = list(snapshot_versions(kind=CYCLE, subject=cycle.pk).select_related("requested_by", "judge_run"))
    pending = next((s for s in versions if s.is_pending), None)
    context: dict = {"cycle": cycle, "snapshot": snapshot, "versions": versions, "pending": pending,
                     "pending_stale": bool(pending and snapshot_is_stale(snapshot=pending)), "form": form,
                     "progress_url": reverse("calibration:report_progress", args=[cycle.pk, pending.version])
                     if pending else ""}
    if snapshot is not None and snapshot.is_ready:
        snapshot.cycle = cycle  # the page's cycle is the snapshot's (found by it): not read again
        page = ReportPage(snapshot)
        stored, body = stored_page(page)  # header provenance and rendered body: once per snapshot and language
        changes = snapshot_changes(snapshot=snapshot)
        listed = next((v for v in versions if v.pk == snapshot.pk), snapshot)  # its judge run already read
        context.update({
            **page.lazy_values(),  # the typed report, its tables and charts: built only if something reads them
            "head": stored, "report_body": body, "run": listed.judge_run, "changes": changes,
            "changes_text": changes.describe(snapshot.version),
        })
    return context


def _start(request: AuthedRequest, cycle: CalibrationCycle, form: SnapshotRequestForm) -> Snapshot:
    return report_snapshot_start(cycle=cycle, requested_by=request.user, run_id=form.cleaned_data["run"],
                                 seed=form.cleaned_data["seed"], n_resamples=form.cleaned_data["n_resamples"])


# The IRR report of a cycle: the chosen (or newest) snapshot, what changed since, every version; queuing a new
# version (the worker computes it while the page shows progress), its progress, and a stored file's download.
PAGES = SnapshotPages(kind=CYCLE, noun="cycle", subject=_cycle, template="calibration/report.html",
                      context=_report_context, form=SnapshotRequestForm, start=_start,
                      page_url="calibration:report", progress_url="calibration:report_progress",
                      page_payload=False)
report, report_compute, report_progress, report_download = PAGES.views(Action.MANAGE_CALIBRATION)
