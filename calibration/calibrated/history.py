"""Scores over time (methodology §8.7, §17.10): each model's score across leaderboard snapshots, with intervals,
anchor-equated where rotations differ, and the changes that exceed their interval.

A *snapshot* is what the product already fixes and dates: a finished judge run's leaderboard (fixed once the run
finished, dated by its `finished_at`) and, beside it, that run's newest ready calibrated leaderboard version (a
`evidence.Snapshot`, dated by its own `finished_at`). No new snapshot record: both are read as they are stored.
The equating arithmetic is `stats/score_history.py`."""
from __future__ import annotations

import io
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from evaluations.judge.selectors import judge_run_label, leaderboard_cached, leaderboard_columns
from evaluations.models import JudgeRun, TestCase
from evaluations.spreadsheet import csv_writer
from evidence.models import Snapshot as StoredSnapshot
from stats.score_history import Change, chain_equated, paired_change

from .schema import CalibratedReport, Estimate

HISTORY_LIMIT = 24  # snapshots on one page: the newest finished runs of the rubric


@dataclass(frozen=True)
class Snapshot:
    run_id: int
    label: str
    finished_at: datetime | None
    rotation: str  # the held-out rotations of the cases it scored ("—": none)
    calibrated_version: int | None


@dataclass
class Point:
    snapshot: Snapshot
    score: float | None
    lower: float | None
    upper: float | None
    equated: float | None = None
    equated_lower: float | None = None
    equated_upper: float | None = None
    change: Change | None = None  # from this model's previous snapshot, on the cases both scored
    calibrated: Estimate | None = None  # the calibrated version's score of the model, with its interval

    @property
    def changed(self) -> bool:
        return self.change is not None and self.change.exceeds_interval


@dataclass
class ModelHistory:
    model: str
    points: list[Point] = field(default_factory=list)


@dataclass
class History:
    rubric_id: int | None
    snapshots: list[Snapshot]
    models: list[ModelHistory]
    rotations_differ: bool
    rubric_version: str = ""
    trials: list[Snapshot] = field(default_factory=list)  # trial runs (issue 32): listed, never plotted


def _case_composites(run: JudgeRun) -> dict[str, tuple[dict[int, float], dict[int, float]]]:
    """Per model: (case → mean decisive composite of its scored responses, case → difficulty weight)."""
    cols = leaderboard_columns(run=run)
    usable = cols.usable
    sums: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    weights: dict[str, dict[int, float]] = defaultdict(dict)
    for model, case, value, weight in zip(cols.model[usable], cols.case_id[usable], cols.composite[usable],
                                          cols.difficulty_weight[usable], strict=True):
        sums[model][int(case)].append(float(value))
        weights[model][int(case)] = float(weight)
    return {m: ({c: float(np.mean(v)) for c, v in cases.items()}, weights[m]) for m, cases in sums.items()}


def score_history(*, rubric_id: int | None = None, limit: int = HISTORY_LIMIT) -> History:
    """The history of every model's score over the newest `limit` finished runs (of one rubric version: scores on
    different rubrics are not one scale), oldest first."""
    runs_qs = JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED, scored_items__gt=0).select_related("rubric")
    if rubric_id is None:
        newest = runs_qs.order_by("-finished_at", "-id").first()
        if newest is None:
            return History(None, [], [], False)
        rubric_id = newest.rubric_id
    runs = list(reversed(runs_qs.filter(rubric_id=rubric_id).order_by("-finished_at", "-id")[:limit]))
    boards = {run.pk: leaderboard_cached(run=run) for run in runs}
    trial_runs = [run for run in runs if boards[run.pk].trial]  # too few cases per model: listed, not plotted
    runs = [run for run in runs if not boards[run.pk].trial]
    calibrated: dict[int, StoredSnapshot] = {}
    snap: StoredSnapshot | None
    for snap in (StoredSnapshot.objects.of(StoredSnapshot.Kind.CALIBRATED).ready().filter(judge_run__in=runs)
                 .order_by("judge_run_id", "-version")):
        calibrated.setdefault(snap.judge_run_id, snap)  # type: ignore[arg-type]
    composites = {run.pk: _case_composites(run) for run in runs}
    case_ids = {c for per_model in composites.values() for cases, _ in per_model.values() for c in cases}
    rotation_of = dict(TestCase.objects.filter(pk__in=case_ids).values_list("pk", "rotation"))
    snapshots = []
    for run in runs:
        cases = {c for cases, _ in composites[run.pk].values() for c in cases}
        rotations = sorted({rotation_of.get(c) or "" for c in cases} - {""})
        snap = calibrated.get(run.pk)
        snapshots.append(Snapshot(run.pk, judge_run_label(run), run.finished_at, ", ".join(rotations) or "—",
                                  snap.version if snap else None))
    rotations_differ = len({s.rotation for s in snapshots}) > 1

    models: dict[str, ModelHistory] = {}
    for run, snapshot in zip(runs, snapshots, strict=True):
        board = boards[run.pk]
        payload = calibrated[run.pk].payload if run.pk in calibrated else None
        stored = CalibratedReport.from_json(payload) if payload else None  # the stored JSON read back into the tree
        by_model = {e.model: e.calibrated for e in stored.models} if stored is not None else {}
        for row in board.models:
            if row.overall.score is None or not row.ranked:  # a model on too few cases is not plotted
                continue
            history = models.setdefault(row.model, ModelHistory(row.model))
            cal = by_model.get(row.model)
            history.points.append(Point(snapshot, row.overall.score, row.overall.ci_low, row.overall.ci_high,
                                        calibrated=cal if cal and cal.estimate is not None else None))
    for history in models.values():
        previous: Point | None = None
        for point in history.points:
            if previous is not None:
                a_cases, weights = composites[previous.snapshot.run_id][history.model]
                b_cases, _ = composites[point.snapshot.run_id][history.model]
                shared = sorted(set(a_cases) & set(b_cases))
                point.change = paired_change([a_cases[c] for c in shared], [b_cases[c] for c in shared],
                                             [weights[c] for c in shared])
            previous = point
        first = history.points[0]
        half = None if first.lower is None or first.upper is None else (first.upper - first.lower) / 2
        chained = chain_equated(first.score or 0.0, half, [p.change for p in history.points[1:]
                                                            if p.change is not None])
        for point, (equated, eq_half) in zip(history.points, chained, strict=True):
            point.equated = equated
            if equated is not None and eq_half is not None:
                point.equated_lower, point.equated_upper = equated - eq_half, equated + eq_half
    trials = [Snapshot(run.pk, judge_run_label(run), run.finished_at, "—", None) for run in trial_runs]
    return History(rubric_id, snapshots, sorted(models.values(), key=lambda h: h.model), rotations_differ,
                   (runs or trial_runs)[0].rubric.version if runs or trial_runs else "", trials)


HISTORY_FIELDS = ["model", "judge_run", "finished_at", "rotation", "score", "lower", "upper", "equated",
                  "equated_lower", "equated_upper", "change", "change_lower", "change_upper", "shared_cases",
                  "change_exceeds_interval", "calibrated_version", "calibrated", "calibrated_lower",
                  "calibrated_upper"]


def _num(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.6f}"


def score_history_csv(history: History) -> bytes:
    """The history as one CSV row per model × snapshot."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(HISTORY_FIELDS)
    for model in history.models:
        for p in model.points:
            change = p.change
            cal = p.calibrated
            writer.writerow([
                model.model, p.snapshot.run_id,
                p.snapshot.finished_at.isoformat() if p.snapshot.finished_at else "", p.snapshot.rotation,
                _num(p.score), _num(p.lower), _num(p.upper), _num(p.equated), _num(p.equated_lower),
                _num(p.equated_upper), _num(change.estimate if change else None),
                _num(change.lower if change else None), _num(change.upper if change else None),
                change.n if change else "", "yes" if p.changed else "no",
                p.snapshot.calibrated_version or "", _num(cal.estimate if cal else None),
                _num(cal.lower if cal else None), _num(cal.upper if cal else None),
            ])
    return out.getvalue().encode("utf-8")
