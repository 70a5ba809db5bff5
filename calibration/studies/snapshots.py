"""A study's report as a snapshot, through the machinery of a cycle's: versions in request order, computed by the
worker from one read of the rows, stored with its input hash, seed, software and files (JSON, long CSV, PDF,
ratings.csv, the citable zip bundle), never edited."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse

from accounts.models import User
from evidence.kit.files import FILE_NAMES, citable_bundle, download_name
from evidence.kit.meta import DEFAULT_RESAMPLES, SnapshotMeta, software_line, software_versions
from evidence.kit.numbers import methods_sentence
from evidence.models import Snapshot, SnapshotFile
from evidence.registry import KindSpec, Progress
from evidence.services import bootstrap_option_errors, snapshot_request, snapshot_run, snapshot_store

from ..models import Study
from .checks import study_check, study_methods
from .pdf import study_report_pdf
from .report import (
    StudyDimensionMeta,
    StudyProvenance,
    StudyReport,
    study_ratings_csv,
    study_report_build,
    study_report_json,
    study_tables_csv,
)
from .selectors import study_dimensions, study_rows

DEFAULT_STUDY_SEED = 0


@transaction.atomic
def study_snapshot_request(
    *, study: Study, requested_by: User | None, seed: int = DEFAULT_STUDY_SEED, n_resamples: int = DEFAULT_RESAMPLES,
) -> Snapshot:
    """Queue the next version of a study's report (the worker computes it). Refused (code "pending") while
    another version of the study is queued or running."""
    errors = bootstrap_option_errors(seed=seed, n_resamples=n_resamples)
    if errors:
        raise ValidationError(errors, code="invalid")
    study = Study.objects.select_for_update().get(pk=study.pk)  # versions are handed out in order
    return snapshot_request(kind=Snapshot.Kind.STUDY_REPORT, subject=study.pk, requested_by=requested_by, seed=seed,
                            n_resamples=n_resamples)


def study_snapshot_compute(
    *, snapshot_id: int, progress: Callable[[int, str], None] | None = None,
) -> Snapshot:
    """Compute a queued study snapshot and store it with its files; safe to call twice."""
    return snapshot_run(snapshot_id=snapshot_id, progress=progress)


def _compute(snapshot: Snapshot, reporter: Progress) -> None:
    study = Study.objects.get(pk=snapshot.subject)
    with transaction.atomic():  # one consistent read of the study
        rows = study_rows(study=study)
        dimensions = study_dimensions(study=study)
    ratings = study_ratings_csv(study=study.name, rows=rows)
    input_hash = hashlib.sha256(ratings).hexdigest()
    software = software_versions()
    reporter(5, "computing agreement", force=True)
    meta = StudyProvenance(
        study=study.name, study_id=study.pk, source=study.source, software=software,
        dimensions=[StudyDimensionMeta(key=d.key, level=d.level, scale_min=d.scale_min, scale_max=d.scale_max)
                    for d in dimensions],
        judge_reference="each judge against the human mean (Spearman ρ, Kendall τ-b, mean signed difference) and "
                        "the lower human median (linear κ, confusion matrix)",
        snapshot=SnapshotMeta(version=snapshot.version, input_hash=input_hash, input_file="ratings.csv",
                              requested_at=snapshot.requested_at.isoformat()),
    )
    report = study_report_build(
        rows, dimensions=dimensions, n_resamples=snapshot.n_resamples, seed=snapshot.seed, meta=meta,
        progress=lambda done, total: reporter(5 + int(85 * done / max(total, 1)), f"dimension {done} of {total}"),
    )
    reporter(90, "rendering the files", force=True)
    files = study_files_render(report=report, ratings=ratings, snapshot=snapshot, input_hash=input_hash)
    counts = {"items": len({r.item for r in rows}), "ratings": len(rows), "dimensions": len(dimensions),
              "raters": len({r.rater for r in rows if r.kind == "human"}),
              "judges": len({r.rater for r in rows if r.kind == "judge"})}
    payload = report.to_json()  # the one handoff to storage: the typed tree's JSON
    snapshot_store(snapshot=snapshot, files=files, payload=payload, input_hash=input_hash, input_counts=counts,
                   software=software)


BUNDLE_README = """FaithBench calibration — report on an imported rating study, citable bundle

Study:            {study} (id {study_id})
Source:           {source}
Report version:   {version}
Input hash:       sha256 {input_hash} (of ratings.csv: `sha256sum ratings.csv` prints it)
Bootstrap:        {n_resamples} resamples, seed {seed}, units (items) resampled; 95 % intervals: {methods}
Software:         {software}

Files
- report.json   The whole report. meta: the study, its dimensions (level of measurement, scale), seed,
                resamples, software. dimensions: per dimension `humans` (Krippendorff's α at the
                dimension's level with its interval, ICC(2,1) and ICC(3,1) with F-based intervals,
                exact and within-one agreement, Fleiss' κ, Gwet's AC1/AC2, leave-one-rater-out α,
                an `intervals` object per coefficient), `judges` (each judge against the human mean:
                Spearman ρ, Kendall τ-b, mean signed difference; against the lower human median: linear
                κ and, for whole-number scales of ≤ 10 points, the confusion matrix; α of the humans
                with and without the judge), and `groups` (the same per rater group).
- tables.csv    The same numbers in long format: dimension, group, comparison, metric, value, ci_low,
                ci_high, n.
- report.pdf    A printable summary; every page names the study, the version and the input hash.
- ratings.csv   The exact input rows in the long import format (study, item, dimension, rater,
                rater_kind, score, group): `manage.py import_ratings ratings.csv --study NAME` loads it.
- SHA256SUMS    Checksums of the files above.

To reproduce: calibration.studies.report.study_report_build(study_ratings_parse(ratings.csv),
dimensions=<meta.dimensions of report.json>, n_resamples={n_resamples}, seed={seed}).
"""


def study_files_render(*, report: StudyReport, ratings: bytes, snapshot: Snapshot,
                       input_hash: str) -> dict[str, bytes]:
    """Every file of a study snapshot, rendered once."""
    files: dict[str, bytes] = {
        SnapshotFile.Format.JSON: study_report_json(report),
        SnapshotFile.Format.CSV: study_tables_csv(report),
        SnapshotFile.Format.PDF: study_report_pdf(report, version=snapshot.version, input_hash=input_hash),
        SnapshotFile.Format.RATINGS: ratings,
    }
    meta = report.meta
    readme = BUNDLE_README.format(
        study=meta.study, study_id=meta.study_id, source=meta.source or "—", version=snapshot.version,
        input_hash=input_hash, n_resamples=meta.n_resamples, seed=meta.seed,
        methods=methods_sentence(study_methods(json.loads(files[SnapshotFile.Format.JSON]))),
        software=software_line(meta.software),
    )
    files[SnapshotFile.Format.BUNDLE] = citable_bundle(
        files=files, names=FILE_NAMES, readme=readme,
        folder=f"faithbench-report-study-{meta.study_id}-v{snapshot.version}")
    return files


def study_file_name(snapshot: Snapshot, fmt: str) -> str:
    """The download's file name of a study's report: irr-report-study-4-v1.pdf, ratings-study-4-v1.csv, …"""
    return download_name(fmt=fmt, stem="irr-report", subject=f"study-{snapshot.subject}", version=snapshot.version)


# Registered by CalibrationConfig.ready.
STUDY_REPORT_KIND = KindSpec(
    kind=Snapshot.Kind.STUDY_REPORT, compute=_compute, file_name=study_file_name,
    describe=lambda s: str(Study.objects.get(pk=s.subject)),
    page_url=lambda s: f"{reverse('calibration:study_report', kwargs={'pk': s.study_id})}?version={s.version}",
    check=study_check)
