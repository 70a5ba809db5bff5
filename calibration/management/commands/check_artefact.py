"""``manage.py check_artefact <snapshot id>… [--all] [--bundle edited.zip]``: run the artefact checker on stored
versions (or on a bundle a reader was given, read in place of the stored files) and print every problem. A kind
recorded as one JSON payload (case-review reports, IRT fits, bias checks) is checked on its payload.

Exit status 0 when every artefact is clean; 1 when any is not, each problem naming the file and the figure."""
from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evidence.kit.checker import bundle_members
from evidence.kit.files import FILE_NAMES
from evidence.models import SnapshotFile
from evidence.registry import KINDS
from evidence.selectors import snapshot_by_id, snapshot_ids_computed, snapshot_stored_files
from evidence.services import snapshot_checks


def bundle_files(content: bytes) -> dict[str, bytes]:
    """A citable zip read as stored files (format → bytes): each member under its format, the zip as the bundle."""
    members = bundle_members(content)
    files = {str(fmt): members[name] for fmt, name in FILE_NAMES.items() if name in members}
    files[SnapshotFile.Format.BUNDLE] = content
    return files


class Command(BaseCommand):
    help = "Check stored artefacts: every figure agrees across page files, intervals hold their estimates, methods " \
           "are stated as used, no internal keys. Exits 1 naming each problem."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("snapshots", nargs="*", type=int, help="snapshot ids (see the admin's snapshot list)")
        parser.add_argument("--all", action="store_true", help="every computed version")
        parser.add_argument("--bundle", type=Path, help="check this zip (e.g. an edited copy) as the version's files")

    def handle(self, *args: Any, **options: Any) -> None:
        ids: list[int] = snapshot_ids_computed() if options["all"] else options["snapshots"]
        if not ids:
            raise CommandError("name a snapshot id, or --all")
        if options["bundle"] and len(ids) != 1:
            raise CommandError("--bundle: name the one snapshot the bundle is a version of")
        failed = 0
        for pk in ids:
            snapshot = snapshot_by_id(pk=pk)
            if snapshot is None:
                raise CommandError(f"snapshot {pk}: no such snapshot")
            if options["bundle"]:
                try:
                    files = bundle_files(options["bundle"].read_bytes())
                except (OSError, ValueError, zipfile.BadZipFile) as exc:
                    raise CommandError(f"--bundle: {exc}") from exc
            else:
                files = snapshot_stored_files(snapshot=snapshot)
            spec = KINDS.get(snapshot.kind)
            recorded = spec is not None and spec.compute is None and spec.check is not None  # one JSON payload
            problems = snapshot_checks(snapshot=snapshot, files=files) if files or recorded else []
            if problems:
                failed += 1
                self.stdout.write(f"snapshot {pk} ({snapshot}): {len(problems)} problem(s)")
                for problem in problems:
                    self.stdout.write(f"  {problem}")
            else:
                self.stdout.write(f"snapshot {pk} ({snapshot}): clean" if files or recorded else
                                  f"snapshot {pk} ({snapshot}): no stored files to check")
        if failed:
            raise SystemExit(1)
