"""What every snapshot page shares: the "compute a version" POST, the progress fragment of a computing version and
the download of a stored file (cycle and study reports, calibrated leaderboards alike). Callers check access first; these only read.
`SnapshotPages` puts them together as the four views of one kind of subject's report page."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from access.policy import Action, policy_required
from accounts.forms import ServiceErrorsForm
from accounts.http import AuthedRequest

from .downloads import snapshot_file_response
from .models import Snapshot, SnapshotFile
from .selectors import snapshot_file_name, snapshot_for, snapshot_is_stale, snapshot_versions, version_param
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


S = TypeVar("S", bound=Model)
F = TypeVar("F", bound=ServiceErrorsForm)
View = Callable[..., HttpResponse]


@dataclass(frozen=True)
class SnapshotPages(Generic[S, F]):
    """The four views of a subject's report page — the page (GET), "compute a version" (POST), a computing version's
    progress and a stored file's download — for one kind of snapshot. What differs per subject is declared here:
    how to get the subject, the template and its context, the request form, the start function and the URL names.
    """

    kind: str
    noun: str  # "cycle", "study": named by the 404s
    subject: Callable[[int], S]  # the subject by pk (404 when there is none)
    template: str
    context: Callable[[S, Snapshot | None, F], Mapping[str, object]]
    form: Callable[..., F]  # form() for the page, form(request.POST) for the compute
    start: Callable[[AuthedRequest, S, F], Snapshot]  # queue a version from a valid form
    page_url: str  # URL name of the page
    progress_url: str  # URL name of the progress fragment
    page_payload: bool = True  # False: the page reads the payload only when it needs it (e.g. on a cache miss)

    def find(self, subject: S, version: int | None = None, *, with_payload: bool = True) -> Snapshot | None:
        return snapshot_for(kind=self.kind, subject=subject.pk, version=version, with_payload=with_payload)

    def page(self, request: AuthedRequest, pk: int) -> HttpResponse:
        """The chosen (or newest ready) version, what changed since, every version."""
        subject = self.subject(pk)
        return snapshot_page_response(
            request, find=lambda version: self.find(subject, version, with_payload=self.page_payload),
            missing=f"This {self.noun} has no report version {{version}}.",
            page=lambda snapshot: render(request, self.template, self.context(subject, snapshot, self.form())))

    def compute(self, request: AuthedRequest, pk: int) -> HttpResponse:
        """Queue a new version; the worker computes it while the page shows progress."""
        subject = self.subject(pk)
        form = self.form(request.POST)
        return snapshot_compute_response(
            request, form=form, page=reverse(self.page_url, args=[subject.pk]),
            start=lambda: self.start(request, subject, form),
            again=lambda: render(request, self.template, self.context(subject, self.find(subject), form), status=422))

    def progress(self, request: AuthedRequest, pk: int, version: int) -> HttpResponse:
        """The progress of one computing version (htmx polls it; a finished one tells the page to reload)."""
        snapshot = get_object_or_404(snapshot_versions(kind=self.kind, subject=pk), version=version)
        return snapshot_progress_response(request, snapshot, reverse(self.progress_url, args=[pk, version]))

    def download(self, request: AuthedRequest, pk: int, fmt: str) -> HttpResponse:
        """A stored file of a version (?version=N, default the newest ready one): the same bytes every time."""
        subject = self.subject(pk)
        return snapshot_download_response(
            request, fmt, lambda version: self.find(subject, version, with_payload=False), subject=self.noun)

    def views(self, action: Action) -> tuple[View, View, View, View]:
        """The page, compute, progress and download views, each allowed to `action` (the URLconf names them)."""
        allow = policy_required(action)
        return (allow(require_GET(self.page)), allow(require_POST(self.compute)), allow(require_GET(self.progress)),
                allow(require_GET(self.download)))
