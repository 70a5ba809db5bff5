"""Reading snapshots: a subject's versions, the asked-for or newest ready version, its stored files, whether a
running one went stale, and the citation line the CLI, the tasks and the API print."""
from __future__ import annotations

from typing import TypedDict

from django.db.models import Q
from django.utils import timezone

from access.web import query_whole_number

from .models import STALE_AFTER, Snapshot, SnapshotFile, SnapshotQuerySet
from .registry import KINDS, kind_spec


def version_param(raw: str | None) -> int | None:
    """A `?version=` query value: None when absent, else a whole number ≥ 1 (ValueError naming the field)."""
    if raw is None or raw == "":
        return None
    version = query_whole_number(raw, maximum=2**31 - 1)
    if version is None:
        raise ValueError(f"version: must be a whole number ≥ 1, got {raw[:20]!r}")
    return version


def snapshot_versions(*, kind: str, subject: str | int) -> SnapshotQuerySet:
    """Every version of a subject, newest first, without the payload and the rater key."""
    return Snapshot.objects.of(kind, subject).defer("payload", "rater_key").order_by("-version")


def snapshot_for(
    *, kind: str, subject: str | int, version: int | None = None, with_payload: bool = True,
) -> Snapshot | None:
    """The asked-for version of a subject's snapshot, else its newest ready one (None if there is none).

    Downloads pass `with_payload=False`: they serve stored files and need not read the payload.
    """
    snapshots = Snapshot.objects.of(kind, subject)
    if not with_payload:
        snapshots = snapshots.defer("payload", "rater_key")
    if version is not None:
        return snapshots.filter(version=version).first()
    return snapshots.ready().order_by("-version").first()


def snapshot_latest_ready(*, kind: str, subjects: list[str] | None = None) -> dict[str, Snapshot]:
    """The newest ready version of each subject of a kind (of `subjects` when given), without payloads."""
    found = Snapshot.objects.of(kind).ready().defer("payload", "rater_key")
    if subjects is not None:
        found = found.filter(subject__in=subjects)
    return {s.subject: s for s in found.order_by("subject", "version")}


def snapshot_file(*, snapshot: Snapshot, fmt: str) -> SnapshotFile | None:
    """One stored file of a ready snapshot."""
    return SnapshotFile.objects.filter(snapshot=snapshot, format=fmt).first()


def snapshot_is_stale(*, snapshot: Snapshot) -> bool:
    """A running snapshot whose worker stopped writing progress."""
    return (snapshot.status == Snapshot.Status.RUNNING and snapshot.heartbeat_at is not None
            and snapshot.heartbeat_at < timezone.now() - STALE_AFTER)


class Citation(TypedDict):
    """The citation line of a snapshot (the CLI's, the tasks' and the API's)."""

    cycle: int | None
    study: int | None
    version: int
    status: str
    input_hash: str
    seed: int
    n_resamples: int
    requested_at: str
    finished_at: str | None


def snapshot_summary(snapshot: Snapshot) -> Citation:
    """The citation line of a snapshot (for the CLI and the API)."""
    return {"cycle": snapshot.cycle_id if snapshot.kind == Snapshot.Kind.CYCLE_REPORT else None,
            "study": snapshot.study_id, "version": snapshot.version, "status": snapshot.status,
            "input_hash": snapshot.input_hash, "seed": snapshot.seed, "n_resamples": snapshot.n_resamples,
            "requested_at": snapshot.requested_at.isoformat(),
            "finished_at": snapshot.finished_at.isoformat() if snapshot.finished_at else None}


def snapshot_file_name(*, snapshot: Snapshot, fmt: str) -> str:
    """The download's file name of one stored file (its kind names it: subject, version and what it is)."""
    spec = kind_spec(snapshot.kind)
    if spec.file_name is not None:
        return spec.file_name(snapshot, fmt)
    ext = {"bundle": "zip", "ratings": "csv"}.get(fmt, fmt)
    return f"{snapshot.kind}-{snapshot.subject.replace('/', '-')}-v{snapshot.version}.{ext}"


def snapshot_by_id(*, pk: int) -> Snapshot | None:
    """One version by its id, whatever its kind or status (None if there is none)."""
    return Snapshot.objects.filter(pk=pk).first()


def snapshot_ids_computed() -> list[int]:
    """Every version with stored files (ready or failed checks), and every version of a kind recorded as one checked
    JSON payload, oldest first: what `check_artefact --all` reads."""
    recorded = [kind for kind, spec in KINDS.items() if spec.compute is None and spec.check is not None]
    return list(Snapshot.objects.filter(status__in=[Snapshot.Status.READY, Snapshot.Status.FAILED_CHECKS])
                .filter(Q(files__isnull=False) | Q(kind__in=recorded))
                .distinct().order_by("pk").values_list("pk", flat=True))


def snapshot_stored_files(*, snapshot: Snapshot) -> dict[str, bytes]:
    """A version's stored files as format → bytes: what the artefact checker reads."""
    return {f.format: bytes(f.content) for f in SnapshotFile.objects.filter(snapshot=snapshot)}
