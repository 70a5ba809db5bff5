"""Report pages and downloads. They render stored snapshots and never compute statistics in a request."""
from __future__ import annotations

from django.urls import reverse

from access.policy import Action
from accounts.http import AuthedRequest
from annotations.models import CalibrationCycle
from annotations.selectors import cycle_with_rubric
from evaluations.labels import group_label
from evidence.models import Snapshot
from evidence.selectors import snapshot_is_stale, snapshot_versions
from evidence.views import SnapshotPages

from .forms import SnapshotRequestForm
from .render import confusion_svg, diagnostic_rows, forest_plot_svg, forest_rows, interval_rows, rater_rows
from .schema import Group, Report
from .snapshots import snapshot_changes
from .tasks import report_snapshot_start

CYCLE = Snapshot.Kind.CYCLE_REPORT


def _group_label(group: Group) -> str:
    return group_label(group.kind, group.value)


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
        payload = Report.from_json(snapshot.payload or {})  # the stored JSON read back into the typed tree
        summary = payload.overall
        changes = snapshot_changes(snapshot=snapshot)
        context.update({
            "report": payload, "overall": summary, "run": snapshot.judge_run, "changes": changes,
            "changes_text": changes.describe(snapshot.version),
            "raters": rater_rows(summary, snapshot.rater_key),
            "interval_tables": [
                ("Experts among themselves", interval_rows(summary.experts, "experts")),
                ("Judge against the expert majority", interval_rows(summary.judge_vs_majority, "judge_vs_majority")),
                ("Judge against adjudicated gold", interval_rows(summary.judge_vs_gold, "judge_vs_gold")),
            ],
            "diagnostics": diagnostic_rows(summary, snapshot.rater_key),
            "experts_plot": forest_plot_svg(forest_rows(payload, "experts", label=_group_label),
                                            title="Experts among themselves: α (ordinal)"),
            "judge_plot": forest_plot_svg(forest_rows(payload, "judge_vs_majority", label=_group_label),
                                          title="Judge against the expert majority: α (ordinal)"),
            "gold_confusion": confusion_svg(summary.judge_vs_gold.confusion, title="Judge vs adjudicated gold",
                                            reference="gold"),
            "majority_confusion": confusion_svg(summary.judge_vs_majority.confusion,
                                                title="Judge vs expert majority", reference="majority"),
        })
    return context


def _start(request: AuthedRequest, cycle: CalibrationCycle, form: SnapshotRequestForm) -> Snapshot:
    return report_snapshot_start(cycle=cycle, requested_by=request.user, run_id=form.cleaned_data["run"],
                                 seed=form.cleaned_data["seed"], n_resamples=form.cleaned_data["n_resamples"])


# The IRR report of a cycle: the chosen (or newest) snapshot, what changed since, every version; queuing a new
# version (the worker computes it while the page shows progress), its progress, and a stored file's download.
PAGES = SnapshotPages(kind=CYCLE, noun="cycle", subject=_cycle, template="calibration/report.html",
                      context=_report_context, form=SnapshotRequestForm, start=_start,
                      page_url="calibration:report", progress_url="calibration:report_progress")
report, report_compute, report_progress, report_download = PAGES.views(Action.MANAGE_CALIBRATION)
