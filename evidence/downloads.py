"""Serving a snapshot's stored files: the authorization stays in Django, the bytes may go through the web server.

A stored file never changes (a new computation is a new version), so it can be written once to disk under
its SHA-256 and handed to the web server in front of gunicorn, which sends it without holding an application
worker (docs/deployment.md, "Report downloads"). `DOWNLOADS_OFFLOAD` chooses how:

- `""` (the default, `make run`, tests): the bytes are read from the database and sent by the application;
- `"x-accel-redirect"` (nginx, compose.yaml): the response carries `X-Accel-Redirect: DOWNLOADS_ACCEL_PREFIX
  + ab/abcdef…` and no body; nginx's `internal` location for that prefix aliases `DOWNLOADS_ROOT`;
- `"x-sendfile"` (Apache mod_xsendfile, lighttpd): `X-Sendfile: <DOWNLOADS_ROOT>/ab/abcdef…`.

The file is written the first time it is downloaded (by the web process, which owns `DOWNLOADS_ROOT`): into a
temporary file of the same directory, checked against the stored hash, then renamed, so the web server never
sees half a file. Callers must have checked access first: only their response can name the file.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse

from audit.services import audit_download

from .models import Snapshot, SnapshotFile

__all__ = ["OFFLOAD_MODES", "StoredFileCorrupt", "offload_mode", "snapshot_file_response",
           "stored_file_path"]

OFFLOAD_MODES = ("", "x-accel-redirect", "x-sendfile")


class StoredFileCorrupt(RuntimeError):
    """A stored file's bytes do not hash to its recorded SHA-256: never served."""


def offload_mode() -> str:
    """The `DOWNLOADS_OFFLOAD` setting, checked (ImproperlyConfigured naming the setting and its values)."""
    mode = (getattr(settings, "DOWNLOADS_OFFLOAD", "") or "").strip().lower()
    if mode not in OFFLOAD_MODES:
        raise ImproperlyConfigured(
            f"DOWNLOADS_OFFLOAD (FAITHBENCH_DOWNLOADS_OFFLOAD) must be empty, 'x-accel-redirect' or 'x-sendfile', "
            f"not {mode[:40]!r}.")
    return mode


def stored_file_path(sha256: str) -> Path:
    """Where a stored file lives under DOWNLOADS_ROOT: named by its hash, in a folder of its first two digits."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"sha256: not a SHA-256 in hex: {sha256[:70]!r}")
    return Path(settings.DOWNLOADS_ROOT) / sha256[:2] / sha256


def _materialize(stored: SnapshotFile) -> Path:
    """The file on disk with exactly the stored bytes (written now, atomically, if it is missing or truncated)."""
    path = stored_file_path(stored.sha256)
    try:
        if path.stat().st_size == stored.size:
            return path
    except FileNotFoundError:
        pass
    content = bytes(stored.content)  # deferred by the caller: read only now, once per file and disk
    if hashlib.sha256(content).hexdigest() != stored.sha256 or len(content) != stored.size:
        raise StoredFileCorrupt(f"snapshot file #{stored.pk} ({stored.format}) does not match its SHA-256")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)  # the web server reads it, possibly as another user
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def snapshot_file_response(*, snapshot: Snapshot, fmt: str, content_type: str,
                           filename: str) -> HttpResponse | None:
    """The download of one stored file of a ready snapshot whose access the caller has checked (None: no such
    file). Same headers in every mode — type, attachment name, the file's hash as ETag, the input hash; the body
    comes from the database, or from disk through the web server (`DOWNLOADS_OFFLOAD`)."""
    mode = offload_mode()
    files = SnapshotFile.objects.filter(snapshot=snapshot, format=fmt)
    stored = (files.defer("content") if mode else files).first()
    if stored is None:
        return None
    if not mode:
        response = HttpResponse(bytes(stored.content), content_type=content_type)
    else:
        path = _materialize(stored)
        response = HttpResponse(b"", content_type=content_type)
        if mode == "x-accel-redirect":
            prefix = settings.DOWNLOADS_ACCEL_PREFIX.rstrip("/")
            response["X-Accel-Redirect"] = f"{prefix}/{stored.sha256[:2]}/{stored.sha256}"
        else:
            response["X-Sendfile"] = str(path)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["ETag"] = f'"{stored.sha256}"'
    response["X-Input-Hash"] = snapshot.input_hash
    audit_download(snapshot=snapshot, fmt=fmt, filename=filename, response=response)  # who, which version, when
    return response
