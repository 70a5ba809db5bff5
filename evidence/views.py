"""What every snapshot page shares: the "compute a version" POST, the progress fragment of a computing version and
the download of a stored file (cycle and study reports, calibrated leaderboards alike). Callers check access first; these only read."""
from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render

from accounts.forms import ServiceErrorsForm

from .downloads import snapshot_file_response
from .models import Snapshot, SnapshotFile
from .selectors import snapshot_file_name, snapshot_is_stale, version_param
from .services import snapshot_pending_error

CONTENT_TYPES: dict[str, str] = {
    SnapshotFile.Format.JSON: "application/json",
    SnapshotFile.Format.CSV: "text/csv",
    SnapshotFile.Format.PDF: "application/pdf",
    SnapshotFile.Format.RATINGS: "text/csv",
    SnapshotFile.Format.BUNDLE: "application/zip",
}


def snapshot_page_response(request: HttpRequest, *, find: Callable[[int | None], Snapshot | None], missing: str,
                           page: Callable[[Snapshot | None], HttpResponse]) -> HttpResponse:
    """The GET of every report page: the ?version= asked for (400 when it is not a whole number ≥ 1, 404 naming it
    — `missing` with `{version}` — when the subject has no such version), else the newest ready one, shown by
    `page` (None: nothing computed yet)."""
    try:
        version = version_param(request.GET.get("version"))
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    snapshot = find(version)
    if version is not None and snapshot is None:
        raise Http404(missing.format(version=version))
    return page(snapshot)


def snapshot_compute_response(request: HttpRequest, *, form: ServiceErrorsForm, start: Callable[[], Snapshot],
                              page: str, again: Callable[[], HttpResponse]) -> HttpResponse:
    """The "compute a version" POST of every report page: queue it with `start` (once `form` is valid) and go back
    to `page`, which shows its progress; a version already pending is shown instead (a second tab, a double click);
    a refused or invalid request is shown again by `again` (422)."""
    if form.is_valid():
        try:
            snapshot = start()
        except ValidationError as exc:
            if snapshot_pending_error(exc):
                messages.warning(request, exc.messages[0])
                return redirect(page)
            form.add_service_error(exc)
        else:
            messages.success(request, f"Version {snapshot.version} is queued; its progress is shown below.")
            return redirect(page)
    return again()


def snapshot_progress_response(request: HttpRequest, snapshot: Snapshot, url: str) -> HttpResponse:
    """The progress fragment of one version, polled at `url`; a finished one tells the page to reload."""
    response = render(request, "evidence/_progress.html",
                      {"pending": snapshot, "pending_stale": snapshot_is_stale(snapshot=snapshot), "progress_url": url})
    if not snapshot.is_pending:
        response["HX-Refresh"] = "true"
    return response


def snapshot_download_response(request: HttpRequest, fmt: str, find: Callable[[int | None], Snapshot | None],
                               *, subject: str) -> HttpResponse:
    """A stored file of a ready version (?version=N, default the newest ready one), `find` looking it up for the
    page's subject: the same bytes every time, with their hash as ETag and the input hash."""
    if fmt == "zip":
        fmt = SnapshotFile.Format.BUNDLE
    if fmt not in SnapshotFile.Format.values:
        raise Http404(f"Unknown format {fmt[:20]!r}: use json, csv, pdf, ratings or zip.")
    try:
        version = version_param(request.GET.get("version"))
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    snapshot = find(version)
    if snapshot is None:
        raise Http404("No report version to download yet: compute one on the report page."
                      if version is None else f"This {subject} has no report version {version}.")
    if not snapshot.is_ready:
        raise Http404(f"Report version {snapshot.version} is {snapshot.get_status_display().lower()}.")
    response = snapshot_file_response(snapshot=snapshot, fmt=fmt, content_type=CONTENT_TYPES[fmt],
                                      filename=snapshot_file_name(snapshot=snapshot, fmt=fmt))
    if response is None:  # pragma: no cover - a ready snapshot has every file (written in one transaction)
        raise Http404("This file is missing from the snapshot.")
    return response
