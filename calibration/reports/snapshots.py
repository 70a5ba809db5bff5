"""Report snapshots: request a new version, compute it (in the worker), and read what changed since.

Computing reads the cycle's rows once, writes them as `ratings.csv` (the exact input rows; its SHA-256
is the snapshot's input hash), builds the report from those rows, renders every file once and stores
it. Pages, exports, the CLI and the API only ever read a stored snapshot.
"""
from __future__ import annotations

import csv
import hashlib
import io
import logging
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction
from django.db.models import Max
from django.urls import reverse
from django.utils import timezone

from accounts.models import Notification, User
from accounts.notifications import notify
from annotations.models import AdjudicationDecision, AnnotationEvent, CalibrationCycle
from evaluations.domain import query_whole_number
from evaluations.models import JudgeRun
from evaluations.spreadsheet import csv_cell_unprotect, csv_writer

from ..cycles.selectors import cycle_assignment_completeness
from ..models import ReportSnapshot, SnapshotFile, Study
from ..models.snapshots import ReportSnapshotQuerySet
from .build import Rating, UnitInfo, calibration_report_build
from .cells import validation_cells
from .exporting import REPORT_EXPORTERS
from .pdf import report_pdf
from .schema import Completeness, JudgeModels, Provenance, Report, SnapshotMeta, tree_from_json
from .selectors import ReportInputs, judge_run_for_cycle, report_inputs, software_versions

logger = logging.getLogger(__name__)

DEFAULT_SEED = 20260101
DEFAULT_RESAMPLES = 1000
MAX_RESAMPLES = 10_000
STALE_AFTER = timedelta(minutes=5)  # a running snapshot with no progress for this long lost its worker
RATINGS_FIELDS = ["item", "sub_dimension", "dimension", "tradition", "difficulty", "source", "rater", "score"]
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same snapshot always zips to the same bytes
CONTENT_TYPES: dict[str, str] = {
    SnapshotFile.Format.JSON: REPORT_EXPORTERS["json"].content_type,
    SnapshotFile.Format.CSV: REPORT_EXPORTERS["csv"].content_type,
    SnapshotFile.Format.PDF: REPORT_EXPORTERS["pdf"].content_type,
    SnapshotFile.Format.RATINGS: "text/csv",
    SnapshotFile.Format.BUNDLE: "application/zip",
}
FILE_NAMES = {
    SnapshotFile.Format.JSON: "report.json",
    SnapshotFile.Format.CSV: "tables.csv",
    SnapshotFile.Format.PDF: "report.pdf",
    SnapshotFile.Format.RATINGS: "ratings.csv",
}


# --- the input rows -------------------------------------------------------------------------------

def ratings_csv(inputs: ReportInputs) -> bytes:
    """The exact input rows, one per unit, expert score, judge score and gold score, in a fixed order."""
    rows: list[tuple[str, ...]] = []
    facets = {u.key: u for u in inputs.units}
    for rating in inputs.ratings:
        facets.setdefault(rating.unit.key, rating.unit)

    def row(key: tuple[str, str], source: str, rater: str, score: int | str) -> tuple[str, ...]:
        unit = facets[key]
        return (unit.item, unit.sub_dimension, unit.dimension, unit.tradition, unit.difficulty, source, rater,
                str(score))

    rows.extend(row(key, "unit", "", "") for key in facets)
    rows.extend(row(r.unit.key, "expert", r.rater, r.score) for r in inputs.ratings)
    rows.extend(row(key, "judge", "judge", score) for key, score in inputs.judge.items() if key in facets)
    rows.extend(row(key, "gold", "gold", score) for key, score in inputs.gold.items() if key in facets)
    order = {"unit": 0, "expert": 1, "judge": 2, "gold": 3}
    rows.sort(key=lambda r: (r[2], _natural(r[0]), r[1], order[r[5]], r[6]))
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(RATINGS_FIELDS)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _natural(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (0, value)


@dataclass(frozen=True)
class ParsedRatings:
    units: list[UnitInfo]
    ratings: list[Rating]
    judge: dict[tuple[str, str], int]
    gold: dict[tuple[str, str], int]


def ratings_csv_parse(data: bytes) -> ParsedRatings:
    """Read ratings.csv back into the builder's inputs: anyone can recompute a snapshot from its bundle."""
    units: dict[tuple[str, str], UnitInfo] = {}
    ratings: list[Rating] = []
    judge: dict[tuple[str, str], int] = {}
    gold: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(csv.DictReader(io.StringIO(data.decode("utf-8"))), start=2):
        record = {key: csv_cell_unprotect(value) for key, value in raw.items()}
        unit = units.setdefault(
            (record["item"], record["sub_dimension"]),
            UnitInfo(record["item"], record["sub_dimension"], record["dimension"], record["tradition"],
                     record["difficulty"]),
        )
        source = record["source"]
        if source == "unit":
            continue
        if source not in ("expert", "judge", "gold"):
            raise ValueError(f"ratings.csv:{line}: source: unknown value {source!r}")
        score = int(record["score"])
        if source == "expert":
            ratings.append(Rating(unit, record["rater"], score))
        else:
            (judge if source == "judge" else gold)[unit.key] = score
    return ParsedRatings(list(units.values()), ratings, judge, gold)


# --- requesting and computing ---------------------------------------------------------------------

def _watermark(cycle: CalibrationCycle) -> dict[str, int]:
    return {
        "annotation_event": AnnotationEvent.objects.filter(annotation__assignment__cycle=cycle)
        .aggregate(top=Max("id"))["top"] or 0,
        "adjudication": AdjudicationDecision.objects.filter(item__cycle=cycle).aggregate(top=Max("id"))["top"] or 0,
    }


def _abandon_stale(*, cycle: CalibrationCycle, now: Any) -> None:
    ReportSnapshot.objects.filter(
        cycle=cycle, status=ReportSnapshot.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER
    ).update(status=ReportSnapshot.Status.FAILED, finished_at=now,
             error="The worker stopped while computing (no progress for 5 minutes).")


def bootstrap_option_errors(*, seed: int, n_resamples: int) -> dict[str, list[str]]:
    """What is wrong with a requested seed and number of resamples, by field (empty: nothing)."""
    errors: dict[str, list[str]] = {}
    if not 0 <= n_resamples <= MAX_RESAMPLES:
        errors["n_resamples"] = [f"must be between 0 and {MAX_RESAMPLES:,}"]
    if seed < 0:
        errors["seed"] = ["must be a whole number ≥ 0"]
    return errors


PENDING = "pending"  # the code of the refusal to queue a version while another is queued or running


def snapshot_pending_refuse(snapshots: ReportSnapshotQuerySet) -> None:
    """Refuse a new version while one of the same subject is queued or running (a computation is queued once):
    ValidationError with code "pending", naming that version. Call it with the subject's row locked."""
    pending = snapshots.pending().order_by("version").only("version", "status", "progress").first()
    if pending is None:
        return
    state = ("queued for the background worker" if pending.status == ReportSnapshot.Status.QUEUED
             else f"being computed ({pending.progress} %)")
    raise ValidationError({NON_FIELD_ERRORS: [ValidationError(
        f"Version {pending.version} is {state}; a new version can be requested once it has finished.",
        code=PENDING)]})


def snapshot_pending_error(exc: ValidationError) -> bool:
    """Whether a service's ValidationError is the refusal of a second queued version."""
    return any(error.code == PENDING for error in getattr(exc, "error_dict", {}).get(NON_FIELD_ERRORS, []))


@transaction.atomic
def report_snapshot_request(
    *, cycle: CalibrationCycle, requested_by: User | None, run_id: int | None = None,
    seed: int = DEFAULT_SEED, n_resamples: int = DEFAULT_RESAMPLES,
) -> ReportSnapshot:
    """Queue the next version of a cycle's report (the worker computes it; see `calibration.reports.tasks`).
    Refused (code "pending") while another version of the cycle is queued or running."""
    errors = bootstrap_option_errors(seed=seed, n_resamples=n_resamples)
    run = judge_run_for_cycle(cycle=cycle, run_id=run_id)
    if run_id is not None and run is None:
        errors["run"] = [f"judge run {run_id} does not exist or is on another rubric"]
    if errors:
        raise ValidationError(errors, code="invalid")
    cycle = CalibrationCycle.objects.select_for_update().get(pk=cycle.pk)  # versions are handed out in order
    _abandon_stale(cycle=cycle, now=timezone.now())
    snapshot_pending_refuse(ReportSnapshot.objects.filter(cycle=cycle))
    top = ReportSnapshot.objects.filter(cycle=cycle).aggregate(top=Max("version"))["top"] or 0
    return ReportSnapshot.objects.create(
        cycle=cycle, version=top + 1, judge_run=run, seed=seed, n_resamples=n_resamples, requested_by=requested_by,
    )


def report_snapshot_compute(
    *, snapshot_id: int, progress: Callable[[int, str], None] | None = None,
) -> ReportSnapshot:
    """Compute a queued snapshot of a cycle and store it with its files; safe to call twice (the second does nothing)."""
    return snapshot_run(snapshot_id=snapshot_id, progress=progress, compute=_compute)


def snapshot_run(
    *, snapshot_id: int, compute: Callable[[ReportSnapshot, ProgressReporter], None],
    progress: Callable[[int, str], None] | None = None,
) -> ReportSnapshot:
    """Claim a queued snapshot (of a cycle or a study), run `compute` on it, record a failure with its reason, and
    tell whoever asked for it. A snapshot already claimed is returned as it is."""
    now = timezone.now()
    claimed = ReportSnapshot.objects.filter(pk=snapshot_id, status=ReportSnapshot.Status.QUEUED).update(
        status=ReportSnapshot.Status.RUNNING, started_at=now, heartbeat_at=now, progress=1,
        progress_note="reading the scores",
    )
    snapshot = ReportSnapshot.objects.select_related("cycle__rubric", "judge_run", "study").get(pk=snapshot_id)
    if not claimed:
        return snapshot
    reporter = ProgressReporter(snapshot_id, progress)
    try:
        compute(snapshot, reporter)
    except Exception as exc:  # the snapshot records why it failed; nothing half-written is kept
        logger.exception("report snapshot %s failed", snapshot_id)
        ReportSnapshot.objects.filter(pk=snapshot_id).update(
            status=ReportSnapshot.Status.FAILED, finished_at=timezone.now(), error=f"{type(exc).__name__}: {exc}"[:5000],
        )
    snapshot.refresh_from_db()
    if snapshot.status == ReportSnapshot.Status.READY and snapshot.requested_by_id:
        notify(users=User.objects.filter(pk=snapshot.requested_by_id), kind=Notification.Kind.REPORT_READY,
               text=f"Version {snapshot.version} of the report on “{snapshot.subject_name}” is ready.",
               link=snapshot_page_url(snapshot))
    return snapshot


def snapshot_page_url(snapshot: ReportSnapshot) -> str:
    """The report page showing this version (the cycle's, the study's or the calibrated leaderboard's)."""
    if snapshot.label_cycle_id:
        return f"{reverse('calibrated:board', kwargs={'run_id': snapshot.judge_run_id})}?version={snapshot.version}"
    if snapshot.study_id:
        return f"{reverse('calibration:study_report', kwargs={'pk': snapshot.study_id})}?version={snapshot.version}"
    return f"{reverse('calibration:report', kwargs={'pk': snapshot.cycle_id})}?version={snapshot.version}"


def snapshot_store(*, snapshot: ReportSnapshot, files: dict[str, bytes], **fields: Any) -> None:
    """Write a computed snapshot's files and mark it ready, in one transaction (a snapshot cancelled or
    abandoned meanwhile stays as it is: only a running one becomes ready)."""
    with transaction.atomic():
        SnapshotFile.objects.bulk_create(
            SnapshotFile(snapshot_id=snapshot.pk, format=fmt, content=content,
                         sha256=hashlib.sha256(content).hexdigest(), size=len(content))
            for fmt, content in files.items()
        )
        ReportSnapshot.objects.filter(pk=snapshot.pk, status=ReportSnapshot.Status.RUNNING).update(
            status=ReportSnapshot.Status.READY, progress=100, progress_note="", finished_at=timezone.now(),
            heartbeat_at=timezone.now(), **fields,
        )


def zip_bundle(*, folder: str, entries: list[tuple[str, bytes]]) -> bytes:
    """A zip of `entries` under `folder`, with fixed timestamps and modes: the same entries, the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def citable_bundle(*, files: Mapping[str, bytes], names: Mapping[SnapshotFile.Format, str], readme: str, folder: str) -> bytes:
    """The zip every snapshot is cited by: README.txt, each rendered file under its name (`names`: format → file
    name, in bundle order) and SHA256SUMS of those files."""
    sums = "".join(f"{hashlib.sha256(files[fmt]).hexdigest()}  {name}\n" for fmt, name in names.items())
    entries = [("README.txt", readme.encode("utf-8"))]
    entries += [(name, files[fmt]) for fmt, name in names.items()]
    entries.append(("SHA256SUMS", sums.encode("utf-8")))
    return zip_bundle(folder=folder, entries=entries)


class ProgressReporter:
    """Writes progress to the row at most twice a second, and passes it on (to a CLI progress bar)."""

    def __init__(self, snapshot_id: int, callback: Callable[[int, str], None] | None) -> None:
        self.snapshot_id, self.callback, self.last = snapshot_id, callback, 0.0

    def __call__(self, percent: int, note: str, *, force: bool = False) -> None:
        if self.callback is not None:
            self.callback(percent, note)
        if force or time.monotonic() - self.last >= 0.5:
            self.last = time.monotonic()
            ReportSnapshot.objects.filter(pk=self.snapshot_id).update(
                progress=min(percent, 99), progress_note=note[:200], heartbeat_at=timezone.now()
            )


def _compute(snapshot: ReportSnapshot, reporter: ProgressReporter) -> None:
    cycle, run = snapshot.cycle, snapshot.judge_run
    assert cycle is not None, "a cycle's snapshot"
    with transaction.atomic():  # one consistent read of the cycle (a snapshot of the rows on PostgreSQL too)
        watermark = _watermark(cycle)
        inputs = report_inputs(cycle=cycle, run=run)
        completeness = cycle_assignment_completeness(cycle=cycle)
    ratings = ratings_csv(inputs)
    input_hash = hashlib.sha256(ratings).hexdigest()
    software = software_versions()
    reporter(5, "computing agreement", force=True)
    averaged = len(inputs.judge_runs) >= 2
    meta = Provenance(
        cycle=cycle.name, cycle_id=cycle.pk, rubric_version=cycle.rubric.version,
        judge_run=run.pk if run else None,
        judge_models=JudgeModels(primary=run.primary_model, fallback=run.fallback_model,
                                 secondary=run.secondary_model) if run else None,
        judge_score_used="the decisive result per response (as for one run) of each run of the series, averaged over "
                         "the runs and rounded half up" if averaged else
                         "the decisive result per response: secondary judge when self-preference applies, else the "
                         "fallback judge when the primary failed, else the primary judge",
        judge_runs_averaged=inputs.judge_runs if averaged else None,
        software=software,
        raters="pseudonymous codes R01, R02, … (the key is shown to admins on the report page only)",
        snapshot=SnapshotMeta(version=snapshot.version, input_hash=input_hash, input_file="ratings.csv",
                              requested_at=snapshot.requested_at.isoformat()),
    )
    report = calibration_report_build(
        inputs.ratings, judge=inputs.judge, gold=inputs.gold, units=inputs.units, n_resamples=snapshot.n_resamples,
        seed=snapshot.seed, meta=meta,
        progress=lambda done, total: reporter(5 + int(85 * done / max(total, 1)), f"group {done} of {total}"),
    )
    # withdrawn assignments are kept and counted, never scored
    report.completeness = tree_from_json(Completeness, completeness, "completeness")
    report.validation = validation_cells(inputs.ratings, judge=inputs.judge, units=inputs.units,
                                         n_resamples=snapshot.n_resamples, seed=snapshot.seed)
    reporter(90, "rendering the files", force=True)
    files = snapshot_files_render(report=report, ratings=ratings, snapshot=snapshot, input_hash=input_hash)
    counts = {
        "units": len(inputs.units), "expert_ratings": len(inputs.ratings), "raters": len(inputs.rater_key),
        "judge_scores": len(inputs.judge), "gold_scores": len(inputs.gold),
    }
    payload = report.to_json()  # the one handoff to storage: the typed tree's JSON
    snapshot_store(snapshot=snapshot, files=files, payload=payload, input_hash=input_hash, input_counts=counts,
                   watermark=watermark, software=software, rater_key=inputs.rater_key)


# --- rendering the files --------------------------------------------------------------------------

BUNDLE_README = """FaithBench calibration report — citable bundle

Cycle:            {cycle} (id {cycle_id}), rubric v{rubric}
Report version:   {version}
Input hash:       sha256 {input_hash} (of ratings.csv: `sha256sum ratings.csv` prints it)
Bootstrap:        {n_resamples} resamples, seed {seed}, 95 % percentile intervals
Judge run:        {judge_run}
Software:         {software}

Files
- report.json   The whole report. meta: cycle, rubric, judge run and models, seed, resamples, software,
                targets and the majority rule; groups: one entry per group (overall, sub_dimension,
                dimension, tradition, difficulty) with `experts` (Krippendorff's α with CI and
                P(α < 0.667), exact agreement, Fleiss' κ, Gwet's AC1/AC2, pairwise Cohen's κ,
                leave-one-rater-out α), `judge_vs_majority` and `judge_vs_gold` (α with CI, quadratic κ,
                exact agreement, 4×4 confusion matrix, mean signed difference), panel α with and without
                the judge, and pass / fail / uncertain verdicts against the targets.
- tables.csv    The same numbers in long format: group_kind, group_value, comparison, metric, value,
                ci_low, ci_high, n, verdict.
- report.pdf    A printable summary: the verdict table and forest plots; every page names the cycle,
                the version and the input hash.
- ratings.csv   The exact input rows: item, sub_dimension, dimension, tradition, difficulty, source
                (unit, expert, judge, gold), rater (R01, R02, … pseudonyms; judge; gold), score (0–3).
                A `unit` row lists an item × sub-dimension with its facets and no score.
- SHA256SUMS    Checksums of the files above.

To reproduce: build the report from ratings.csv with the same seed and number of resamples
(calibration.reports.snapshots.ratings_csv_parse + calibration.reports.build.calibration_report_build).
"""


def snapshot_files_render(*, report: Report, ratings: bytes, snapshot: ReportSnapshot,
                          input_hash: str) -> dict[str, bytes]:
    """Every file of a snapshot, rendered once: JSON, long CSV, PDF, ratings.csv and the zip bundle."""
    files: dict[str, bytes] = {
        SnapshotFile.Format.JSON: REPORT_EXPORTERS["json"].render(report),
        SnapshotFile.Format.CSV: REPORT_EXPORTERS["csv"].render(report),
        SnapshotFile.Format.PDF: report_pdf(report, version=snapshot.version, input_hash=input_hash),
        SnapshotFile.Format.RATINGS: ratings,
    }
    meta = report.meta
    readme = BUNDLE_README.format(
        cycle=meta.cycle, cycle_id=meta.cycle_id, rubric=meta.rubric_version, version=snapshot.version,
        input_hash=input_hash, n_resamples=meta.n_resamples, seed=meta.seed,
        judge_run=f"#{meta.judge_run} ({meta.judge_models.primary if meta.judge_models else None})"
        if meta.judge_run else "none",
        software=", ".join(f"{k} {v}" for k, v in sorted((meta.software or {}).items())),
    )
    files[SnapshotFile.Format.BUNDLE] = citable_bundle(
        files=files, names=FILE_NAMES, readme=readme,
        folder=f"faithbench-report-cycle-{meta.cycle_id}-v{snapshot.version}")
    return files


# --- reading ----------------------------------------------------------------------------------------

def version_param(raw: str | None) -> int | None:
    """A `?version=` query value: None when absent, else a whole number ≥ 1 (ValueError naming the field)."""
    if raw is None or raw == "":
        return None
    version = query_whole_number(raw, maximum=2**31 - 1)
    if version is None:
        raise ValueError(f"version: must be a whole number ≥ 1, got {raw[:20]!r}")
    return version


def snapshot_for(
    *, cycle: CalibrationCycle | None = None, study: Study | None = None, version: int | None = None,
    with_payload: bool = True,
) -> ReportSnapshot | None:
    """The asked-for version of a cycle's (or a study's) report, else its newest ready one (None if there is none).

    Downloads pass `with_payload=False`: they serve stored files and need not read the report's JSON.
    """
    if (cycle is None) == (study is None):
        raise TypeError("snapshot_for: give a cycle or a study")
    snapshots = ReportSnapshot.objects.filter(cycle=cycle) if cycle is not None else \
        ReportSnapshot.objects.filter(study=study)
    if not with_payload:
        snapshots = snapshots.defer("payload", "rater_key")
    if version is not None:
        return snapshots.filter(version=version).first()
    return snapshots.ready().order_by("-version").first()


def snapshot_file(*, snapshot: ReportSnapshot, fmt: str) -> SnapshotFile | None:
    """One stored file of a ready snapshot."""
    return SnapshotFile.objects.filter(snapshot=snapshot, format=fmt).first()


def snapshot_file_name(*, snapshot: ReportSnapshot, fmt: str) -> str:
    """The download's file name: cycle (or study) id, version and what it is."""
    ext = {"bundle": "zip", "ratings": "csv"}.get(fmt, fmt)
    if snapshot.label_cycle_id:
        stem = "inputs" if fmt == "ratings" else "calibrated-leaderboard"
        return f"{stem}-run-{snapshot.judge_run_id}-v{snapshot.version}.{ext}"
    stem = "ratings" if fmt == "ratings" else "irr-report"
    subject = f"study-{snapshot.study_id}" if snapshot.study_id else f"cycle-{snapshot.cycle_id}"
    return f"{stem}-{subject}-v{snapshot.version}.{ext}"


@dataclass(frozen=True)
class Changes:
    """What changed in a cycle since a snapshot read it."""

    scores: int
    gold_decisions: int
    newer_judge_run: JudgeRun | None

    @property
    def any(self) -> bool:
        return bool(self.scores or self.gold_decisions or self.newer_judge_run)

    def describe(self, version: int) -> str:
        parts = []
        if self.scores:
            parts.append(f"{self.scores} new score{'s' if self.scores != 1 else ''}")
        if self.gold_decisions:
            parts.append(f"{self.gold_decisions} new gold decision{'s' if self.gold_decisions != 1 else ''}")
        if self.newer_judge_run:
            parts.append(f"a newer judge run (#{self.newer_judge_run.pk})")
        return f"{', '.join(parts)} since version {version}" if parts else f"no changes since version {version}"


def snapshot_changes(*, snapshot: ReportSnapshot) -> Changes:
    """Scores submitted, skipped or reopened, gold decisions and judge runs that came after the snapshot read the data."""
    watermark = snapshot.watermark or {}
    scores = AnnotationEvent.objects.filter(
        annotation__assignment__cycle_id=snapshot.cycle_id, id__gt=watermark.get("annotation_event", 0),
        kind__in=[AnnotationEvent.Kind.SUBMITTED, AnnotationEvent.Kind.SKIPPED, AnnotationEvent.Kind.REOPENED],
    ).count()
    gold = AdjudicationDecision.objects.filter(
        item__cycle_id=snapshot.cycle_id, id__gt=watermark.get("adjudication", 0)
    ).count()
    newest = judge_run_for_cycle(cycle=snapshot.cycle) if snapshot.cycle is not None else None
    newer = newest if newest is not None and (snapshot.judge_run_id is None or newest.pk > snapshot.judge_run_id) else None
    return Changes(scores=scores, gold_decisions=gold, newer_judge_run=newer)


def snapshot_is_stale(*, snapshot: ReportSnapshot) -> bool:
    """A running snapshot whose worker stopped writing progress."""
    return (snapshot.status == ReportSnapshot.Status.RUNNING and snapshot.heartbeat_at is not None
            and snapshot.heartbeat_at < timezone.now() - STALE_AFTER)


def snapshot_summary(snapshot: ReportSnapshot) -> dict[str, Any]:
    """The citation line of a snapshot (for the CLI and the API)."""
    return {"cycle": snapshot.cycle_id, "study": snapshot.study_id, "version": snapshot.version, "status": snapshot.status,
            "input_hash": snapshot.input_hash, "seed": snapshot.seed, "n_resamples": snapshot.n_resamples,
            "requested_at": snapshot.requested_at.isoformat(),
            "finished_at": snapshot.finished_at.isoformat() if snapshot.finished_at else None}

