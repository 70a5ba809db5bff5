"""Keep an uploaded ratings file on the server between the upload page's steps (upload → mapping → confirm), and
run its check (the dry run) and its import on the task worker.

The file is written once to a private directory under a random name; the session holds that name and the
choices made so far, so a step can only reach the file its own session uploaded (no path ever comes from the
request). A new upload replaces the session's previous one. The worker's job writes its state beside the file
(`<token>.state.json`: status, rows so far, the summary or the errors); a cancel is a `<token>.cancel` file the job
looks for at every progress step. The uploaded file is removed when its import is done, when its check or import
fails or is cancelled, and after STUDY_UPLOAD_RETENTION_SECONDS (a day) in any case, with its state.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.core.files.uploadedfile import UploadedFile

from .forms import ImportOptions
from .importing import StudyImportFailed, study_import

SESSION_KEY = "study_upload"
MAX_AGE_SECONDS = 24 * 3600  # the default of STUDY_UPLOAD_RETENTION_SECONDS
STATE_SUFFIX = ".state.json"
CANCEL_SUFFIX = ".cancel"
MAX_ERRORS_KEPT = 200
PROGRESS_SECONDS = 0.5  # the state file is rewritten at most this often while a job runs


def retention_seconds() -> int:
    """How long an uploaded file and its job's state are kept (setting STUDY_UPLOAD_RETENTION_SECONDS)."""
    return int(getattr(settings, "STUDY_UPLOAD_RETENTION_SECONDS", MAX_AGE_SECONDS) or MAX_AGE_SECONDS)
_TOKEN = re.compile(r"^[0-9a-f]{32}$")
SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json")


def upload_dir() -> Path:
    """The directory of pending uploads (setting STUDY_UPLOAD_DIR, default a folder in the system temp dir)."""
    configured = getattr(settings, "STUDY_UPLOAD_DIR", "")
    path = Path(configured) if configured else Path(tempfile.gettempdir()) / "faithbench-study-uploads"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


@dataclass
class PendingUpload:
    """The session's uploaded file and what was chosen for it so far."""

    token: str
    name: str
    suffix: str
    study: str
    fmt: str
    size: int
    options: ImportOptions | None = None  # study_import's keyword arguments, once the mapping step is done

    @property
    def path(self) -> Path:
        return upload_dir() / f"{self.token}{self.suffix}"

    @property
    def state_path(self) -> Path:
        return upload_dir() / f"{self.token}{STATE_SUFFIX}"

    @property
    def cancel_path(self) -> Path:
        return upload_dir() / f"{self.token}{CANCEL_SUFFIX}"


def upload_store(*, session: SessionBase, upload: UploadedFile, study: str, fmt: str) -> PendingUpload:
    """Write the upload to the pending directory and remember it in the session (replacing an earlier one)."""
    upload_discard(session=session)
    _sweep()
    suffix = Path(upload.name or "").suffix.lower()
    pending = PendingUpload(token=secrets.token_hex(16), name=Path(upload.name or "upload").name[:200],
                            suffix=suffix if suffix in SUFFIXES else ".csv", study=study, fmt=fmt,
                            size=upload.size or 0)
    spooled = getattr(upload, "temporary_file_path", None)
    if callable(spooled):  # a large file Django already wrote to disk: moved (a rename), not copied
        try:
            os.replace(spooled(), pending.path)
            os.chmod(pending.path, 0o600)
            session[SESSION_KEY] = pending.__dict__.copy()
            return pending
        except OSError:
            pass  # another filesystem: copied below
    descriptor = os.open(pending.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    session[SESSION_KEY] = pending.__dict__.copy()
    return pending


def upload_current(*, session: SessionBase) -> PendingUpload | None:
    """The session's pending upload, or None (none, expired, or its file is gone)."""
    data = session.get(SESSION_KEY)
    if not isinstance(data, dict) or not _TOKEN.match(str(data.get("token", ""))) \
            or data.get("suffix") not in SUFFIXES:
        return None
    try:
        pending = PendingUpload(**data)
    except TypeError:
        return None
    return pending if pending.path.is_file() or pending.state_path.is_file() else None


def upload_options_set(*, session: SessionBase, options: ImportOptions) -> None:
    """Remember the mapping step's choices (study_import's keyword arguments) for the confirm step; a check made
    with other choices is forgotten."""
    data = dict(session.get(SESSION_KEY) or {})
    data["options"] = options
    session[SESSION_KEY] = data
    pending = upload_current(session=session)
    if pending is not None:
        pending.state_path.unlink(missing_ok=True)
        pending.cancel_path.unlink(missing_ok=True)


def upload_discard(*, session: SessionBase) -> None:
    """Forget the session's pending upload and delete its file and its job's state."""
    pending = upload_current(session=session)
    if pending is not None:
        for path in (pending.path, pending.state_path, pending.cancel_path):
            path.unlink(missing_ok=True)
    session.pop(SESSION_KEY, None)


# --- the worker's job: state beside the file --------------------------------------------------------------------


class UploadCancelled(Exception):
    """The admin pressed Cancel: the job stops at its next progress step, writing nothing."""


def upload_state(*, pending: PendingUpload) -> dict[str, Any] | None:
    """The job's state (status, phase, rows, summary, errors), or None before any job was asked for."""
    try:
        state = json.loads(pending.state_path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _state_write(token: str, state: dict[str, Any]) -> None:
    path = upload_dir() / f"{token}{STATE_SUFFIX}"
    temporary = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    temporary.write_text(json.dumps(state), encoding="utf-8")
    os.replace(temporary, path)  # readers see the old state or the new one, never half


def upload_job_queued(*, pending: PendingUpload, dry_run: bool) -> None:
    """Record that a check (dry run) or an import was handed to the worker (the page shows it at once)."""
    pending.cancel_path.unlink(missing_ok=True)
    _state_write(pending.token, {"status": "queued", "dry_run": dry_run, "rows": 0, "queued_at": time.time()})


def upload_cancel(*, pending: PendingUpload) -> bool:
    """Ask the session's running job to stop; False when no job is queued or running."""
    state = upload_state(pending=pending) or {}
    if state.get("status") not in ("queued", "running"):
        return False
    pending.cancel_path.touch()
    return True


def upload_job_run(*, token: str, study: str, fmt: str, name: str, options: ImportOptions | dict[str, Any],
                   dry_run: bool) -> dict[str, Any]:
    """The worker's job: check (dry run) or import the uploaded file `token`, writing progress to its state, looking
    for a cancel at every step. The file is removed once imported, when an import fails or is cancelled; a failed check keeps it until its retention
    time, so the mapping or the declared scale can be corrected and checked again."""
    _sweep()
    matches = [upload_dir() / f"{token}{suffix}" for suffix in SUFFIXES if _TOKEN.match(token)]
    matches = [p for p in matches if p.is_file()]
    state: dict[str, Any] = {"status": "running", "dry_run": dry_run, "rows": 0, "phase": "reading",
                             "started_at": time.time()}
    if not matches:
        state.update(status="failed", errors=["the uploaded file is gone (removed after its retention time or after "
                                              "a failure): upload it again"], n_errors=1)
        _state_write(token, state)
        return state
    path = matches[0]
    cancel = upload_dir() / f"{token}{CANCEL_SUFFIX}"
    _state_write(token, state)
    last = [time.monotonic()]

    def progress(phase: str, rows: int) -> None:
        if cancel.exists():
            raise UploadCancelled
        if time.monotonic() - last[0] >= PROGRESS_SECONDS:
            last[0] = time.monotonic()
            state.update(phase=phase, rows=rows)
            _state_write(token, state)

    try:
        if cancel.exists():  # cancelled while it waited in the queue
            raise UploadCancelled
        summary = study_import(path=path, study=study, fmt=fmt, label=name, source=f"upload: {name}",
                               dry_run=dry_run, on_progress=progress, **options)
    except StudyImportFailed as exc:
        state.update(status="failed", errors=exc.errors[:MAX_ERRORS_KEPT], n_errors=len(exc.errors))
        if not dry_run:  # a failed check keeps the file (until its retention time): the mapping or scale can be
            path.unlink(missing_ok=True)  # corrected and checked again without uploading it again
    except UploadCancelled:
        state.update(status="cancelled")
        path.unlink(missing_ok=True)
    except Exception:
        state.update(status="failed", errors=["the job stopped on an unexpected error (the server's log has it); "
                                              "nothing was written"], n_errors=1)
        path.unlink(missing_ok=True)
        _state_write(token, state)
        raise
    else:
        state.update(status="checked" if dry_run else "imported", summary=summary.__dict__.copy(),
                     phase="done", rows=summary.scores)
        if not dry_run:
            path.unlink(missing_ok=True)
    cancel.unlink(missing_ok=True)
    state["finished_at"] = time.time()
    _state_write(token, state)
    return state


def _sweep() -> None:
    """Delete the pending files and job states older than the retention time."""
    cutoff = time.time() - retention_seconds()
    for path in upload_dir().iterdir():
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
        except OSError:
            continue
