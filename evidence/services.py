"""Writing snapshots: queue a version (one pending per kind and subject), run it with progress, a heartbeat and the
stale rule, store its files with their SHA-256 and mark it ready or failed; or record a small kind's version at once.
Every version stores the software that made it (the evidence kit's `software_versions`). Each kind's builder, and
what it reads with the snapshot, come from the registry; the bundle and the other artefact pieces are in `kit/`."""
from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, models, transaction
from django.db.models import Max, ProtectedError
from django.db.models.signals import pre_delete
from django.utils import timezone

from accounts.models import Notification, User
from accounts.notifications import notify
from audit.services import audit_snapshot_computed

from .kit.meta import software_versions
from .models import STALE_AFTER, Snapshot, SnapshotFile, SnapshotQuerySet, SnapshotSummary
from .registry import KINDS, Progress, kind_spec

logger = logging.getLogger(__name__)

MAX_RESAMPLES = 10_000
STALE_ERROR = "The worker stopped while computing (no progress for 5 minutes)."
PENDING = "pending"  # the code of the refusal to queue a version while another is queued or running


def bootstrap_option_errors(*, seed: int, n_resamples: int) -> dict[str, list[str]]:
    """What is wrong with a requested seed and number of resamples, by field (empty: nothing)."""
    errors: dict[str, list[str]] = {}
    if not 0 <= n_resamples <= MAX_RESAMPLES:
        errors["n_resamples"] = [f"must be between 0 and {MAX_RESAMPLES:,}"]
    if seed < 0:
        errors["seed"] = ["must be a whole number ≥ 0"]
    return errors


def snapshot_pending_refuse(snapshots: SnapshotQuerySet) -> None:
    """Refuse a new version while one of the same subject is queued or running (a computation is queued once):
    ValidationError with code "pending", naming that version. Call it with the subject's row locked."""
    pending = snapshots.pending().order_by("version").only("version", "status", "progress").first()
    if pending is None:
        return
    state = ("queued for the background worker" if pending.status == Snapshot.Status.QUEUED
             else f"being computed ({pending.progress} %)")
    raise ValidationError({NON_FIELD_ERRORS: [ValidationError(
        f"Version {pending.version} is {state}; a new version can be requested once it has finished.",
        code=PENDING)]})


def snapshot_pending_error(exc: ValidationError) -> bool:
    """Whether a service's ValidationError is the refusal of a second queued version."""
    return any(error.code == PENDING for error in getattr(exc, "error_dict", {}).get(NON_FIELD_ERRORS, []))


def snapshot_abandon_stale(*, snapshots: SnapshotQuerySet, now: datetime) -> None:
    """Mark failed the running versions whose worker stopped writing progress (the stale rule)."""
    snapshots.filter(status=Snapshot.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER).update(
        status=Snapshot.Status.FAILED, finished_at=now, error=STALE_ERROR)


def snapshot_request(
    *, kind: str, subject: str | int, requested_by: User | None, seed: int, n_resamples: int, **inputs: Any,
) -> Snapshot:
    """Queue the next version of `kind` about `subject` (the worker computes it with the kind's registered builder).
    Stale running versions are failed first; refused (code "pending") while another is queued or running. The
    caller validates its inputs and holds its subject's row locked (versions are handed out in order); `inputs` are
    the typed inputs (cycle, label_cycle, judge_run, input_counts)."""
    mine = Snapshot.objects.of(kind, subject)
    snapshot_abandon_stale(snapshots=mine, now=timezone.now())
    snapshot_pending_refuse(mine)
    top = mine.aggregate(top=Max("version"))["top"] or 0
    return Snapshot.objects.create(kind=kind, subject=str(subject), version=top + 1, seed=seed,
                                   n_resamples=n_resamples, requested_by=requested_by, **inputs)


def payload_hash(payload: object) -> str:
    """SHA-256 of a payload's canonical JSON: the input hash of a kind with no separate input file."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def snapshot_record(
    *, kind: str, subject: str, payload: object, requested_by: User | None, input_hash: str = "",
    summary: SnapshotSummary | None = None, seed: int = 0, n_resamples: int = 0, **inputs: Any,
) -> Snapshot:
    """Store a version computed at once (case-review reports, IRT fits, bias checks): ready as soon as it exists,
    the next version of its subject, hashed by its inputs (else by its payload), with the software recording it.
    The kind's artefact check reads the payload first: a payload that contradicts itself is stored as *failed
    checks* with the list."""
    software = software_versions()
    checks = snapshot_checks(snapshot=Snapshot(kind=kind, subject=subject, payload=payload), files={}, tree=payload)
    if checks:
        logger.warning("%s %s failed %d artefact checks: %s", kind, subject, len(checks), checks[0])
    for _attempt in range(3):
        try:
            with transaction.atomic():
                top = Snapshot.objects.of(kind, subject).aggregate(top=Max("version"))["top"] or 0
                now = timezone.now()
                return Snapshot.objects.create(
                    kind=kind, subject=subject, version=top + 1, payload=payload, checks=checks,
                    status=Snapshot.Status.FAILED_CHECKS if checks else Snapshot.Status.READY,
                    input_hash=input_hash or payload_hash(payload), summary=summary or {}, seed=seed,
                    n_resamples=n_resamples, requested_by=requested_by, started_at=now, finished_at=now,
                    heartbeat_at=now, progress=100, software=software, **inputs)
        except IntegrityError:  # another version of the subject was stored meanwhile: take the next number
            continue
    raise RuntimeError(f"could not number a new version of {kind} {subject}")


def snapshot_run(
    *, snapshot_id: int, progress: Callable[[int, str], None] | None = None,
) -> Snapshot:
    """Claim a queued snapshot, run its kind's builder on it, record a failure with its reason, and tell whoever
    asked for it. A snapshot already claimed is returned as it is; safe to call twice."""
    now = timezone.now()
    claimed = Snapshot.objects.filter(pk=snapshot_id, status=Snapshot.Status.QUEUED).update(
        status=Snapshot.Status.RUNNING, started_at=now, heartbeat_at=now, progress=1,
        progress_note="reading the scores",
    )
    spec = kind_spec(Snapshot.objects.values_list("kind", flat=True).get(pk=snapshot_id))
    snapshot = Snapshot.objects.select_related(*spec.select_related).get(pk=snapshot_id)  # what the kind reads
    if not claimed:
        return snapshot
    assert spec.compute is not None, f"{snapshot.kind} versions are recorded, not queued"
    reporter = ProgressReporter(snapshot_id, progress)
    try:
        spec.compute(snapshot, reporter)
    except Exception as exc:  # the snapshot records why it failed; nothing half-written is kept
        logger.exception("snapshot %s failed", snapshot_id)
        Snapshot.objects.filter(pk=snapshot_id).update(
            status=Snapshot.Status.FAILED, finished_at=timezone.now(), error=f"{type(exc).__name__}: {exc}"[:5000],
        )
    snapshot.refresh_from_db()
    if snapshot.status == Snapshot.Status.READY and snapshot.requested_by_id:
        name = spec.describe(snapshot) if spec.describe else snapshot.subject_name
        notify(users=User.objects.filter(pk=snapshot.requested_by_id), kind=Notification.Kind.REPORT_READY,
               text=f"Version {snapshot.version} of the report on “{name}” is ready.",
               link=snapshot_page_url(snapshot))
    return snapshot


def snapshot_page_url(snapshot: Snapshot) -> str:
    """The page showing this version (its kind says which)."""
    return kind_spec(snapshot.kind).page_url(snapshot)


def snapshot_checks(*, snapshot: Snapshot, files: Mapping[str, bytes], tree: object | None = None) -> list[str]:
    """The artefact checker's problems with a version's files, in words (empty: clean, or a kind with no check);
    `tree`: the typed tree the files were just rendered from, handed to the kind's check."""
    spec = KINDS.get(snapshot.kind)
    if spec is None or spec.check is None:
        return []
    try:
        return [str(problem) for problem in spec.check(snapshot, files, tree=tree)]
    except Exception as exc:  # a file the checker cannot read is a file a reader cannot read either
        logger.exception("snapshot %s: the artefact check could not read its files", snapshot.pk)
        return [f"the files could not be read: {type(exc).__name__}: {exc}"[:2000]]


def snapshot_store(*, snapshot: Snapshot, files: Mapping[str, bytes], software: dict[str, str] | None = None,
                   tree: object | None = None, **fields: Any) -> None:
    """Write a computed snapshot's files and mark it ready, in one transaction (a snapshot cancelled or
    abandoned meanwhile stays as it is: only a running one becomes ready). Before that, the kind's artefact check
    reads the files: a version whose files contradict each other is stored as *failed checks* with the list, never
    served as citable. `software`: the versions its builder named in its files (default: those running now);
    `tree`: the typed tree the files were rendered from, handed to the check (which then need not parse it back)."""
    software = software if software is not None else software_versions()
    checks = snapshot_checks(snapshot=snapshot, files=files, tree=tree)
    if checks:
        logger.warning("snapshot %s failed %d artefact checks: %s", snapshot.pk, len(checks), checks[0])
    status = Snapshot.Status.FAILED_CHECKS if checks else Snapshot.Status.READY
    with transaction.atomic():
        SnapshotFile.objects.bulk_create(
            SnapshotFile(snapshot_id=snapshot.pk, format=fmt, content=content,
                         sha256=hashlib.sha256(content).hexdigest(), size=len(content))
            for fmt, content in files.items()
        )
        if Snapshot.objects.filter(pk=snapshot.pk, status=Snapshot.Status.RUNNING).update(
            status=status, checks=checks, progress=100, progress_note="", finished_at=timezone.now(),
            heartbeat_at=timezone.now(), software=software, **fields,
        ):
            audit_snapshot_computed(snapshot_id=snapshot.pk, kind=snapshot.kind, subject=snapshot.subject,
                                    version=snapshot.version, input_hash=fields.get("input_hash", ""))


class ProgressReporter(Progress):
    """Writes progress to the row at most twice a second, and passes it on (to a CLI progress bar)."""

    def __init__(self, snapshot_id: int, callback: Callable[[int, str], None] | None) -> None:
        self.snapshot_id, self.callback, self.last = snapshot_id, callback, 0.0

    def __call__(self, percent: int, note: str, *, force: bool = False) -> None:
        if self.callback is not None:
            self.callback(percent, note)
        if force or time.monotonic() - self.last >= 0.5:
            self.last = time.monotonic()
            Snapshot.objects.filter(pk=self.snapshot_id).update(
                progress=min(percent, 99), progress_note=note[:200], heartbeat_at=timezone.now()
            )


def subject_protect(*, kind: str, sender: type[models.Model]) -> None:
    """Refuse to delete a subject (a study, a review cycle: rows of the apps above, named by id) while snapshots
    of it exist, as a foreign key's PROTECT would: evidence outlives what it is about."""

    def refuse(sender: type[models.Model], instance: models.Model, **kwargs: object) -> None:
        found = Snapshot.objects.of(kind, instance.pk)
        if found.exists():
            raise ProtectedError(f"{instance} has stored {kind} versions: evidence is never deleted", set(found))

    pre_delete.connect(refuse, sender=sender, weak=False, dispatch_uid=f"evidence-protect-{kind}")
