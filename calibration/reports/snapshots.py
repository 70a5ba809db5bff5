"""A cycle's report as an `evidence.Snapshot` (kind cycle_report): request a new version, compute it (in the worker),
and read what changed since.

Computing reads the cycle's rows once, writes them as `ratings.csv` (the exact input rows; its SHA-256
is the snapshot's input hash), builds the report from those rows, renders every file once and stores
it. Pages, exports, the CLI and the API only ever read a stored snapshot.
"""
from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.urls import reverse

from accounts.models import User
from annotations.models import AdjudicationDecision, Annotation, AnnotationEvent, CalibrationCycle
from evaluations.models import JudgeRun
from evaluations.spreadsheet import csv_cell_unprotect, csv_writer
from evidence.kit.files import FILE_NAMES, citable_bundle, download_name
from evidence.kit.meta import DEFAULT_RESAMPLES, DEFAULT_SEED, SnapshotMeta, software_line, software_versions
from evidence.kit.numbers import methods_sentence
from evidence.kit.trees import tree_from_json
from evidence.models import Snapshot, SnapshotFile
from evidence.registry import KindSpec, Progress
from evidence.services import bootstrap_option_errors, snapshot_request, snapshot_run, snapshot_store

from ..cycles.ratings import Rating, ReportInputs, UnitInfo, judge_run_for_cycle, report_inputs
from ..cycles.selectors import cycle_assignment_completeness
from .build import calibration_report_build
from .cells import validation_cells
from .checks import overall_alpha_line, report_check, report_methods
from .exporting import REPORT_EXPORTERS
from .languages import language_cells
from .pdf import report_pdf
from .schema import Completeness, JudgeModels, Provenance, Report

RATINGS_FIELDS = ["item", "sub_dimension", "dimension", "tradition", "difficulty", "source", "rater", "score"]


# --- the input rows -------------------------------------------------------------------------------

def ratings_csv(inputs: ReportInputs) -> bytes:
    """The exact input rows, one per unit, expert score, judge score and gold score, in a fixed order."""
    rows: list[tuple[str, ...]] = []
    facets = {u.key: u for u in inputs.units}
    for rating in inputs.ratings:
        facets.setdefault(rating.unit.key, rating.unit)

    # issue 35: a `language` column only when a case is not English, so an English cycle's file (and its hash) is
    # the one it always was; a file without the column reads back as English
    languages = any(u.language != "en" for u in facets.values())

    def row(key: tuple[str, str], source: str, rater: str, score: int | str) -> tuple[str, ...]:
        unit = facets[key]
        return (unit.item, unit.sub_dimension, unit.dimension, unit.tradition, unit.difficulty, source, rater,
                str(score), *((unit.language,) if languages else ()))

    rows.extend(row(key, "unit", "", "") for key in facets)
    rows.extend(row(r.unit.key, "expert", r.rater, r.score) for r in inputs.ratings)
    rows.extend(row(key, "judge", "judge", score) for key, score in inputs.judge.items() if key in facets)
    rows.extend(row(key, "gold", "gold", score) for key, score in inputs.gold.items() if key in facets)
    order = {"unit": 0, "expert": 1, "judge": 2, "gold": 3}
    rows.sort(key=lambda r: (r[2], _natural(r[0]), r[1], order[r[5]], r[6]))
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(RATINGS_FIELDS + (["language"] if languages else []))
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _natural(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (0, value)


def ratings_csv_parse(data: bytes) -> ReportInputs:
    """Read ratings.csv back into the builder's inputs (no rater key: the file has pseudonyms only), so anyone can
    recompute a snapshot from its bundle."""
    units: dict[tuple[str, str], UnitInfo] = {}
    ratings: list[Rating] = []
    judge: dict[tuple[str, str], int] = {}
    gold: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(csv.DictReader(io.StringIO(data.decode("utf-8"))), start=2):
        record = {key: csv_cell_unprotect(value) for key, value in raw.items()}
        unit = units.setdefault(
            (record["item"], record["sub_dimension"]),
            UnitInfo(record["item"], record["sub_dimension"], record["dimension"], record["tradition"],
                     record["difficulty"], record.get("language") or "en"),
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
    return ReportInputs(list(units.values()), ratings, judge, gold, rater_key={})


# --- requesting and computing ---------------------------------------------------------------------

def _watermark(cycle: CalibrationCycle) -> dict[str, int]:
    return {
        "annotation_event": AnnotationEvent.objects.counted().filter(annotation__assignment__cycle=cycle)
        .aggregate(top=Max("id"))["top"] or 0,
        "adjudication": AdjudicationDecision.objects.filter(item__cycle=cycle).aggregate(top=Max("id"))["top"] or 0,
    }


@transaction.atomic
def report_snapshot_request(
    *, cycle: CalibrationCycle, requested_by: User | None, run_id: int | None = None,
    seed: int = DEFAULT_SEED, n_resamples: int = DEFAULT_RESAMPLES,
) -> Snapshot:
    """Queue the next version of a cycle's report (the worker computes it; see `calibration.reports.tasks`).
    Refused (code "pending") while another version of the cycle is queued or running."""
    errors = bootstrap_option_errors(seed=seed, n_resamples=n_resamples)
    run = judge_run_for_cycle(cycle=cycle, run_id=run_id)
    if run_id is not None and run is None:
        errors["run"] = [f"judge run {run_id} does not exist or is on another rubric"]
    if errors:
        raise ValidationError(errors, code="invalid")
    cycle = CalibrationCycle.objects.select_for_update().get(pk=cycle.pk)  # versions are handed out in order
    return snapshot_request(kind=Snapshot.Kind.CYCLE_REPORT, subject=cycle.pk, requested_by=requested_by, seed=seed,
                            n_resamples=n_resamples, cycle=cycle, judge_run=run)


def report_snapshot_compute(
    *, snapshot_id: int, progress: Callable[[int, str], None] | None = None,
) -> Snapshot:
    """Compute a queued snapshot of a cycle and store it with its files; safe to call twice (the second does nothing)."""
    return snapshot_run(snapshot_id=snapshot_id, progress=progress)


def _compute(snapshot: Snapshot, reporter: Progress) -> None:
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
    report.languages = language_cells(inputs.ratings, judge=inputs.judge, units=inputs.units,
                                      n_resamples=snapshot.n_resamples, seed=snapshot.seed)
    reporter(90, "rendering the files", force=True)
    files = snapshot_files_render(report=report, ratings=ratings, snapshot=snapshot, input_hash=input_hash)
    counts = {
        "units": len(inputs.units), "expert_ratings": len(inputs.ratings), "raters": len(inputs.rater_key),
        "judge_scores": len(inputs.judge), "gold_scores": len(inputs.gold),
    }
    payload = report.to_json()  # the one handoff to storage: the typed tree's JSON
    snapshot_store(snapshot=snapshot, files=files, payload=payload, input_hash=input_hash, input_counts=counts,
                   watermark=watermark, software=software, rater_key=inputs.rater_key, tree=report)


# --- rendering the files --------------------------------------------------------------------------

BUNDLE_README = """FaithBench calibration report — citable bundle

Cycle:            {cycle} (id {cycle_id}), rubric v{rubric}
Report version:   {version}
Input hash:       sha256 {input_hash} (of ratings.csv: `sha256sum ratings.csv` prints it)
Bootstrap:        {n_resamples} resamples, seed {seed}, 95 % intervals: {methods}
                  (per coefficient, the method whose simulated coverage reaches 0.93; tables.csv's ci_method
                  column names each row's)
{headline}
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


def snapshot_files_render(*, report: Report, ratings: bytes, snapshot: Snapshot,
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
        methods=methods_sentence(report_methods(report)), headline=overall_alpha_line(report),
        judge_run=f"#{meta.judge_run} ({meta.judge_models.primary if meta.judge_models else None})"
        if meta.judge_run else "none",
        software=software_line(meta.software),
    )
    files[SnapshotFile.Format.BUNDLE] = citable_bundle(
        files=files, names=FILE_NAMES, readme=readme,
        folder=f"faithbench-report-cycle-{meta.cycle_id}-v{snapshot.version}")
    return files


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
            parts.append(f"{self.scores} new or changed score{'s' if self.scores != 1 else ''}")
        if self.gold_decisions:
            parts.append(f"{self.gold_decisions} new gold decision{'s' if self.gold_decisions != 1 else ''}")
        if self.newer_judge_run:
            parts.append(f"a newer judge run (#{self.newer_judge_run.pk})")
        return f"{', '.join(parts)} since version {version}" if parts else f"no changes since version {version}"


def snapshot_changes(*, snapshot: Snapshot) -> Changes:
    """Scores submitted, skipped, reopened or taken back, gold decisions and judge runs that came after the snapshot
    read the data. Scores are counted once per annotation (not per event: a score undone and submitted again is one
    score), and only when its state differs from what the snapshot read (submitted and undone since is none)."""
    watermark = snapshot.watermark or {}
    mark = watermark.get("annotation_event", 0)
    kinds = [AnnotationEvent.Kind.SUBMITTED, AnnotationEvent.Kind.SKIPPED, AnnotationEvent.Kind.REOPENED,
             AnnotationEvent.Kind.UNDONE]
    final = {AnnotationEvent.Kind.SUBMITTED, AnnotationEvent.Kind.SKIPPED}
    touched = set(AnnotationEvent.objects.counted().filter(annotation__assignment__cycle_id=snapshot.cycle_id, id__gt=mark,
                                                 kind__in=kinds).values_list("annotation_id", flat=True))
    now_final = set(Annotation.objects.filter(pk__in=touched, status__in=final).values_list("pk", flat=True))
    read_as: dict[int, str] = {}  # the state the snapshot read: the last such event at or before its watermark
    for annotation_id, kind in (AnnotationEvent.objects.filter(annotation_id__in=touched - now_final, id__lte=mark,
                                                               kind__in=kinds)
                                .order_by("annotation_id", "id").values_list("annotation_id", "kind")):
        read_as[annotation_id] = kind
    scores = len(now_final) + sum(1 for kind in read_as.values() if kind in final)
    gold = AdjudicationDecision.objects.filter(
        item__cycle_id=snapshot.cycle_id, id__gt=watermark.get("adjudication", 0)
    ).count()
    newest = judge_run_for_cycle(cycle=snapshot.cycle) if snapshot.cycle is not None else None
    newer = newest if newest is not None and (snapshot.judge_run_id is None or newest.pk > snapshot.judge_run_id) else None
    return Changes(scores=scores, gold_decisions=gold, newer_judge_run=newer)


def report_file_name(snapshot: Snapshot, fmt: str) -> str:
    """The download's file name of a cycle's report: irr-report-cycle-3-v2.pdf, ratings-cycle-3-v2.csv, …"""
    return download_name(fmt=fmt, stem="irr-report", subject=f"cycle-{snapshot.subject}", version=snapshot.version)


# Registered by CalibrationConfig.ready.
CYCLE_REPORT_KIND = KindSpec(
    kind=Snapshot.Kind.CYCLE_REPORT, compute=_compute, file_name=report_file_name,
    select_related=("cycle__rubric", "judge_run"), check=report_check,
    page_url=lambda s: f"{reverse('calibration:report', kwargs={'pk': s.cycle_id})}?version={s.version}")
