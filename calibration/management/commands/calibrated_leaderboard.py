"""Compute or export a judge run's expert-calibrated leaderboard from the command line.

    manage.py calibrated_leaderboard RUN [--cycle C] [--target 0.1] [--margin 0.05] [--seed N] [--resamples N]   compute a new version
    manage.py calibrated_leaderboard RUN --version N --format json|csv|pdf|ratings|bundle [--out PATH]   export one

RUN is a judge run id; C a cycle's id or exact name (default: the newest standard cycle on the run's rubric).
Exporting writes the stored bytes: the same file every time.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.models import CalibrationCycle
from annotations.selectors import cycle_by_ref
from calibration.calibrated.build import DEFAULT_MARGIN, DEFAULT_TARGET_HALF_WIDTH
from calibration.calibrated.schema import CalibratedReport
from calibration.calibrated.selectors import calibrated_label_cycles, calibrated_snapshot_for
from calibration.calibrated.snapshots import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    calibrated_snapshot_compute,
    calibrated_snapshot_request,
)
from evaluations.judge.selectors import judge_run_get
from evaluations.models import JudgeRun
from evidence.models import Snapshot
from evidence.selectors import snapshot_file, snapshot_file_name

FORMATS = ["json", "csv", "pdf", "ratings", "bundle"]


class Command(BaseCommand):
    help = "Compute a new version of a judge run's expert-calibrated leaderboard, or export a stored one."

    def add_base_argument(self, parser: CommandParser, *args: Any, **kwargs: Any) -> None:
        if "--version" in args:  # ours is the leaderboard version; Django's own is `manage.py version`
            return
        super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", type=int, help="Judge run id.")
        parser.add_argument("--cycle", help="Calibration cycle (id or exact name) whose expert scores correct the run.")
        parser.add_argument("--target", type=float, default=DEFAULT_TARGET_HALF_WIDTH,
                            help="Target half-width of the evidence meter (composite points, 0–1).")
        parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                            help="Equivalence margin of the verdicts (composite points, above 0 and below 1).")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                            help="Bootstrap resamples of the judge-only intervals.")
        parser.add_argument("--version", type=int, help="Export this stored version instead of computing one.")
        parser.add_argument("--format", choices=FORMATS, default="json", help="What to export.")
        parser.add_argument("--out", help="Where to write the export ('-' for standard output).")

    def handle(self, *args: Any, **options: Any) -> None:
        run = judge_run_get(pk=options["run"], related=())
        if run is None:
            raise CommandError(f"run: judge run {options['run']} does not exist")
        if options["version"] is not None:
            snapshot = calibrated_snapshot_for(run=run, version=options["version"])
            if snapshot is None:
                raise CommandError(f"--version: judge run {run.pk} has no calibrated leaderboard version "
                                   f"{options['version']}")
            self._export(snapshot, options["format"], options["out"])
            return
        cycle = self._cycle(run, options["cycle"])
        try:
            snapshot = calibrated_snapshot_request(run=run, cycle=cycle, requested_by=None, seed=options["seed"],
                                                   n_resamples=options["resamples"],
                                                   target_half_width=options["target"], margin=options["margin"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        snapshot = calibrated_snapshot_compute(
            snapshot_id=snapshot.pk, progress=lambda percent, note: self.stderr.write(f"{percent:3d} % {note}"))
        if snapshot.status != Snapshot.Status.READY:
            raise CommandError(f"version {snapshot.version} failed: {snapshot.error}")
        report = CalibratedReport.from_json(snapshot.payload or {})
        self.stdout.write(f"calibrated leaderboard of judge run #{run.pk}, version {snapshot.version}, input hash "
                          f"{snapshot.input_hash}: {report.counts.used} expert labels on "
                          f"{report.counts.judged} judged responses")
        for entry in report.models:
            cal, judge = entry.calibrated, entry.judge_only
            interval = "" if cal.lower is None or cal.upper is None else f" ({cal.lower:.3f}–{cal.upper:.3f})"
            estimate = "—" if cal.estimate is None else f"{cal.estimate:.3f}"
            judged = "—" if judge.estimate is None else f"{judge.estimate:.3f}"
            self.stdout.write(f"  {entry.model:<40} judge {judged}  calibrated {estimate}{interval}  "
                              f"n={cal.n}")
        for line in report.statements + report.warnings:
            self.stdout.write(f"  {line}")

    def _cycle(self, run: JudgeRun, raw: str | None) -> CalibrationCycle:
        cycles = calibrated_label_cycles(run=run)
        if raw is None:
            cycle = cycles.first()
            if cycle is None:
                raise CommandError(f"--cycle: no standard calibration cycle on judge run {run.pk}'s rubric")
            return cycle
        cycle = cycle_by_ref(ref=raw)
        if cycle is None:
            raise CommandError(f"--cycle: no calibration cycle with id or name {raw!r}")
        return cycle

    def _export(self, snapshot: Snapshot, fmt: str, out: str | None) -> None:
        if not snapshot.is_ready:
            raise CommandError(f"--version: version {snapshot.version} is {snapshot.get_status_display().lower()}")
        stored = snapshot_file(snapshot=snapshot, fmt=fmt)
        if stored is None:
            raise CommandError(f"--format: version {snapshot.version} has no {fmt} file")
        data = bytes(stored.content)
        if out == "-":
            sys.stdout.buffer.write(data)
            return
        path = Path(out or snapshot_file_name(snapshot=snapshot, fmt=fmt))
        path.write_bytes(data)
        self.stdout.write(f"wrote {path} ({len(data):,} bytes, sha256 {stored.sha256})")
