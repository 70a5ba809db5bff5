# Data: the existing report snapshots get their kind and subject; every case-review report, IRT difficulty fit and
# bias check of calibration becomes a ready Snapshot with its payload, version, hash and summary (calibration 0012
# then deletes those three models). Rows are copied literally; no project code is imported.

import hashlib
import json

from django.db import migrations


def payload_hash(payload):
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ready(Snapshot, db, *, at, **fields):
    """A ready snapshot dated `at` (requested_at is auto_now_add: set afterwards)."""
    snapshot = Snapshot.objects.using(db).create(status="ready", progress=100, started_at=at, finished_at=at,
                                                 heartbeat_at=at, **fields)
    Snapshot.objects.using(db).filter(pk=snapshot.pk).update(requested_at=at)
    return snapshot


def bias_subject(check):
    if check.kind == "position":
        return f"position/pairwise-{check.pairwise_run_id}"
    if check.kind == "tradition":
        return f"tradition/cycle-{check.cycle_id}"
    return f"{check.kind}/run-{check.judge_run_id}"


def forwards(apps, schema_editor):
    db = schema_editor.connection.alias
    Snapshot = apps.get_model("evidence", "Snapshot")
    for snap in Snapshot.objects.using(db).only("id", "cycle_id", "study_id", "label_cycle_id", "judge_run_id"):
        if snap.label_cycle_id:
            kind, subject = "calibrated", str(snap.judge_run_id)
        elif snap.study_id:
            kind, subject = "study_report", str(snap.study_id)
        else:
            kind, subject = "cycle_report", str(snap.cycle_id)
        Snapshot.objects.using(db).filter(pk=snap.pk).update(kind=kind, subject=subject)

    CaseReviewReport = apps.get_model("calibration", "CaseReviewReport")
    for report in CaseReviewReport.objects.using(db).order_by("id"):
        ready(Snapshot, db, at=report.created_at, kind="case_review", subject=str(report.cycle_id),
              version=report.version, payload=report.payload, input_hash=report.input_hash, seed=report.seed,
              n_resamples=0, requested_by_id=report.created_by_id)

    DifficultyFit = apps.get_model("calibration", "DifficultyFit")
    new_ids, versions = {}, {}
    fits = list(DifficultyFit.objects.using(db).order_by("id"))
    for fit in fits:
        subject = f"{fit.dimension}/{fit.rotation}"
        versions[subject] = versions.get(subject, 0) + 1
        new_ids[fit.pk] = ready(
            Snapshot, db, at=fit.created_at, kind="irt_fit", subject=subject, version=versions[subject],
            payload=fit.payload, input_hash=payload_hash(fit.payload), seed=0, n_resamples=0,
            requested_by_id=fit.created_by_id,
            summary={"dimension": fit.dimension, "rotation": fit.rotation, "items": fit.items,
                     "persons": fit.persons, "equated_to": None}).pk
    for fit in fits:  # equating names the base fit: by its new id
        if fit.equated_to_id is None:
            continue
        snapshot = Snapshot.objects.using(db).get(pk=new_ids[fit.pk])
        snapshot.summary["equated_to"] = new_ids.get(fit.equated_to_id)
        equating = (snapshot.payload or {}).get("equating")
        if isinstance(equating, dict) and equating.get("to_fit") in new_ids:
            equating["to_fit"] = new_ids[equating["to_fit"]]
        snapshot.save(update_fields=["summary", "payload"])

    BiasCheck = apps.get_model("calibration", "BiasCheck")
    versions = {}
    for check in BiasCheck.objects.using(db).order_by("id"):
        subject = bias_subject(check)
        versions[subject] = versions.get(subject, 0) + 1
        ready(Snapshot, db, at=check.computed_at, kind="bias_check", subject=subject, version=versions[subject],
              payload=check.payload, input_hash=payload_hash(check.payload), seed=0,
              n_resamples=int((check.payload or {}).get("n_resamples") or 0), requested_by_id=check.requested_by_id,
              judge_run_id=check.judge_run_id, pairwise_run_id=check.pairwise_run_id, cycle_id=check.cycle_id,
              summary={"check": check.kind, "flagged": check.flagged, "n": check.n})


def backwards(apps, schema_editor):
    """The copies go (calibration 0012's reverse recreates the old tables empty: their rows are not restored)."""
    apps.get_model("evidence", "Snapshot").objects.using(schema_editor.connection.alias).filter(
        kind__in=["case_review", "irt_fit", "bias_check"]).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('calibration', '0012_case_review_report_cycle_in_casereview'),
        ('evidence', '0002_kind_subject_summary'),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
