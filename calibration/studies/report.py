"""A study's report, built from its rows alone: human-vs-human reliability per dimension, each judge against the
humans, the same per rater group, and the long CSV of its numbers.

The input is the study's `ratings.csv` — the long import format (`study,item,dimension,rater,rater_kind,score,
group`), so a snapshot's input file re-imports as the same study — plus each dimension's level and scale. The
report is a function of those two and the seed: `study_report_build(study_ratings_parse(csv), dimensions=…)`
recomputes a stored snapshot exactly.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from evaluations.judge.guardrails import evidence_enough, min_cases, thin_words
from evaluations.spreadsheet import csv_cell_unprotect, csv_writer
from evidence.kit.meta import SnapshotMeta
from evidence.kit.trees import JsonObject, optional, tree_from_json, tree_to_json
from stats.alpha import check_level
from stats.bootstrap import named_seed_sequence
from stats.reliability import reliability_summary
from stats.shapes import ReliabilitySummary

RATINGS_FIELDS = ["study", "item", "dimension", "rater", "rater_kind", "score", "group"]
MAX_CONFUSION_POINTS = 10  # a judge's confusion matrix is shown for scales of at most this many points


@dataclass(frozen=True)
class StudyRow:
    item: str
    dimension: str
    rater: str
    kind: str  # human | judge
    value: float
    group: str = ""


@dataclass(frozen=True)
class DimensionInfo:
    key: str
    level: str = "ordinal"
    scale_min: float | None = None
    scale_max: float | None = None


# --- the report's tree ---------------------------------------------------------------------------------

# The humans' block is stats.reliability.reliability_summary's JSON object (stats.shapes.ReliabilitySummary), stored
# as stats gives it (some keys depend on the number of raters): read through `summary_interval` and by key.


@dataclass
class Confusion:
    """A judge's scores against the lower human median, counted per scale point (rows: judge)."""

    labels: list[float]
    rows: str
    columns: str
    matrix: list[list[int]]


@dataclass
class StudyJudge:
    """One judge against the human mean (ρ, τ-b, mean signed difference) and the lower human median (linear κ,
    confusion matrix), and α of the humans with and without the judge."""

    rater: str
    n_items: int
    spearman_rho: float | None = None
    kendall_tau_b: float | None = None
    mean_signed_difference: float | None = None
    cohen_kappa_linear: float | None = None
    confusion: Confusion | None = None
    alpha_with_judge: float | None = None
    alpha_without_judge: float | None = None


@dataclass
class StudyGroup:
    """The same numbers for one rater group's humans, over the items they rated."""

    n_items: int
    n_humans: int
    humans: ReliabilitySummary | None
    judges: list[StudyJudge]


@dataclass
class StudyDimension:
    """One dimension: its level and scale, the humans' reliability, each judge, and each rater group."""

    level: str
    scale: list[float | None]
    n_items: int
    n_humans: int
    humans: ReliabilitySummary | None
    judges: list[StudyJudge]
    groups: dict[str, StudyGroup] = field(default_factory=dict)


@dataclass
class StudyDimensionMeta:
    key: str
    level: str
    scale_min: float | None
    scale_max: float | None


@dataclass(kw_only=True)
class StudyMeta:
    """What the study report was computed from (the caller's part, optional) and with (seed, resamples, levels);
    keys in that order."""

    study: str | None = optional()
    study_id: int | None = optional()
    source: str | None = optional()
    software: dict[str, str] | None = optional()
    dimensions: list[StudyDimensionMeta] | None = optional()
    judge_reference: str | None = optional()
    snapshot: SnapshotMeta | None = optional()
    seed: int
    n_resamples: int
    levels: dict[str, str]


@dataclass(frozen=True)
class StudyProvenance:
    """The caller's part of `StudyMeta`: which study, its dimensions, software and snapshot."""

    study: str | None = None
    study_id: int | None = None
    source: str | None = None
    software: dict[str, str] | None = None
    dimensions: list[StudyDimensionMeta] | None = None
    judge_reference: str | None = None
    snapshot: SnapshotMeta | None = None


@dataclass
class StudyReport:
    """A study's report: its metadata and, per dimension key, the dimension's numbers."""

    meta: StudyMeta
    dimensions: dict[str, StudyDimension]

    def to_json(self) -> JsonObject:
        """The JSON-ready dict a snapshot stores (maps in their order; NaN as null, numpy numbers as Python's)."""
        payload: JsonObject = _json_safe(tree_to_json(self, sort_maps=False))
        return payload

    @classmethod
    def from_json(cls, payload: JsonObject) -> StudyReport:
        """The typed report of a stored study report; raises ReportShapeError naming a bad key."""
        return tree_from_json(cls, payload, "report")


def _natural(value: str) -> tuple[int, int, str]:
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def study_ratings_csv(*, study: str, rows: Sequence[StudyRow]) -> bytes:
    """The exact input rows in a fixed order (dimension, item, rater), in the long import format."""
    ordered = sorted(rows, key=lambda r: (r.dimension, _natural(r.item), r.kind, r.rater))
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(RATINGS_FIELDS)
    writer.writerows((study, r.item, r.dimension, r.rater, r.kind, _number(r.value), r.group)
                     for r in ordered)
    return buffer.getvalue().encode("utf-8")


def study_ratings_parse(data: bytes) -> list[StudyRow]:
    """Read a study's ratings.csv back (to recompute its report from a bundle)."""
    rows = []
    for line, raw in enumerate(csv.DictReader(io.StringIO(data.decode("utf-8"))), start=2):
        record = {key: csv_cell_unprotect(value or "") for key, value in raw.items()}
        try:
            value = float(record["score"])
        except ValueError as exc:
            raise ValueError(f"ratings.csv:{line}: score: not a number: {record['score']!r}") from exc
        rows.append(StudyRow(record["item"], record["dimension"], record["rater"], record["rater_kind"], value,
                             record.get("group", "")))
    return rows


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def _scale_labels(dimension: DimensionInfo, values: np.ndarray) -> list[float] | None:
    """The points of a whole-number scale of at most 10 points (from the dimension, else the data), or None."""
    low = dimension.scale_min if dimension.scale_min is not None else (float(np.nanmin(values)) if values.size else None)
    high = dimension.scale_max if dimension.scale_max is not None else (float(np.nanmax(values)) if values.size else None)
    if low is None or high is None or not (float(low).is_integer() and float(high).is_integer()):
        return None
    if values.size and not np.all(np.mod(values, 1) == 0):
        return None
    low, high = min(low, float(np.nanmin(values))) if values.size else low, \
        max(high, float(np.nanmax(values))) if values.size else high
    if high - low + 1 > MAX_CONFUSION_POINTS:
        return None
    return [float(v) for v in np.arange(low, high + 1)]


def _confusion(judge: np.ndarray, reference: np.ndarray, labels: list[float]) -> Confusion:
    index = {v: i for i, v in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for j, r in zip(judge, reference, strict=True):
        matrix[index[float(j)]][index[float(r)]] += 1
    return Confusion(labels=[_plain(v) for v in labels], rows="judge", columns="human median (lower middle)",
                     matrix=matrix)


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _judge_row(name: str, values: np.ndarray, humans: np.ndarray, dimension: DimensionInfo, seed: int,
               alpha_without: float | None) -> StudyJudge:
    """One judge against the human mean (ρ, τ-b, mean signed difference) and the lower human median (κ, confusion
    matrix), and α of the humans with the judge added."""
    level = check_level(dimension.level)
    any_human = ~np.isnan(humans).all(axis=0)
    rated = ~np.isnan(values) & any_human
    judge_v = values[rated]
    mean_v = np.nanmean(humans[:, rated], axis=0) if rated.any() else np.array([])
    row = StudyJudge(rater=name, n_items=int(rated.sum()))
    if rated.sum() >= 2:
        if np.ptp(judge_v) > 0 and np.ptp(mean_v) > 0:
            row.spearman_rho = _finite(scipy_stats.spearmanr(judge_v, mean_v).statistic)
            row.kendall_tau_b = _finite(scipy_stats.kendalltau(judge_v, mean_v).statistic)
        row.mean_signed_difference = _finite(np.mean(judge_v - mean_v))
        sorted_humans = np.sort(humans[:, rated], axis=0)  # NaN last
        counts = (~np.isnan(humans[:, rated])).sum(axis=0)
        median = sorted_humans[(counts - 1) // 2, np.arange(counts.size)]  # the lower middle score, as a cycle's
        pair = reliability_summary(np.vstack([judge_v, median]), level=level, n_resamples=0, seed=seed)
        kappas = pair.get("cohen_kappa")
        row.cohen_kappa_linear = _finite(kappas.get("linear")) if isinstance(kappas, dict) else None
        labels = _scale_labels(dimension, np.concatenate([judge_v, median]))
        if labels is not None:
            row.confusion = _confusion(judge_v, median, labels)
    with_judge = reliability_summary(np.vstack([humans, values]), level=level, n_resamples=0, seed=seed)
    row.alpha_with_judge = _finite(with_judge.get("krippendorff_alpha"))
    row.alpha_without_judge = alpha_without
    return row


def _block(humans: dict[str, np.ndarray], judges: dict[str, np.ndarray], dimension: DimensionInfo, *,
           n_resamples: int, seed: int, stream: str) -> tuple[int, ReliabilitySummary | None, list[StudyJudge]]:
    """The humans' reliability summary and every judge against those humans, for one set of items."""
    names = sorted(humans)
    matrix = np.vstack([humans[n] for n in names]) if names else np.empty((0, 0))
    summary = None
    if len(names) >= 2 and matrix.shape[1]:
        # Issue 32: no interval from fewer items (rated by two or more humans) than the thin-evidence minimum.
        pairable = int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())
        thin = n_resamples > 0 and not evidence_enough(pairable, minimum=min_cases())
        summary = reliability_summary(matrix, level=check_level(dimension.level), rater_labels=names,
                                      n_resamples=0 if thin else n_resamples,
                                      seed=np.random.default_rng(named_seed_sequence(seed, stream)))
        if thin:
            summary["warnings"] = [*summary.get("warnings", []),
                                   f"No intervals: {thin_words(pairable, minimum=min_cases())}."]
    alpha_without = _finite(summary.get("krippendorff_alpha")) if summary else None
    judge_rows = [_judge_row(name, judges[name], matrix, dimension, seed, alpha_without)
                  for name in sorted(judges) if names and not np.isnan(judges[name]).all()]
    return len(names), None if summary is None else _json_safe(summary), judge_rows


def study_report_build(
    rows: Sequence[StudyRow], *, dimensions: Sequence[DimensionInfo], n_resamples: int = 1000, seed: int = 0,
    meta: StudyProvenance | None = None, progress: Callable[[int, int], None] | None = None,
) -> StudyReport:
    """Per dimension: the humans' reliability (α at the dimension's level with its interval, ICC, agreement, κ,
    AC1/AC2 …), each judge against them, and the same per rater group when raters have groups."""
    by_dimension: dict[str, list[StudyRow]] = {}
    for row in rows:
        by_dimension.setdefault(row.dimension, []).append(row)
    about = meta or StudyProvenance()
    out = StudyReport(
        meta=StudyMeta(seed=seed, n_resamples=n_resamples, levels={d.key: d.level for d in dimensions},
                       **{f.name: getattr(about, f.name) for f in dataclasses.fields(about)}),
        dimensions={})
    for done, dimension in enumerate(dimensions):
        drows = by_dimension.get(dimension.key, [])
        items = sorted({r.item for r in drows}, key=_natural)
        column = {item: j for j, item in enumerate(items)}
        series: dict[tuple[str, str], np.ndarray] = {}
        groups: dict[str, str] = {}
        for r in drows:
            values = series.setdefault((r.kind, r.rater), np.full(len(items), np.nan))
            values[column[r.item]] = r.value
            if r.kind == "human" and r.group:
                groups[r.rater] = r.group
        humans = {name: v for (kind, name), v in series.items() if kind == "human"}
        judges = {name: v for (kind, name), v in series.items() if kind == "judge"}
        n_humans, summary, judge_rows = _block(humans, judges, dimension, n_resamples=n_resamples, seed=seed,
                                               stream=dimension.key)
        entry = StudyDimension(level=dimension.level, scale=[_json_safe(dimension.scale_min), _json_safe(dimension.scale_max)],
                               n_items=len(items), n_humans=n_humans, humans=summary, judges=judge_rows)
        for group in sorted(set(groups.values())):
            members = {name: v for name, v in humans.items() if groups.get(name) == group}
            seen = ~np.isnan(np.vstack(list(members.values()))).all(axis=0)
            n_humans, summary, judge_rows = _block(
                {n: v[seen] for n, v in members.items()}, {n: v[seen] for n, v in judges.items()},
                dimension, n_resamples=n_resamples, seed=seed, stream=f"{dimension.key}:{group}")
            entry.groups[group] = StudyGroup(n_items=int(seen.sum()), n_humans=n_humans, humans=summary,
                                             judges=judge_rows)
        out.dimensions[dimension.key] = entry
        if progress is not None:
            progress(done + 1, len(dimensions))
    return out


def _json_safe(value: Any) -> Any:
    """Plain JSON: numpy numbers as Python numbers, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, np.ndarray):
        return _json_safe(value.tolist())
    return value


# --- the long CSV of the numbers ----------------------------------------------------------------------

TABLE_FIELDS = ["dimension", "group", "comparison", "metric", "value", "ci_low", "ci_high", "n"]
HUMAN_METRICS = ["krippendorff_alpha", "icc_2_1", "icc_3_1", "percent_agreement", "within_one_agreement",
                 "fleiss_kappa", "gwet_ac1"]
# The one label of each humans' coefficient, on the page and in the PDF.
METRIC_LABELS = {
    "krippendorff_alpha": "Krippendorff's α", "icc_2_1": "ICC(2,1)", "icc_3_1": "ICC(3,1)",
    "percent_agreement": "Exact agreement", "within_one_agreement": "Within-one agreement",
    "fleiss_kappa": "Fleiss' κ", "gwet_ac1": "Gwet's AC1",
}
JUDGE_METRICS = ["spearman_rho", "kendall_tau_b", "mean_signed_difference", "cohen_kappa_linear",
                 "alpha_with_judge", "alpha_without_judge"]


def summary_interval(summary: ReliabilitySummary, metric: str) -> tuple[float | None, float | None]:
    """A coefficient's interval (low, high) in a reliability summary; α's percentile interval in older ones."""
    entry = (summary.get("intervals") or {}).get(metric)
    if isinstance(entry, dict):
        return entry.get("low"), entry.get("high")
    alpha_ci = summary.get("alpha_ci")
    if metric == "krippendorff_alpha" and alpha_ci:
        low, high = alpha_ci
        return low, high
    return None, None


TableCell = str | int | float | None


def study_table_rows(report: StudyReport) -> list[list[TableCell]]:
    """One row per dimension × group × comparison × metric (comparison: humans, or judge:<name>)."""
    rows: list[list[TableCell]] = []
    for key, entry in report.dimensions.items():
        blocks: list[tuple[str, StudyDimension | StudyGroup]] = [("", entry), *sorted(entry.groups.items())]
        for group, block in blocks:
            humans = block.humans
            if humans:
                for metric in HUMAN_METRICS:
                    value = humans.get(metric)
                    if isinstance(value, (int, float)) or value is None:
                        low, high = summary_interval(humans, metric)
                        rows.append([key, group, "humans", metric, value, low, high, humans.get("n_units")])
            for judge in block.judges:
                for metric in JUDGE_METRICS:
                    rows.append([key, group, f"judge:{judge.rater}", metric, getattr(judge, metric), None, None,
                                 judge.n_items])
    return rows


def study_report_json(report: StudyReport) -> bytes:
    """report.json: the whole report, keys sorted, indented, UTF-8, no NaN."""
    return json.dumps(report.to_json(), indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False).encode("utf-8") + b"\n"


def study_tables_csv(report: StudyReport) -> bytes:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(TABLE_FIELDS)
    for row in study_table_rows(report):
        writer.writerow("" if v is None else (repr(v) if isinstance(v, float) else str(v)) for v in row)
    return buffer.getvalue().encode("utf-8")
