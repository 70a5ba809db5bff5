"""Backups that restore (docs/deployment.md, "Backup and the restore drill").

A backup is a directory:

    database.dump        PostgreSQL: `pg_dump --format=custom`;  database.sqlite3: SQLite's online backup API
    files/<snapshot>-<format>.<ext>   every stored snapshot file (the bytes a download serves)
    manifest.json        the SHA-256 of every file above, the row count of every table, the software versions

`backup_write` writes one; `backup_check` compares a directory with its manifest (a changed, missing or extra
file is named); `backup_restore` checks, restores the database (PostgreSQL: `pg_restore --clean --if-exists`;
SQLite: the backup API, copying the saved database into the live one), then checks again: every table's row
count and every snapshot file's SHA-256 as stored in the restored database must equal the manifest's.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import django
from django.apps import apps
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder

from evidence.models import SnapshotFile

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
CHUNK = 1024 * 1024
EXTENSIONS = {"json": "json", "csv": "csv", "pdf": "pdf", "ratings": "csv", "bundle": "zip"}


class BackupError(Exception):
    """A backup could not be written, or a backup directory (or a restored database) does not match its manifest;
    the message names each file or table."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class BackupSummary:
    directory: Path
    engine: str
    tables: int
    rows: int
    files: int
    bytes: int
    problems: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"{self.directory}: {self.engine} database, {self.tables} tables, {self.rows} rows, "
                f"{self.files} snapshot files, {self.bytes} bytes")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _engine(alias: str = "default") -> str:
    vendor = connections[alias].vendor
    if vendor not in ("postgresql", "sqlite"):
        raise BackupError([f"database: {vendor} is not supported (PostgreSQL or SQLite)"])
    return vendor


def table_counts(alias: str = "default") -> dict[str, int]:
    """Every table the models (and the migration history) own, with its number of rows, by table name."""
    counts: dict[str, int] = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed and not model._meta.auto_created:
            continue
        table = model._meta.db_table
        if table not in counts:
            counts[table] = model._base_manager.using(alias).count()
    counts[MigrationRecorder.Migration._meta.db_table] = MigrationRecorder.Migration.objects.using(alias).count()
    return dict(sorted(counts.items()))


def _stored_files(alias: str = "default") -> Iterator[tuple[str, bytes, str]]:
    """(name in the backup, content, SHA-256 recorded with the file) of every stored snapshot file."""
    rows = SnapshotFile.objects.using(alias).order_by("pk").values_list("snapshot_id", "format", "sha256", "pk")
    for snapshot_id, fmt, recorded, pk in rows.iterator(chunk_size=50):
        content = SnapshotFile.objects.using(alias).filter(pk=pk).values_list("content", flat=True).get()
        yield f"files/{snapshot_id}-{fmt}.{EXTENSIONS.get(fmt, 'bin')}", bytes(content), recorded


def _database_url(alias: str) -> tuple[list[str], dict[str, str]]:
    """pg_dump/pg_restore's connection options and environment for the alias (the password through PGPASSWORD,
    never on the command line)."""
    conf = connections[alias].settings_dict
    args = ["--dbname", str(conf["NAME"])]
    if conf.get("HOST"):
        args += ["--host", str(conf["HOST"])]
    if conf.get("PORT"):
        args += ["--port", str(conf["PORT"])]
    if conf.get("USER"):
        args += ["--username", str(conf["USER"])]
    env = {**os.environ}
    if conf.get("PASSWORD"):
        env["PGPASSWORD"] = str(conf["PASSWORD"])
    return args, env


def _run(command: list[str], env: dict[str, str]) -> None:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    except FileNotFoundError:
        raise BackupError([f"{command[0]}: not installed (PostgreSQL's client tools)"]) from None
    if done.returncode:
        raise BackupError([f"{command[0]} failed ({done.returncode}): {done.stderr.strip()[:2000]}"])


def backup_write(*, directory: str | Path, alias: str = "default") -> BackupSummary:
    """Write a backup of the database and the stored snapshot files into `directory` (created; must be empty)."""
    target = Path(directory)
    if target.exists() and any(target.iterdir()):
        raise BackupError([f"{target}: not empty (a backup goes into a new directory)"])
    engine = _engine(alias)
    (target / "files").mkdir(parents=True, exist_ok=True)
    os.chmod(target, 0o700)  # the dump holds personal data
    counts = table_counts(alias)  # before the dump: a quiet database (see the docs) gives the same figures
    if engine == "postgresql":
        dump = target / "database.dump"
        args, env = _database_url(alias)
        _run(["pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--file", str(dump), *args], env)
    else:
        dump = target / "database.sqlite3"
        connections[alias].ensure_connection()
        copy = sqlite3.connect(dump)
        try:
            connections[alias].connection.backup(copy)  # a consistent copy while the server keeps writing
        finally:
            copy.close()
    hashes = {dump.name: _sha256(dump)}
    stored: dict[str, str] = {}
    mismatched = []
    for name, content, recorded in _stored_files(alias):
        path = target / name
        path.write_bytes(content)
        hashes[name] = hashlib.sha256(content).hexdigest()
        stored[name] = recorded
        if hashes[name] != recorded:
            mismatched.append(f"{name}: its content's SHA-256 is not the one recorded with it in the database")
    manifest: dict[str, Any] = {
        "format": FORMAT_VERSION, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": engine, "database": dump.name, "django": django.get_version(), "python": platform.python_version(),
        "migrations": counts.get(MigrationRecorder.Migration._meta.db_table, 0),
        "tables": counts, "files": hashes, "snapshot_files": stored,
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    return BackupSummary(directory=target, engine=engine, tables=len(counts), rows=sum(counts.values()),
                         files=len(stored), bytes=size, problems=mismatched)


def backup_manifest(*, directory: str | Path) -> dict[str, Any]:
    """The manifest of a backup directory (a BackupError naming it when it is missing or unreadable)."""
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupError([f"{path}: missing (not a backup directory)"]) from None
    except (OSError, ValueError) as exc:
        raise BackupError([f"{path}: unreadable ({exc})"]) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION \
            or not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("tables"), dict):
        raise BackupError([f"{path}: not a manifest of format {FORMAT_VERSION}"])
    return manifest


def backup_check(*, directory: str | Path) -> dict[str, Any]:
    """Compare every file of a backup with the manifest's SHA-256; a BackupError names each changed, missing or
    unlisted file. Returns the manifest."""
    root = Path(directory)
    manifest = backup_manifest(directory=root)
    problems = []
    for name, expected in sorted(manifest["files"].items()):
        path = root / name
        if ".." in Path(name).parts or not path.is_file():
            problems.append(f"{name}: missing")
        elif _sha256(path) != expected:
            problems.append(f"{name}: changed since the backup (SHA-256 differs from the manifest)")
    listed = set(manifest["files"]) | {MANIFEST}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_file() and name not in listed:
            problems.append(f"{name}: not in the manifest")
    if problems:
        raise BackupError(problems)
    return manifest


def backup_verify_database(*, manifest: dict[str, Any], alias: str = "default") -> list[str]:
    """The differences between the database and a manifest: row counts per table, and each snapshot file's content
    hash as stored now against the manifest's. Empty when they agree."""
    problems = []
    counts = table_counts(alias)
    for table, expected in sorted(manifest["tables"].items()):
        found = counts.get(table)
        if found != expected:
            problems.append(f"table {table}: {found if found is not None else 'missing'} rows, the backup has "
                            f"{expected}")
    for table in sorted(set(counts) - set(manifest["tables"])):
        if counts[table]:
            problems.append(f"table {table}: {counts[table]} rows, not in the backup")
    restored = {name: hashlib.sha256(content).hexdigest() for name, content, _ in _stored_files(alias)}
    for name in sorted(set(manifest.get("snapshot_files", {})) | set(restored)):
        expected_hash = manifest["files"].get(name)
        if restored.get(name) != expected_hash:
            problems.append(f"{name}: the restored file's SHA-256 differs from the manifest's"
                            if name in restored and expected_hash else f"{name}: missing after the restore"
                            if name not in restored else f"{name}: in the database but not in the backup")
    return problems


def backup_restore(*, directory: str | Path, alias: str = "default") -> BackupSummary:
    """Check a backup against its manifest, restore it into the configured database (replacing what is there),
    then check the restored rows and files against the manifest. Refuses a backup that does not match."""
    root = Path(directory)
    manifest = backup_check(directory=root)
    engine = _engine(alias)
    if manifest.get("engine") != engine:
        raise BackupError([f"{MANIFEST}: a {manifest.get('engine')} backup cannot be restored into {engine}"])
    dump = root / str(manifest["database"])
    if engine == "postgresql":
        connections[alias].close()
        args, env = _database_url(alias)
        _run(["pg_restore", "--clean", "--if-exists", "--no-owner", "--no-privileges", "--single-transaction",
              "--exit-on-error", *args, str(dump)], env)
        connections[alias].close()
    else:
        connections[alias].ensure_connection()
        saved = sqlite3.connect(dump)
        try:
            saved.backup(connections[alias].connection)  # page by page into the live database, WAL included
        finally:
            saved.close()
    problems = backup_verify_database(manifest=manifest, alias=alias)
    if problems:
        raise BackupError(["the restored database does not match the backup", *problems])
    counts = manifest["tables"]
    return BackupSummary(directory=root, engine=engine, tables=len(counts), rows=sum(counts.values()),
                         files=len(manifest.get("snapshot_files", {})),
                         bytes=sum(p.stat().st_size for p in root.rglob("*") if p.is_file()))


def backup_directory_default(base: str | Path) -> Path:
    """A new directory under `base` named by the time: faithbench-YYYYmmdd-HHMMSS."""
    return Path(base) / datetime.now(UTC).strftime("faithbench-%Y%m%d-%H%M%S")


__all__ = ["BackupError", "BackupSummary", "backup_check", "backup_directory_default", "backup_manifest",
           "backup_restore", "backup_verify_database", "backup_write", "table_counts"]
