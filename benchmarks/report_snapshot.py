"""Benchmark: compute a report snapshot once, against what every page view and export click cost before snapshots.

Run from the repository root:
    .venv/bin/python benchmarks/report_snapshot.py                 # SQLite (throwaway file)
    .venv/bin/python benchmarks/report_snapshot.py --database-url postgres://postgres@127.0.0.1:5432/postgres
    # options: --repeat N (default 3), --requests N (default 20), --no-demo

Two cycles in a throwaway database (PostgreSQL: a database `bench_<x>` created and dropped by the script):

* the demo cycle, loaded as `manage.py load_demo` loads it (cases, responses, the offline judge run, experts,
  panels, scores through the scoring service, gold decisions) — goal: snapshot computed in < 0.7 s;
* the 60-rater synthetic cycle of `tests/calibration/synthetic.py` (6 dimensions × 8 traditions × 7 items,
  60 raters in 8 panels) written as real rows (`benchmarks/cycle_rows.py`): assignments, submitted
  annotations with sub-scores and audit events, a finished judge run with its scores, gold decisions —
  goal: < 5 s on 2 cores.

For each: `report_snapshot_compute` as the worker runs it (claim, read the rows, ratings.csv and its hash,
build with 1,000 bootstrap resamples, the typed tree, render JSON, CSV, PDF, ratings.csv and the zip, store
the files), median of --repeat versions, split into phases; then, in the same run, what a request cost
before snapshots — the old report page (read the rows, `calibration_report_build`, the page's context and
template) and the old PDF export (read, build, render the PDF) — through Django's test client, against
today's page of a stored snapshot and today's zip/PDF downloads (median of --requests). Ratios printed:
one snapshot computation in old page views, and today's request against the old one.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported for real inside the functions, once Django is set up
    from annotations.models import CalibrationCycle
    from calibration.cycles.ratings import ReportInputs
    from calibration.reports.schema import Report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cycle_rows import synthetic_cycle_write  # noqa: E402
from benchmarks.kit import admin_user, demo_load, django_setup, load_average, throwaway_database  # noqa: E402

N_RESAMPLES = 1000
urlpatterns: list[Any] = []  # filled in run(): the app's URLs plus the two pre-snapshot views below


# --- the pre-snapshot request path, on today's code ----------------------------------------------------

def _recompute(pk: int) -> tuple[CalibrationCycle, Report, ReportInputs]:
    """What the report page and every export did per request before snapshots: read the rows, build."""
    from django.shortcuts import get_object_or_404

    from annotations.models import CalibrationCycle
    from calibration.cycles.ratings import judge_run_for_cycle, report_inputs
    from calibration.cycles.selectors import cycle_assignment_completeness
    from calibration.reports.build import calibration_report_build
    from evidence.kit.meta import DEFAULT_SEED, software_versions

    cycle = get_object_or_404(CalibrationCycle.objects.select_related("rubric"), pk=pk)
    run = judge_run_for_cycle(cycle=cycle)
    inputs = report_inputs(cycle=cycle, run=run)
    from calibration.reports.schema import Completeness, JudgeModels, Provenance
    from evidence.kit.trees import tree_from_json

    meta = Provenance(
        cycle=cycle.name, cycle_id=cycle.pk, rubric_version=cycle.rubric.version,
        judge_run=run.pk if run else None,
        judge_models=JudgeModels(primary=run.primary_model, fallback=run.fallback_model,
                                 secondary=run.secondary_model) if run else None,
        software=software_versions(),
    )
    report = calibration_report_build(inputs.ratings, judge=inputs.judge, gold=inputs.gold, units=inputs.units,
                                      n_resamples=N_RESAMPLES, seed=DEFAULT_SEED, meta=meta)
    report.completeness = tree_from_json(Completeness, cycle_assignment_completeness(cycle=cycle), "completeness")
    return cycle, report, inputs


def recompute_page(request: Any, pk: int) -> Any:
    """The report page computed in the request (the view before 5b1ed92), rendering today's template."""
    from django.shortcuts import render
    from django.utils import timezone
    from django.utils.safestring import mark_safe

    from calibration.reports.forms import SnapshotRequestForm
    from calibration.reports.pages import ReportPage
    from calibration.reports.snapshots import Changes
    from evidence.models import Snapshot

    cycle, report, inputs = _recompute(pk)
    shown = Snapshot(kind=Snapshot.Kind.CYCLE_REPORT, subject=str(cycle.pk), cycle=cycle, version=1,
                     status=Snapshot.Status.READY, payload=report.to_json(),
                     rater_key=inputs.rater_key, finished_at=timezone.now(), seed=0, n_resamples=N_RESAMPLES)
    page = ReportPage(shown)
    page.__dict__["report"] = report  # the tree just built, as the old view had it
    stored = page.stored()  # the body rendered in the request, never cached
    changes = Changes(scores=0, gold_decisions=0, newer_judge_run=None)
    return render(request, "calibration/report.html", {
        "cycle": cycle, "snapshot": shown, "versions": [], "pending": None, "pending_stale": False,
        "form": SnapshotRequestForm(), **page.values(), "head": stored, "report_body": mark_safe(stored.body),
        "run": None, "changes": changes, "changes_text": changes.describe(1),
    })


def recompute_pdf(request: Any, pk: int) -> Any:
    """The PDF export computed in the request, as every export click did before snapshots."""
    from django.http import HttpResponse

    from calibration.reports.pdf import report_pdf

    _, report, _ = _recompute(pk)
    return HttpResponse(report_pdf(report, version=1, input_hash="0" * 64), content_type="application/pdf")


# --- timing --------------------------------------------------------------------------------------------

def median_of(repeat: int, function: Callable[[], Any], walls: list[float] | None = None) -> tuple[float, Any]:
    """The median wall time of `repeat` calls (each appended to `walls` when given) and the last result."""
    walls, result = [] if walls is None else walls, None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls), result


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (pdftotext): on a shared machine the wall time
    grows with the load, the CPU time does not."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def compute_phases(cycle: Any, admin: Any) -> tuple[float, dict[str, float], Any]:
    """One `report_snapshot_compute` (a new version), timed whole and by phase: wall seconds, phases, snapshot."""
    from calibration.reports import snapshots
    from evidence import services

    snapshot = snapshots.report_snapshot_request(cycle=cycle, requested_by=admin, n_resamples=N_RESAMPLES)
    marks: dict[str, float] = {}
    render = snapshots.snapshot_files_render
    check = services.snapshot_checks

    def timed_check(**kwargs: Any) -> list[str]:
        started = time.perf_counter()
        problems = check(**kwargs)
        marks["check"] = time.perf_counter() - started
        return problems

    def timed_render(**kwargs: Any) -> dict[str, bytes]:
        marks["render"] = time.perf_counter()
        files = render(**kwargs)
        marks["rendered"] = time.perf_counter()
        return files

    def progress(percent: int, note: str) -> None:
        marks.setdefault("build", time.perf_counter())  # the first report: rows read, ratings.csv hashed

    snapshots.snapshot_files_render = timed_render  # type: ignore[assignment]
    services.snapshot_checks = timed_check  # type: ignore[assignment]
    try:
        started, cpu_started = time.perf_counter(), cpu_seconds()
        done = snapshots.report_snapshot_compute(snapshot_id=snapshot.pk, progress=progress)
        finished, cpu = time.perf_counter(), cpu_seconds() - cpu_started
    finally:
        snapshots.snapshot_files_render = render
        services.snapshot_checks = check
    if not done.is_ready:
        raise RuntimeError(f"snapshot {done} is {done.status}: {done.error}")
    phases = {"read": marks["build"] - started, "build": marks["render"] - marks["build"],
              "render": marks["rendered"] - marks["render"], "check": marks["check"],
              "store": finished - marks["rendered"] - marks["check"], "cpu": cpu}
    return finished - started, phases, done


def get(client: Any, url: str, expected: bytes | None = None) -> Callable[[], Any]:
    def fetch() -> Any:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"GET {url}: {response.status_code}")
        body = b"".join(response.streaming_content) if response.streaming else response.content
        if expected is not None and body != expected:
            raise RuntimeError(f"GET {url}: not the stored bytes")
        return body
    return fetch


def measure(label: str, cycle: Any, admin: Any, args: argparse.Namespace) -> dict[str, float]:
    from django.test import Client
    from django.urls import reverse

    from evidence.models import SnapshotFile

    runs = [compute_phases(cycle, admin) for _ in range(args.repeat)]
    walls = [wall for wall, _, _ in runs]
    compute = statistics.median(walls)
    phases = {name: statistics.median(p[name] for _, p, _ in runs) for name in runs[0][1]}
    snapshot = runs[-1][2]
    counts = snapshot.input_counts
    sizes = dict(SnapshotFile.objects.filter(snapshot=snapshot).values_list("format", "size"))
    stored = {fmt: bytes(content) for fmt, content in
              SnapshotFile.objects.filter(snapshot=snapshot).values_list("format", "content")}

    client = Client()
    client.force_login(admin)
    page_url = reverse("calibration:report", args=[cycle.pk]) + f"?version={snapshot.version}"
    export = reverse("calibration:report_export", args=[cycle.pk, "zip"]).rsplit(".", 1)[0]
    get(client, page_url)()  # warm the template cache and the connection once
    old_page, page = median_of(args.repeat, get(client, f"/bench/recompute/{cycle.pk}/"))
    old_pdf, _ = median_of(args.repeat, get(client, f"/bench/recompute/{cycle.pk}/pdf"))
    page_walls: list[float] = []  # the machine may be loaded: the fastest view is the page's own cost
    new_page, _ = median_of(args.requests, get(client, page_url), page_walls)
    new_zip, _ = median_of(args.requests, get(client, f"{export}.zip?version={snapshot.version}", stored["bundle"]))
    new_pdf, _ = median_of(args.requests, get(client, f"{export}.pdf?version={snapshot.version}", stored["pdf"]))
    assert b"Experts among themselves" in page, "the recomputed page did not render the report"

    print(f"\n{label}: {counts['units']:,} units, {counts['expert_ratings']:,} expert ratings, {counts['raters']} raters, "
          f"{counts['judge_scores']:,} judge and {counts['gold_scores']:,} gold scores, "
          f"{len(snapshot.payload['groups'])} groups")
    print("  stored files: " + ", ".join(f"{fmt} {size / 1024:,.0f} KiB" for fmt, size in sorted(sizes.items())))
    print(f"  snapshot compute (median of {args.repeat}: " + ", ".join(f"{w:.2f}" for w in walls) + f" s)   "
          f"{compute:6.2f} s   read {phases['read']:.2f} · build + typed tree {phases['build']:.2f} · "
          f"render {phases['render']:.2f} · artefact check {phases['check']:.2f} · store {phases['store']:.2f}")
    print(f"  before snapshots, per request (median of {args.repeat}):")
    print(f"    report page (read + build + page)        {old_page * 1000:8.0f} ms")
    print(f"    PDF export  (read + build + PDF)          {old_pdf * 1000:8.0f} ms")
    print(f"  today, a stored snapshot (median of {args.requests}, test client):")
    print(f"    report page                               {new_page * 1000:8.1f} ms   "
          f"{old_page / new_page:,.0f}× faster than the per-request page (fastest {min(page_walls) * 1000:.1f} ms)")
    print(f"    zip download ({sizes['bundle'] / 1024:,.0f} KiB)                  {new_zip * 1000:8.1f} ms")
    print(f"    PDF download ({sizes['pdf'] / 1024:,.0f} KiB)                  {new_pdf * 1000:8.1f} ms   "
          f"{old_pdf / new_pdf:,.0f}× faster than the per-request PDF")
    print(f"  one snapshot computation costs as much as {compute / old_page:.2f} per-request page views did; "
          f"every later view or download is a stored read")
    return {"compute": compute, "old_page": old_page, "new_page": new_page, "best_page": min(page_walls),
            "check": phases["check"], "cpu": phases["cpu"]}


def run(args: argparse.Namespace, vendor: str) -> None:
    from django.db import connection
    from django.test.utils import override_settings
    from django.urls import path

    from accounts.models import User
    from calibration.reports.schema import Report
    from config.urls import urlpatterns as app_urls
    from tests.calibration.synthetic import synthetic_cycle

    urlpatterns[:] = [path("bench/recompute/<int:pk>/", recompute_page),
                      path("bench/recompute/<int:pk>/pdf", recompute_pdf), *app_urls]
    print(f"report snapshots, {N_RESAMPLES:,} bootstrap resamples — {vendor} ({connection.vendor}), "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load_average()}")
    results = {}
    with override_settings(ROOT_URLCONF=__name__):
        if not args.no_demo:
            started = time.perf_counter()
            logging.disable(logging.INFO)  # the importers' and the judge's progress lines
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    cycle = demo_load()
            finally:
                logging.disable(logging.NOTSET)
            print(f"demo loaded in {time.perf_counter() - started:.1f} s")
            admin = User.objects.get(email="admin@faithbench.test")
            results["demo"] = measure("demo cycle", cycle, admin, args)

        started = time.perf_counter()
        synthetic = synthetic_cycle()
        admin = admin_user()
        cycle = synthetic_cycle_write(synthetic, name="Synthetic cycle (60 raters)", admin=admin)
        print(f"\nsynthetic cycle written as rows in {time.perf_counter() - started:.1f} s")
        results["synthetic"] = measure("synthetic cycle, 60 raters × 6 dimensions × 8 traditions", cycle, admin, args)
        from evidence.models import Snapshot

        payload = Snapshot.objects.of(Snapshot.Kind.CYCLE_REPORT, cycle.pk).ready().latest("version").payload
        same = (Report.from_json(payload).overall.experts.krippendorff_alpha
                == synthetic.report(n_resamples=0).overall.experts.krippendorff_alpha)
        print(f"  check: overall α from the rows equals the in-memory synthetic cycle's: {same}")

    print(f"\nsummary (load average {load_average()})")
    # goals: snapshot, demo issue 25 item 8 (was 1 s); stored page, issue 36 (a stored page reads only what it shows)
    for name, goal, page_goal in (("demo", 0.7, 0.040), ("synthetic", 5.0, 0.100)):
        if name in results:
            r = results[name]
            print(f"  {name:<10} snapshot {r['compute']:5.2f} s ({r['cpu']:.2f} CPU s), goal < {goal:g} s: ratio "
                  f"{r['compute'] / goal:.2f} (CPU {r['cpu'] / goal:.2f}); "
                  f"= {r['compute'] / r['old_page']:.2f} old page views; stored page {r['new_page'] * 1000:.1f} ms "
                  f"vs {r['old_page'] * 1000:.0f} ms per-request ({r['old_page'] / r['new_page']:,.0f}×)")
            print(f"  {name:<10} stored report page {r['new_page'] * 1000:.1f} ms (median; fastest "
                  f"{r['best_page'] * 1000:.1f} ms), goal ≤ {page_goal * 1000:.0f} ms: ratio "
                  f"{r['new_page'] / page_goal:.2f} (fastest {r['best_page'] / page_goal:.2f})")
    for name in ("demo", "synthetic"):  # issue 32: the checker adds ≤ 10 % to a snapshot's compute
        if name in results:
            r = results[name]
            print(f"  {name:<10} artefact check {r['check']:.2f} s of {r['compute']:.2f} s: adds "
                  f"{r['check'] / (r['compute'] - r['check']):.1%} to the compute (goal ≤ 10 %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="PostgreSQL server URL; default: a throwaway SQLite file")
    parser.add_argument("--repeat", type=int, default=3, help="snapshot versions and per-request recomputations")
    parser.add_argument("--requests", type=int, default=20, help="page views and downloads of the stored snapshot")
    parser.add_argument("--no-demo", action="store_true", help="only the synthetic cycle")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", "No directory at", UserWarning)  # whitenoise: no collectstatic here

    database = throwaway_database(args.database_url)
    try:
        django_setup(database)
        try:
            run(args, database.vendor)
        finally:
            from django.db import connections

            connections.close_all()
    finally:
        database.drop()


if __name__ == "__main__":
    main()
