"""Keep an uploaded ratings file on the server between the upload page's steps (upload → mapping → confirm).

The file is written once to a private directory under a random name; the session holds that name and the
choices made so far, so a step can only reach the file its own session uploaded (no path ever comes from the
request). A new upload replaces the session's previous one; files left behind are deleted after a day.
"""
from __future__ import annotations

import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.core.files.uploadedfile import UploadedFile

from .forms import ImportOptions

SESSION_KEY = "study_upload"
MAX_AGE_SECONDS = 24 * 3600
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


def upload_store(*, session: SessionBase, upload: UploadedFile, study: str, fmt: str) -> PendingUpload:
    """Write the upload to the pending directory and remember it in the session (replacing an earlier one)."""
    upload_discard(session=session)
    _sweep()
    suffix = Path(upload.name or "").suffix.lower()
    pending = PendingUpload(token=secrets.token_hex(16), name=Path(upload.name or "upload").name[:200],
                            suffix=suffix if suffix in SUFFIXES else ".csv", study=study, fmt=fmt,
                            size=upload.size or 0)
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
    return pending if pending.path.is_file() else None


def upload_options_set(*, session: SessionBase, options: ImportOptions) -> None:
    """Remember the mapping step's choices (study_import's keyword arguments) for the confirm step."""
    data = dict(session.get(SESSION_KEY) or {})
    data["options"] = options
    session[SESSION_KEY] = data


def upload_discard(*, session: SessionBase) -> None:
    """Forget the session's pending upload and delete its file."""
    pending = upload_current(session=session)
    if pending is not None:
        pending.path.unlink(missing_ok=True)
    session.pop(SESSION_KEY, None)


def _sweep() -> None:
    cutoff = time.time() - MAX_AGE_SECONDS
    for path in upload_dir().iterdir():
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
        except OSError:
            continue
