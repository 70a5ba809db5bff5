"""Backups that restore (issue 33, part 3): `manage.py backup` writes the database and every stored snapshot file
with a manifest of SHA-256 hashes and row counts; `manage.py restore` refuses a backup that does not match its
manifest (naming the file) and checks the restored database against it. The drill: back up a small demo, drop it,
restore it, compare every row count and file hash with the figures taken before the backup."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from calibration.models import Study, StudyScore
from calibration.studies.importing import study_import
from calibration.studies.tasks import study_snapshot_start
from config.backup import BackupError, backup_check, table_counts
from evidence.models import SnapshotFile

RATINGS = "item,rater,score\n" + "".join(f"i{i},r{r},{(i * r) % 4}\n" for i in range(1, 9) for r in range(1, 4))


def demo(tmp_path: Path) -> dict[str, str]:
    """A small study with a computed report (its stored files): the snapshot files' hashes, from their bytes."""
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS, encoding="utf-8")
    study_import(path=path, study="Backup drill")
    study_snapshot_start(study=Study.objects.get(name="Backup drill"), requested_by=None, seed=1, n_resamples=0)
    files = {f"{f.snapshot_id}-{f.format}": hashlib.sha256(bytes(f.content)).hexdigest()
             for f in SnapshotFile.objects.all()}
    assert len(files) >= 3  # json, csv, ratings (and more): the report was computed and stored
    return files


def drill(tmp_path: Path) -> None:
    files_before = demo(tmp_path)
    counts_before = table_counts()
    assert counts_before[StudyScore._meta.db_table] == 24
    backup = tmp_path / "backup"
    call_command("backup", str(backup))
    assert backup_check(directory=backup)["tables"] == counts_before

    call_command("flush", "--noinput")  # the database is lost
    assert not Study.objects.exists() and not SnapshotFile.objects.exists()

    call_command("restore", str(backup), "--yes")
    assert table_counts() == counts_before  # 0 row-count differences
    files_after = {f"{f.snapshot_id}-{f.format}": hashlib.sha256(bytes(f.content)).hexdigest()
                   for f in SnapshotFile.objects.all()}
    assert files_after == files_before  # 0 hash mismatches
    assert all(SnapshotFile.objects.get(snapshot_id=int(k.split("-")[0]), format=k.split("-")[1]).sha256 == v
               for k, v in files_after.items())


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_backup_restore_drill_on_postgresql(tmp_path, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    assert connection.vendor == "postgresql"
    drill(tmp_path)
    assert (tmp_path / "backup" / "database.dump").read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format


@pytest.mark.django_db(transaction=True)
def test_backup_restore_drill_on_sqlite(tmp_path, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite pass runs it; the PostgreSQL pass runs the pg_dump drill")
    drill(tmp_path)


@pytest.mark.django_db(transaction=True)
def test_backup_restore_refuses_a_tampered_backup_and_names_the_file(tmp_path, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    demo(tmp_path)
    backup = tmp_path / "backup"
    call_command("backup", str(backup))
    stored = sorted((backup / "files").iterdir())[0]
    stored.write_bytes(stored.read_bytes() + b" ")
    with pytest.raises(CommandError, match=f"files/{stored.name}: changed since the backup"):
        call_command("restore", str(backup), "--yes")
    stored.unlink()
    (backup / "extra.sql").write_text("DROP TABLE x;")
    with pytest.raises(BackupError) as refused:
        backup_check(directory=backup)
    assert f"files/{stored.name}: missing" in refused.value.problems
    assert "extra.sql: not in the manifest" in refused.value.problems
    assert Study.objects.filter(name="Backup drill").exists()  # nothing was restored over the database
    with pytest.raises(CommandError, match="not empty"):
        call_command("backup", str(backup))
