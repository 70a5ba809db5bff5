"""Import ratings made outside the app into a study: long CSV/JSONL, JUDGE-BENCH JSON, wide CSV.

Every format is read into the same rows (item, dimension, rater, kind, value, where) and checked whole before
anything is written: one bad row anywhere and nothing is; every problem is reported with its file, line (or
JSON path) and field. Re-importing upserts by (item, dimension, rater): the same file twice changes nothing,
a changed value is counted as updated.
"""
from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import cast

import numpy as np
from django.conf import settings
from django.db import transaction
from tqdm import tqdm

from evaluations.importing.errors import RowError
from evaluations.importing.readers import NUL_MESSAGE, csv_cells, nul_field, read_records
from stats.ratingfile import HeaderError, canonical_of, header_columns

from ..models import Study, StudyDimension, StudyItem, StudyRater, StudyScore
from .bulk import bulk_checked, bulk_insert, bulk_update
from .rows import KIND_CODES, Columns, Row, Rows
from .scales import DeclaredScale, Scale, delimiter_named, scales_apply

FORMATS = ("long", "judge-bench", "wide")
LONG_COLUMNS = ("study", "item", "dimension", "rater", "rater_kind", "score")  # the canonical long header
LONG_REQUIRED = ("item", "rater", "score")
LONG_OPTIONAL = ("study", "dimension", "rater_kind", "group")
DEFAULT_DIMENSION = "score"
JUDGE_BENCH_LEVELS = {"graded": "ordinal", "categorical": "nominal", "continuous": "interval"}
KINDS = {"human", "judge"}
KIND_CODE = {kind: code for code, kind in enumerate(KIND_CODES)}
HEADER_SAMPLE = 1000  # a JSONL file's fields: the union of its first records' keys

# Longest text each field may hold (the columns' max_length): longer values are refused with their line and field
# (PostgreSQL would fail the whole import on them).
MAX_LENGTH = {"study": 200, "item": 200, "rater": 200, "dimension": 120, "group": 120}
MAX_UNKNOWN_SHOWN = 5


def row_limit() -> int:
    """The most ratings one import may bring into a study (setting STUDY_MAX_ROWS; 0: no limit)."""
    return int(getattr(settings, "STUDY_MAX_ROWS", 2_000_000) or 0)


def _too_long(value: str, field: str) -> str | None:
    limit = MAX_LENGTH.get(field)
    if limit is not None and len(value) > limit:
        return f"is {len(value)} characters long; at most {limit}"
    if "\x00" in value:
        return NUL_MESSAGE
    return None


# One record as it is read, before any check: a JSON object (key → any JSON value: a JSONL line, a rating of the
# API's bulk POST) or a CSV row (header → cell text). The file's boundary: values are read through `cell` and
# `_number`, never trusted as typed.
Record = Mapping[str, object]
CsvRecord = Mapping[str, str]
Progress = Callable[[str, int], None]  # (phase, rows so far): the worker's job writes it; may raise to stop
PROGRESS_EVERY = 10_000
WRITE_BATCH = 50_000  # scores per bulk insert (one COPY on PostgreSQL); progress and a cancel between batches


def _quiet(phase: str, rows: int) -> None:
    return None


class StudyImportFailed(Exception):
    """Nothing was written; `errors` lists every problem as 'file:where: field: message'."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(f"{len(errors)} error(s); nothing was imported.\n" + "\n".join(errors[:50])
                         + (f"\n… and {len(errors) - 50} more." if len(errors) > 50 else ""))


@dataclass
class Dimension:
    key: str
    level: str = "ordinal"
    scale_min: float | None = None
    scale_max: float | None = None
    prompt: str = ""


@dataclass
class Parsed:
    dimensions: dict[str, Dimension] = field(default_factory=dict)
    rows: Rows = field(default_factory=Rows)  # column by column (rows.py)
    texts: dict[str, str] = field(default_factory=dict)  # item → its text, when the source has one
    errors: list[str] = field(default_factory=list)
    prefix: str = ""  # "file:" before a row's line number
    scales: dict[str, Scale] = field(default_factory=dict)  # each dimension's scale, declared or inferred (scales.py)
    warnings: list[str] = field(default_factory=list)  # designs that cannot give the statistic, and the fix

    def place(self, row: Row) -> str:
        """Where a row came from, as messages say it ("ratings.csv:12", a JSON path, "request: row 3")."""
        return f"{self.prefix}{row.where}" if isinstance(row.where, int) else row.where

    def place_of(self, index: int) -> str:
        """`place` of the row at `index`."""
        where = self.rows.where_of(index)
        return f"{self.prefix}{where}" if isinstance(where, int) else where


@dataclass
class ImportSummary:
    study: str
    items: int = 0
    raters: int = 0
    scores: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    scales: dict[str, str] = field(default_factory=dict)  # dimension → its scale in words (scales.Scale.describe)
    warnings: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"{self.study}: {self.items} items, {self.raters} raters, {self.scores} scores — {self.created} "
                f"created, {self.updated} updated, {self.unchanged} unchanged")


def _number(raw: object) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        try:
            value = float(str(raw).strip())
        except ValueError:
            return None
    return value if math.isfinite(value) else None


# --- readers ----------------------------------------------------------------------------------------------


def _records(path: Path, label: str, parsed: Parsed, fmt: str) -> Iterable[tuple[int, Record]]:
    """The file's records with their lines, read by the benchmark importers' readers (CSV formula prefixes
    undone, line and column of broken JSON); their problems go to `parsed.errors`."""
    for line, record in read_records(path, fmt=fmt, label=label):
        if isinstance(record, RowError):
            parsed.errors.append(str(record))
            continue
        yield line, record


def _csv_rows(path: Path, label: str, parsed: Parsed) -> Iterable[tuple[int, CsvRecord]]:
    # The CSV reader's records map the header's names to the cells' text (evaluations.importing.readers).
    return cast(Iterable[tuple[int, CsvRecord]], _records(path, label, parsed, "csv"))


def read_long(path: Path, *, label: str, study: str, level: str = "ordinal", columns: Mapping[str, str] | None = None,
              dimension: str = DEFAULT_DIMENSION, kind: str = "human", on_progress: Progress = _quiet) -> Parsed:
    """Long rows — `item,rater,score` with optional `study,dimension,rater_kind,group`, in any order and under
    any alias of the rating-file vocabulary (`stats.ratingfile`) — from CSV or JSONL (by the file's suffix).
    A missing `dimension` or `rater_kind` column means every row has `dimension` or `kind`. One pass over the file:
    a CSV row's cells are checked and stored as they are read (no record per row)."""
    parsed = Parsed(prefix=f"{label}:")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        _long_records(read_records(path, fmt="jsonl", label=label), parsed=parsed, columns=columns, study=study,
                      level=level, dimension=dimension, kind=kind, where=f"{label}: the records' fields",
                      on_progress=on_progress)
        return parsed
    cells = csv_cells(path, label)
    _, header = next(cells)
    if not isinstance(header, list):
        parsed.errors.append(str(header))
        return parsed
    first = next(cells, None)
    if first is None:  # a header and no rows: "no ratings found"
        return parsed
    try:
        mapped = header_columns(header, required=LONG_REQUIRED, optional=LONG_OPTIONAL, chosen=columns,
                                prefer=(*LONG_COLUMNS, "group"), where=f"{label}:1")
    except HeaderError as exc:
        parsed.errors.append(str(exc))  # one message for the header, not one per row
        return parsed
    _long_cells(chain([first], cells), parsed=parsed, mapped=mapped,
                index={c: header.index(name) for c, name in mapped.items()}, study=study, level=level,
                dimension=dimension, kind=kind, on_progress=on_progress)
    return parsed


def _long_records(records: Iterable[tuple[int, object]], *, parsed: Parsed, study: str, level: str,
                  columns: Mapping[str, str] | None = None, dimension: str = DEFAULT_DIMENSION, kind: str = "human",
                  where: str = "header", strict: bool = False, on_progress: Progress = _quiet) -> None:
    """The long format over JSON objects (JSONL lines, the API's ratings): their fields are the union of the first
    records' keys; each record becomes its fields' text, checked by `_long_cells`. `strict` (the API) refuses a
    record with a field the vocabulary does not know, naming it. A record that is not an object (a reader's
    RowError) is reported as it is."""
    stream = iter(records)
    head: list[tuple[int, object]] = []
    objects = 0
    for at, record in stream:  # the fields are read from the first records; the rest stream by
        head.append((at, record))
        objects += isinstance(record, dict)
        if objects >= HEADER_SAMPLE:
            break
    names = list(dict.fromkeys(key for _, record in head if isinstance(record, dict) for key in record))
    try:
        mapped = header_columns(names, required=LONG_REQUIRED, optional=LONG_OPTIONAL, chosen=columns,
                                prefer=(*LONG_COLUMNS, "group"), where=where) if objects else {}
    except HeaderError as exc:
        parsed.errors += [str(record) for _, record in head if not isinstance(record, dict)]
        parsed.errors.append(str(exc))
        return
    if not objects:
        parsed.errors += [str(record) for _, record in head]
        return
    fields = list(mapped.values())

    def cells() -> Iterator[tuple[int, object]]:
        for at, record in chain(head, stream):
            if not isinstance(record, dict):
                yield at, record
            elif strict and (unknown := _unknown_fields(record)):
                yield at, f"{parsed.prefix}{at}: {unknown}"
            else:
                yield at, [_text(record.get(name)) for name in fields]

    _long_cells(cells(), parsed=parsed, mapped=mapped, index={c: i for i, c in enumerate(mapped)}, study=study,
                level=level, dimension=dimension, kind=kind, on_progress=on_progress)


def _text(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _unknown_fields(record: Mapping[str, object]) -> str:
    unknown = [str(k) for k in record if canonical_of(str(k)) not in (*LONG_REQUIRED, *LONG_OPTIONAL)]
    if not unknown:
        return ""
    shown = ", ".join(repr(k[:40]) for k in unknown[:MAX_UNKNOWN_SHOWN])
    more = f" and {len(unknown) - MAX_UNKNOWN_SHOWN} more" if len(unknown) > MAX_UNKNOWN_SHOWN else ""
    return (f"{shown}{more}: unknown field(s); a rating has item, rater, score and optionally study, dimension, "
            "rater_kind, group (or their aliases)")


def _long_cells(rows: Iterable[tuple[int, object]], *, parsed: Parsed, mapped: Mapping[str, str],
                index: Mapping[str, int], study: str, level: str, dimension: str, kind: str,
                on_progress: Progress) -> None:
    """The long format's checks, one pass: each row is a list of text cells (`index`: a canonical column's
    position; `mapped`: its name in the file), stored as codes in `parsed.rows` or refused in `parsed.errors` with
    its line and field (`_long_row_problems` words them). Anything else in `rows` (a reader's RowError, a refused
    record's message) is an error as it stands. Reading stops one row past the limit (STUDY_MAX_ROWS)."""
    table, errors, limit, every = parsed.rows, parsed.errors, row_limit() or sys.maxsize, PROGRESS_EVERY
    i_item, i_rater, i_score = index["item"], index["rater"], index["score"]
    i_dim, i_kind, i_group, i_study = (index.get(c, -1) for c in ("dimension", "rater_kind", "group", "study"))
    default_kind = kind.strip().lower()
    items, raters, dims = table.items.codes, table.raters.codes, table.dimensions
    groups, first_rows, kinds = table.rater_group, table.rater_first, KIND_CODE
    add_where, add_item, add_rater, add_dim, add_kind, add_value = table.appenders()  # bound once: a million rows
    n, n_rows = 0, len(table)
    for at, cells in rows:
        if not isinstance(cells, list):
            errors.append(str(cells))
            continue
        n += 1
        if n > limit:
            errors.append(f"{parsed.prefix}{at}: more than {limit:,} ratings: the limit of one import (setting "
                          "STUDY_MAX_ROWS); split the file")
            break  # memory is bounded whatever the file's size
        if not n % every:
            on_progress("reading", n)
        item, rater = cells[i_item].strip(), cells[i_rater].strip()
        key = cells[i_dim].strip() if i_dim >= 0 else dimension
        group = cells[i_group].strip() if i_group >= 0 else ""
        code_kind = kinds.get(cells[i_kind].strip().lower() if i_kind >= 0 else default_kind, -1)
        try:
            value = float(cells[i_score])
        except ValueError:
            value = math.nan
        if (value - value or code_kind < 0 or not item or not rater or not key or len(item) > 200 or len(rater) > 200
                or len(key) > 120 or len(group) > 120 or "\x00" in item or "\x00" in rater or "\x00" in key
                or "\x00" in group or (i_study >= 0 and cells[i_study].strip() not in ("", study))):
            problems = _long_row_problems(f"{parsed.prefix}{at}", cells, index=index, mapped=mapped,
                                          study=study, kind=kind)
            if problems:
                errors += problems
                continue
        code_item = items.get(item)
        if code_item is None:
            code_item = table.items.code(item)
        code_rater = raters.get(rater)
        if code_rater is None:
            code_rater = table.raters.code(rater)
            first_rows.append(n_rows)
        if i_group >= 0:
            groups[code_rater] = group
        code_dim = dims.codes.get(key)
        if code_dim is None:
            code_dim = dims.code(key)
            parsed.dimensions.setdefault(key, Dimension(key=key, level=level))
        add_where(at)
        add_item(code_item)
        add_rater(code_rater)
        add_dim(code_dim)
        add_kind(code_kind)
        add_value(value)
        n_rows += 1


def _long_row_problems(where: str, cells: list[str], *, index: Mapping[str, int], mapped: Mapping[str, str],
                       study: str, kind: str) -> list[str]:
    """Every problem of one long row, worded with its place and field: values too long (or holding NUL), then
    required values missing, then another study, a kind that is neither human nor judge, a score not a number."""
    def cell(canonical: str) -> str:
        return cells[index[canonical]].strip() if canonical in index else ""

    bad = [(c, problem) for c in mapped if c in MAX_LENGTH and (problem := _too_long(cell(c), c))]
    if bad:
        return [f"{where}: {mapped[column]}: {problem}" for column, problem in bad]
    missing = [c for c in LONG_REQUIRED if cell(c) == ""]
    missing += [c for c in ("dimension", "rater_kind") if c in mapped and cell(c) == ""]
    if missing:
        return [f"{where}: {mapped[column]}: is required" for column in missing]
    named = cell("study")
    if named and named != study:
        return [f"{where}: {mapped['study']}: this row is for study {named!r}, not {study!r}"]
    rater_kind = cell("rater_kind").lower() if "rater_kind" in mapped else kind.strip().lower()
    if rater_kind not in KINDS:
        shown = cells[index["rater_kind"]] if "rater_kind" in index else kind
        return [f"{where}: {mapped.get('rater_kind', 'rater_kind')}: must be human or judge, not {shown[:40]!r}"]
    if _number(cells[index["score"]]) is None:
        return [f"{where}: {mapped['score']}: must be a number, not {cells[index['score']][:40]!r}"]
    return []


def read_judge_bench(path: Path, *, label: str) -> Parsed:
    """A JUDGE-BENCH dataset file: its metrics become dimensions, each position of `individual_human_scores` a
    human rater ("human-1", …); graded metrics are ordinal, categorical ones nominal (labels coded in sorted
    order), continuous ones interval."""
    parsed = Parsed()
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        parsed.errors.append(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON at column {exc.colno}: {exc.msg}")
        return parsed
    nul = nul_field(data) if isinstance(data, dict) else None
    if nul is not None:
        parsed.errors.append(f"{label}: {nul}: {NUL_MESSAGE}")
        return parsed
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list) \
            or not isinstance(data.get("instances"), list):
        parsed.errors.append(f"{label}: not a JUDGE-BENCH dataset: expected an object with 'annotations' and "
                             "'instances' lists")
        return parsed
    labels: dict[str, list[str]] = {}
    for n, spec in enumerate(data["annotations"]):
        metric = spec.get("metric") if isinstance(spec, dict) else None
        category = spec.get("category") if isinstance(spec, dict) else None
        if not metric or category not in JUDGE_BENCH_LEVELS:
            parsed.errors.append(f"{label}: annotations[{n}]: needs a metric and a category "
                                 f"({', '.join(JUDGE_BENCH_LEVELS)})")
            continue
        level = JUDGE_BENCH_LEVELS[category]
        worst, best = _number(spec.get("worst")), _number(spec.get("best"))
        parsed.dimensions[metric] = Dimension(
            key=metric, level=level, scale_min=min(worst, best) if worst is not None and best is not None else None,
            scale_max=max(worst, best) if worst is not None and best is not None else None,
            prompt=str(spec.get("prompt", "") or ""))
        if level == "nominal":
            labels[metric] = sorted({str(s) for inst in data["instances"] if isinstance(inst, dict)
                                     for s in (((inst.get("annotations") or {}).get(metric) or {})
                                               .get("individual_human_scores") or []) if s is not None})
    for n, inst in enumerate(data["instances"]):
        if not isinstance(inst, dict) or "id" not in inst:
            parsed.errors.append(f"{label}: instances[{n}]: needs an id")
            continue
        item = str(inst["id"])
        if isinstance(inst.get("instance"), str):
            parsed.texts[item] = inst["instance"]
        for metric, annotation in (inst.get("annotations") or {}).items():
            where = f"{label}: instances[{n}].annotations.{metric}"
            if metric not in parsed.dimensions:
                parsed.errors.append(f"{where}: no such metric in 'annotations'")
                continue
            scores = (annotation or {}).get("individual_human_scores")
            if scores is None:
                continue  # the dataset has only an aggregate for this item
            if not isinstance(scores, list):
                parsed.errors.append(f"{where}.individual_human_scores: must be a list")
                continue
            for position, raw in enumerate(scores, start=1):
                if raw is None:
                    continue
                value = float(labels[metric].index(str(raw))) if metric in labels else _number(raw)
                if value is None:
                    parsed.errors.append(f"{where}.individual_human_scores[{position - 1}]: not a number: "
                                         f"{str(raw)[:40]!r}")
                    continue
                parsed.rows.append(Row(f"{where}[{position - 1}]", item, metric, f"human-{position}", "human", value))
    return parsed


def read_wide(path: Path, *, label: str, id_column: str, rater_columns: list[str], dimension: str,
              level: str = "ordinal", judge_columns: Iterable[str] = ()) -> Parsed:
    """One row per item, one column per rater (`judge_columns` are judges); empty cells are missing ratings. An
    empty `id_column` is the header's item column by the rating-file vocabulary."""
    parsed = Parsed(dimensions={dimension: Dimension(key=dimension, level=level)}, prefix=f"{label}:")
    judges = set(judge_columns)
    first = True
    for line, record in _csv_rows(path, label, parsed):
        if first:
            if not id_column:  # the vocabulary's item column (item, unit, item_id …)
                try:
                    id_column = header_columns(list(record), required=("item",), where=f"{label}:1")["item"]
                except HeaderError as exc:
                    parsed.errors.append(str(exc))
                    return parsed
            long_names = [c for c in rater_columns if _too_long(c, "rater")]
            if long_names:
                parsed.errors.append(f"{label}:1: {long_names[0][:40]!r}: a rater's name (this column's) "
                                     f"{_too_long(long_names[0], 'rater')}")
                return parsed
            absent = [c for c in [id_column, *rater_columns] if c not in record]
            if absent:
                parsed.errors.append(f"{label}:1: {', '.join(absent)}: no such column in the header "
                                     f"(found: {','.join(record)})")
                return parsed
            first = False
        item = record[id_column].strip()
        if not item:
            parsed.errors.append(f"{label}:{line}: {id_column}: is required")
            continue
        problem = _too_long(item, "item")
        if problem:
            parsed.errors.append(f"{label}:{line}: {id_column}: {problem}")
            continue
        for column in rater_columns:
            raw = record[column].strip()
            if raw == "":
                continue
            value = _number(raw)
            if value is None:
                parsed.errors.append(f"{label}:{line}: {column}: must be a number, not {raw[:40]!r}")
                continue
            parsed.rows.append(Row(line, item, dimension, column,
                                   "judge" if column in judges else "human", value))
    return parsed


# --- checks and writes ------------------------------------------------------------------------------------


def _check(parsed: Parsed) -> list[str]:
    """The reading's errors, then the rows' conflicts (`_conflicts`), then an empty file or one over the limit."""
    errors = list(parsed.errors)
    rows = parsed.rows
    if rows:
        errors += _conflicts(parsed)
    elif not errors:
        errors.append("no ratings found")
    limit = row_limit()
    if limit and len(rows) > limit:
        errors.append(f"{parsed.place_of(limit)}: more than {limit:,} ratings: the limit of one import (setting "
                      "STUDY_MAX_ROWS); split the file")
    return errors


def _conflicts(parsed: Parsed) -> list[str]:
    """In row order: a second score of one rater for one item on one dimension (naming the first), and a rater whose
    kind differs from its first row's. Sorted columns, not a dict of a million keys."""
    rows, found = parsed.rows, []
    columns = rows.columns()
    (key,) = _keys([(columns.item, columns.dimension, columns.rater)],
                   (len(rows.items), len(rows.dimensions), len(rows.raters)))
    order = np.argsort(key, kind="stable")  # stable: the first of equal keys is the earliest row
    ordered = key[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    if not starts.all():
        run_start = np.maximum.accumulate(np.where(starts, np.arange(len(key)), 0))
        for position in np.flatnonzero(~starts).tolist():
            index, first = int(order[position]), int(order[run_start[position]])
            row = rows.row(index)
            found.append((index, 0, f"{parsed.place_of(index)}: score: a second score of rater {row.rater!r} for item "
                                    f"{row.item!r} on {row.dimension!r} (the first: {parsed.place_of(first)})"))
    firsts = np.array(rows.rater_first, dtype=np.int64)
    for index in np.flatnonzero(columns.kind != columns.kind[firsts][columns.rater]).tolist():
        first = int(firsts[columns.rater[index]])
        found.append((index, 1, f"{parsed.place_of(index)}: rater_kind: {rows.raters.names[columns.rater[index]]!r} "
                                f"is {KIND_CODES[columns.kind[first]]} at {parsed.place_of(first)}"))
    return [message for *_, message in sorted(found)]


def _keys(triples: list[tuple[np.ndarray, np.ndarray, np.ndarray]], sizes: tuple[int, int, int]) -> list[np.ndarray]:
    """One integer for each (a, b, c) of codes (0 ≤ a < sizes[0] …), the same integer exactly for the same triple,
    across all the `triples` arrays given."""
    b_size, c_size = max(sizes[1], 1), max(sizes[2], 1)
    if max(sizes[0], 1) * b_size * c_size < 2**62:
        return [(a.astype(np.int64) * b_size + b) * c_size + c for a, b, c in triples]
    stacked = np.concatenate([np.stack(triple, axis=1) for triple in triples])  # too many for one int64: numbered
    inverse = np.unique(stacked, axis=0, return_inverse=True)[1].ravel()
    return np.split(inverse, np.cumsum([len(triple[0]) for triple in triples])[:-1])


def study_file_read(*, path: str | Path, study: str, fmt: str = "long", level: str = "ordinal",
                    id_column: str = "", rater_columns: list[str] | None = None, judge_columns: Iterable[str] = (),
                    dimension: str = "", columns: Mapping[str, str] | None = None, rater_kind: str = "human",
                    label: str = "", on_progress: Progress = _quiet, scale: DeclaredScale | None = None) -> Parsed:
    """Read and check a ratings file without writing: the rows, and every problem in `errors` (file:line)."""
    path = Path(path)
    label = label or str(path)
    if fmt not in FORMATS:
        return Parsed(errors=[f"{label}: unknown format {fmt!r}; use {', '.join(FORMATS)}"])
    if not path.is_file():
        return Parsed(errors=[f"{label}: no such file"])
    readers: dict[str, Callable[[], Parsed]] = {
        "long": lambda: read_long(path, label=label, study=study, level=level, columns=columns,
                                  dimension=dimension or DEFAULT_DIMENSION, kind=rater_kind, on_progress=on_progress),
        "judge-bench": lambda: read_judge_bench(path, label=label),
        "wide": lambda: read_wide(path, label=label, id_column=id_column, rater_columns=list(rater_columns or []),
                                  dimension=dimension or DEFAULT_DIMENSION, level=level, judge_columns=judge_columns),
    }
    if fmt == "wide" and not rater_columns:
        return Parsed(errors=[f"{label}: the wide format needs --rater-columns (the raters' columns)"])
    if named := delimiter_named(path, label=label):  # a semicolon- or tab-separated file, named as such
        return Parsed(errors=[named])
    try:
        parsed = readers[fmt]()
    except UnicodeDecodeError as exc:
        return Parsed(errors=[f"{label}: not UTF-8 text (byte {exc.start})"])
    scales_apply(parsed, scale=scale)  # issue 32: the scale, declared or inferred; values outside it refused
    parsed.errors = _check(parsed)
    return parsed


class _DryRun(Exception):
    def __init__(self, summary: ImportSummary) -> None:
        self.summary = summary


def study_import(*, path: str | Path, study: str, fmt: str = "long", progress: bool = False,
                 level: str = "ordinal", id_column: str = "", rater_columns: list[str] | None = None,
                 judge_columns: Iterable[str] = (), dimension: str = "", source: str = "",
                 columns: Mapping[str, str] | None = None, rater_kind: str = "human", label: str = "",
                 dry_run: bool = False, on_progress: Progress = _quiet, scale: DeclaredScale | None = None) -> ImportSummary:
    """Read, check, then write a ratings file into the study `study` (created if new); all or nothing.

    `columns` maps the vocabulary's columns to the file's (the upload page's mapping); without it the header is
    read by the vocabulary. `dry_run` writes and rolls back, so the summary's created/updated counts are exact.
    """
    parsed = study_file_read(path=path, study=study, fmt=fmt, level=level, id_column=id_column,
                             rater_columns=rater_columns, judge_columns=judge_columns, dimension=dimension,
                             columns=columns, rater_kind=rater_kind, label=label, on_progress=on_progress, scale=scale)
    if parsed.errors:
        raise StudyImportFailed(parsed.errors)
    source = source or label or str(path)
    if not dry_run:
        return _write(parsed, study=study, source=source, progress=progress, on_progress=on_progress,
                      checked_by_batch=True)
    try:
        with transaction.atomic():
            raise _DryRun(_write(parsed, study=study, source=source, progress=False, on_progress=on_progress))
    except _DryRun as done:
        return done.summary


def study_ratings_import(*, records: list[object], study: str, label: str = "request", level: str = "ordinal",
                         dimensions: Iterable[Dimension] = ()) -> ImportSummary:
    """The long format given as records in memory (the API's bulk POST), its fields named by the rating-file
    vocabulary (`unit`/`value` as well as `item`/`score`); `where` is "request: row N". Declared
    `dimensions` (key, level, scale) are kept; others are created at `level`. All or nothing."""
    parsed = Parsed(dimensions={d.key: d for d in dimensions}, prefix=f"{label}: row ")
    rows = [(position, record if isinstance(record, dict) else f"{label}: row {position}: each rating must be an object")
            for position, record in enumerate(records, start=1)]
    _long_records(rows, parsed=parsed, study=study, level=level, where=f"{label}: the ratings' fields", strict=True)
    scales_apply(parsed)  # issue 32: values implausible on the declared (else inferred) scale are refused …
    for spec in parsed.dimensions.values():  # … but an inferred scale is not stored: a later batch may widen it
        if spec.key not in parsed.scales or parsed.scales[spec.key].source == "inferred":
            spec.scale_min = spec.scale_max = None
    errors = _check(parsed)
    if errors:
        raise StudyImportFailed(errors)
    return _write(parsed, study=study, source=label, progress=False)


@transaction.atomic
def _write(parsed: Parsed, *, study: str, source: str, progress: bool, on_progress: Progress = _quiet,
           checked_by_batch: bool = False) -> ImportSummary:
    """Upsert the rows by (item, dimension, rater): new scores inserted in bulk (`bulk.bulk_insert`: COPY on
    PostgreSQL), changed ones updated, the same value left alone; study, dimensions, items and raters created as
    needed. `checked_by_batch`: the database's deferred checks run after each batch (`bulk.bulk_checked`), not all
    at the commit — a dry run, rolled back, skips them."""
    obj, _ = Study.objects.get_or_create(name=study, defaults={"source": source[:500]})
    dims = {}
    for spec in parsed.dimensions.values():
        dims[spec.key], _ = StudyDimension.objects.update_or_create(
            study=obj, key=spec.key, defaults={"level": spec.level, "scale_min": spec.scale_min,
                                               "scale_max": spec.scale_max, "prompt": spec.prompt})
    rows = parsed.rows
    columns = rows.columns()
    pks = (_items_stored(obj, rows, parsed.texts), np.array([dims[k].pk for k in rows.dimensions.names], dtype=np.int64),
           _raters_stored(obj, rows))
    summary = ImportSummary(study=obj.name, items=len(rows.items), raters=len(rows.raters), scores=len(rows),
                            warnings=list(parsed.warnings), scales={k: s.describe() for k, s in parsed.scales.items()})
    create, update, update_pks = _score_changes(obj, columns, pks)
    with tqdm(total=len(create) + len(update), desc=f"importing into {obj.name}", unit=" scores",
              disable=not progress) as bar:
        on_progress("writing", 0)
        for start in range(0, len(create), WRITE_BATCH):  # batch by batch: a cancel is seen between two
            part = create[start:start + WRITE_BATCH]
            bulk_insert(StudyScore, ["item", "dimension", "rater", "value"],
                        zip(pks[0][columns.item[part]].tolist(), pks[1][columns.dimension[part]].tolist(),
                            pks[2][columns.rater[part]].tolist(), columns.value[part].tolist(), strict=True))
            if checked_by_batch:
                bulk_checked()
            summary.created += len(part)
            bar.update(len(part))
            on_progress("writing", summary.created)
        for start in range(0, len(update), WRITE_BATCH):
            part = update[start:start + WRITE_BATCH]
            bulk_update(StudyScore, "value", zip(columns.value[part].tolist(),
                                                 update_pks[start:start + WRITE_BATCH].tolist(), strict=True))
            summary.updated += len(part)
            bar.update(len(part))
            on_progress("writing", summary.created + summary.updated)
    summary.unchanged = summary.scores - summary.created - summary.updated
    return summary


def _items_stored(study: Study, rows: Rows, texts: Mapping[str, str]) -> np.ndarray:
    """Each item's pk, indexed by the item's code in `rows`; the study's new items created first (in the order of
    their ids, in bulk)."""
    pks = np.full(len(rows.items), -1, dtype=np.int64)
    codes, names = rows.items.codes, rows.items.names

    def fill() -> None:
        for external_id, pk in StudyItem.objects.filter(study=study).values_list("external_id", "pk").iterator(
                chunk_size=WRITE_BATCH):
            code = codes.get(external_id)
            if code is not None:
                pks[code] = pk

    fill()
    new = sorted(names[code] for code in np.flatnonzero(pks < 0).tolist())
    if new:
        bulk_insert(StudyItem, ["study", "external_id", "text"], ((study.pk, e, texts.get(e, "")) for e in new))
        fill()
    return pks


def _raters_stored(study: Study, rows: Rows) -> np.ndarray:
    """Each rater's pk, indexed by the rater's code in `rows`; new raters created with the kind of their first row
    and the group of their last."""
    stored = dict(StudyRater.objects.filter(study=study).values_list("name", "pk"))
    kinds = rows.kind
    new = [StudyRater(study=study, name=name, kind=KIND_CODES[kinds[rows.rater_first[code]]],
                      group=rows.rater_group.get(code, ""))
           for code, name in enumerate(rows.raters.names) if name not in stored]
    for rater in StudyRater.objects.bulk_create(new, batch_size=1000):
        stored[rater.name] = rater.pk
    return np.array([stored[name] for name in rows.raters.names], dtype=np.int64)


STORED_SCORE = np.dtype([("item", np.int64), ("dimension", np.int64), ("rater", np.int64), ("pk", np.int64),
                         ("value", np.float64)])


def _score_changes(study: Study, columns: Columns, pks: tuple[np.ndarray, np.ndarray, np.ndarray]) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which rows are new scores (their indices), which change a stored score (their indices, the stored pks); the
    rest hold the value already stored."""
    everything = np.arange(len(columns.item))
    query = StudyScore.objects.filter(item__study=study)
    if not query.exists():
        return everything, everything[:0], everything[:0]
    stored = np.fromiter(query.values_list("item_id", "dimension_id", "rater_id", "pk", "value").iterator(
        chunk_size=WRITE_BATCH), dtype=STORED_SCORE)
    codes = [_codes_of(pks[i], stored[name]) for i, name in enumerate(("item", "dimension", "rater"))]
    known = (codes[0] >= 0) & (codes[1] >= 0) & (codes[2] >= 0)  # stored scores of other items are not touched
    stored = stored[known]
    row_keys, stored_keys = _keys([(columns.item, columns.dimension, columns.rater),
                                   (codes[0][known], codes[1][known], codes[2][known])], (len(pks[0]), len(pks[1]), len(pks[2])))
    if not len(stored_keys):
        return everything, everything[:0], everything[:0]
    order = np.argsort(stored_keys)
    at = np.minimum(np.searchsorted(stored_keys[order], row_keys), len(order) - 1)
    found = stored_keys[order][at] == row_keys
    match = order[at]
    changed = found & (stored["value"][match] != columns.value)
    return np.flatnonzero(~found), np.flatnonzero(changed), stored["pk"][match[changed]]


def _codes_of(pks: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The index in `pks` of each of `wanted`, −1 where it is not there."""
    if not len(pks):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(pks)
    at = np.minimum(np.searchsorted(pks[order], wanted), len(pks) - 1)
    return np.where(pks[order][at] == wanted, order[at], -1)


# --- the upload page's preview ------------------------------------------------------------------------------


@dataclass
class Preview:
    """The first rows of a file as the upload page shows them, and the vocabulary's reading of its header."""

    header: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)  # (where, cells in header order)
    guess: dict[str, str] = field(default_factory=dict)  # canonical column → the file's column
    header_error: str = ""  # the one message for a header the vocabulary cannot read
    errors: list[str] = field(default_factory=list)  # problems met in the rows shown
    dimensions: list[Dimension] = field(default_factory=list)  # JUDGE-BENCH: the metrics and their levels


def study_file_preview(*, path: str | Path, fmt: str, label: str, n: int = 10) -> Preview:
    """The first `n` rows of an uploaded ratings file, with the vocabulary's guess at its columns."""
    path = Path(path)
    preview = Preview()
    if fmt == "judge-bench":
        parsed = read_judge_bench(path, label=label)
        preview.errors = parsed.errors[:n]
        preview.header = ["item", "dimension", "rater", "rater_kind", "score"]
        preview.rows = [(parsed.place(r), [r.item, r.dimension, r.rater, r.kind, f"{r.value:g}"]) for r in parsed.rows[:n]]
        preview.dimensions = list(parsed.dimensions.values())
        return preview
    parsed = Parsed()
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    records: list[tuple[int, Record]] = []
    try:
        for line, record in _records(path, label, parsed, "jsonl" if jsonl else "csv"):
            records.append((line, record))
            if len(records) >= n:
                break
    except UnicodeDecodeError as exc:
        parsed.errors.append(f"{label}: not UTF-8 text (byte {exc.start})")
    preview.errors = parsed.errors[:n]
    preview.header = list(dict.fromkeys(key for _, record in records for key in record)) if jsonl \
        else _csv_header(path)
    preview.rows = [(f"{label}:{line}", ["" if record.get(c) is None else str(record.get(c)) for c in preview.header])
                    for line, record in records]
    for name in preview.header:
        canonical = canonical_of(name)
        if canonical and canonical not in preview.guess:
            preview.guess[canonical] = name
    preview.header_error = delimiter_named(path, label=label)  # issue 32: a semicolon or tab file, named
    if preview.header and not preview.header_error:
        try:
            header_columns(preview.header, required=LONG_REQUIRED if fmt == "long" else ("item",),
                           optional=LONG_OPTIONAL if fmt == "long" else (), prefer=(*LONG_COLUMNS, "group"),
                           where=f"{label}:1" if not jsonl else f"{label}: the records' fields")
        except HeaderError as exc:
            preview.header_error = str(exc)
    return preview


def _csv_header(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
