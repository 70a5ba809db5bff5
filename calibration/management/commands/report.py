"""List, compute and export IRR report snapshots from the command line (cron-friendly).

    manage.py report --list
    manage.py report CYCLE [--seed N] [--resamples N] [--run ID]      compute a new version (progress bar)
    manage.py report CYCLE --version N --format pdf|csv|json|ratings|bundle --out PATH   export a stored one
    manage.py report --study NAME [--version N] [--format …]   the same for an imported rating study

CYCLE is a cycle's id or its exact name; NAME a study's id or exact name. Exporting writes the stored bytes:
the same file every time.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotations.models import CalibrationCycle
from annotations.selectors import cycle_by_ref, cycles_by_id
from calibration.models import Study
from calibration.reports.snapshots import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    report_snapshot_compute,
    report_snapshot_request,
)
from calibration.studies.selectors import studies_by_id, study_by_ref
from calibration.studies.snapshots import DEFAULT_STUDY_SEED, study_snapshot_compute, study_snapshot_request
from evidence.models import Snapshot, SnapshotFile
from evidence.selectors import snapshot_file, snapshot_file_name, snapshot_for, snapshot_latest_ready
from evidence.services import snapshot_pending_error

FORMATS = ["pdf", "csv", "json", "ratings", "bundle"]


class Command(BaseCommand):
    help = "List cycles with their latest report snapshot, compute a new snapshot, or export a stored one."

    def add_base_argument(self, parser: CommandParser, *args: Any, **kwargs: Any) -> None:
        if "--version" in args:  # ours is the report version; Django's own --version is `manage.py version`
            return
        super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cycle", nargs="?", help="Cycle id or exact name.")
        parser.add_argument("--study", help="An imported rating study (id or exact name) instead of a cycle.")
        parser.add_argument("--list", action="store_true", help="List cycles and their latest snapshot.")
        parser.add_argument("--version", type=int, help="Export this stored version (default: compute a new one).")
        parser.add_argument("--format", choices=FORMATS, help="What to export (with --version, or after computing).")
        parser.add_argument("--out", help="Where to write the export (default: the file name in the current folder; "
                                          "'-' for standard output).")
        parser.add_argument("--seed", type=int, help=f"Bootstrap seed (default {DEFAULT_SEED} for a cycle, "
                                                     f"{DEFAULT_STUDY_SEED} for a study).")
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                            help=f"Bootstrap resamples (default {DEFAULT_RESAMPLES}; 0 turns intervals off).")
        parser.add_argument("--run", type=int, help="Judge run id (default: the newest finished on the rubric).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            self._list()
            return
        if options["cycle"] and options["study"]:
            raise CommandError("name a cycle or a study (--study), not both")
        if not options["cycle"] and not options["study"]:
            raise CommandError("name a cycle (id or name) or a study (--study NAME), or use --list")
        if options["study"]:
            study = self._study(options["study"])
            if options["run"] is not None:
                raise CommandError("--run is for cycles: a study's judges are its judge raters")
            subject, found = f"study {study.pk} ({study.name})", (lambda v: snapshot_for(kind=Snapshot.Kind.STUDY_REPORT, subject=study.pk, version=v))
        else:
            cycle = self._cycle(options["cycle"])
            subject, found = f"cycle {cycle.pk} ({cycle.name})", (lambda v: snapshot_for(kind=Snapshot.Kind.CYCLE_REPORT, subject=cycle.pk, version=v))
        if options["version"] is not None:
            snapshot = found(options["version"])
            if snapshot is None:
                raise CommandError(f"{subject} has no report version {options['version']}")
            if not snapshot.is_ready:
                raise CommandError(f"version {snapshot.version} is {snapshot.get_status_display().lower()}"
                                   + (f": {snapshot.error}" if snapshot.error else ""))
            self._export(snapshot, options["format"] or "bundle", options["out"])
            return
        snapshot = self._compute_study(study, options) if options["study"] else self._compute(cycle, options)
        if options["format"]:
            self._export(snapshot, options["format"], options["out"])

    def _cycle(self, ref: str) -> CalibrationCycle:
        cycle = cycle_by_ref(ref=ref)
        if cycle is None:
            raise CommandError(f"no cycle with id or name {ref!r} (see: manage.py report --list)")
        return cycle

    def _study(self, ref: str) -> Study:
        study = study_by_ref(ref=ref)
        if study is None:
            raise CommandError(f"no study with id or name {ref!r} (see: manage.py report --list)")
        return study

    def _list(self) -> None:
        latest = snapshot_latest_ready(kind=Snapshot.Kind.CYCLE_REPORT)
        self.stdout.write(f"{'id':>4}  {'cycle':<32} {'status':<7} {'latest report':<14} input hash")
        for cycle in cycles_by_id():
            snapshot = latest.get(str(cycle.pk))
            described = (f"v{snapshot.version} {snapshot.finished_at:%Y-%m-%d}" if snapshot and snapshot.finished_at
                         else "none")
            self.stdout.write(f"{cycle.pk:>4}  {cycle.name[:32]:<32} {cycle.status:<7} {described:<14} "
                              f"{snapshot.input_hash if snapshot else ''}")
        studies = studies_by_id()
        if not studies:
            return
        latest_study = snapshot_latest_ready(kind=Snapshot.Kind.STUDY_REPORT)
        self.stdout.write(f"\n{'id':>4}  {'study (--study)':<40} {'latest report':<14} input hash")
        for study in studies:
            snapshot = latest_study.get(str(study.pk))
            described = (f"v{snapshot.version} {snapshot.finished_at:%Y-%m-%d}" if snapshot and snapshot.finished_at
                         else "none")
            self.stdout.write(f"{study.pk:>4}  {study.name[:40]:<40} {described:<14} "
                              f"{snapshot.input_hash if snapshot else ''}")

    def _compute(self, cycle: CalibrationCycle, options: dict[str, Any]) -> Snapshot:
        try:
            snapshot = report_snapshot_request(
                cycle=cycle, requested_by=None, run_id=options["run"], n_resamples=options["resamples"],
                seed=DEFAULT_SEED if options["seed"] is None else options["seed"])
        except ValidationError as exc:
            raise CommandError(_errors(exc)) from exc
        return self._run(snapshot, f"cycle {cycle.pk} ({cycle.name})", report_snapshot_compute, options)

    def _compute_study(self, study: Study, options: dict[str, Any]) -> Snapshot:
        try:
            snapshot = study_snapshot_request(
                study=study, requested_by=None, n_resamples=options["resamples"],
                seed=DEFAULT_STUDY_SEED if options["seed"] is None else options["seed"])
        except ValidationError as exc:
            raise CommandError(_errors(exc)) from exc
        return self._run(snapshot, f"study {study.pk} ({study.name})", study_snapshot_compute, options)

    def _run(self, snapshot: Snapshot, subject: str, compute: Callable[..., Snapshot],
             options: dict[str, Any]) -> Snapshot:
        bar = tqdm(total=100, desc=f"{snapshot.subject_name} v{snapshot.version}", unit="%", file=sys.stderr,
                   disable=options["verbosity"] == 0)

        def progress(percent: int, note: str) -> None:
            bar.set_postfix_str(note)
            bar.update(max(0, percent - bar.n))

        snapshot = compute(snapshot_id=snapshot.pk, progress=progress)
        bar.update(100 - bar.n)
        bar.close()
        if snapshot.status != Snapshot.Status.READY:
            raise CommandError(f"version {snapshot.version} failed: {snapshot.error}")
        self.stdout.write(self.style.SUCCESS(
            f"{subject} report v{snapshot.version}: input hash {snapshot.input_hash}, "
            f"seed {snapshot.seed}, {snapshot.n_resamples} resamples"))
        return snapshot

    def _export(self, snapshot: Snapshot, fmt: str, out: str | None) -> None:
        stored: SnapshotFile | None = snapshot_file(snapshot=snapshot, fmt=fmt)
        if stored is None:
            raise CommandError(f"version {snapshot.version} has no {fmt} file")
        content = bytes(stored.content)
        if out == "-":
            sys.stdout.buffer.write(content)
            sys.stdout.flush()
            return
        path = Path(out or snapshot_file_name(snapshot=snapshot, fmt=fmt))
        try:
            path.write_bytes(content)
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror}") from exc
        self.stderr.write(f"wrote {path} ({len(content):,} bytes, sha256 {stored.sha256})")


def _errors(exc: ValidationError) -> str:
    if snapshot_pending_error(exc):  # a version queued for the worker is computed by the worker, once
        return f"{exc.messages[0]} The task worker computes it: `manage.py run_worker` (or `make run`)."
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items())
