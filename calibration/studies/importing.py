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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import cast

from django.conf import settings
from django.db import transaction
from tqdm import tqdm

from evaluations.importing.errors import RowError
from evaluations.importing.readers import NUL_MESSAGE, nul_field, read_records
from stats.ratingfile import HeaderError, canonical_of, header_columns

from ..models import Study, StudyDimension, StudyItem, StudyRater, StudyScore
from .scales import DeclaredScale, Scale, delimiter_named, scales_apply

FORMATS = ("long", "judge-bench", "wide")
LONG_COLUMNS = ("study", "item", "dimension", "rater", "rater_kind", "score")  # the canonical long header
LONG_REQUIRED = ("item", "rater", "score")
LONG_OPTIONAL = ("study", "dimension", "rater_kind", "group")
DEFAULT_DIMENSION = "score"
JUDGE_BENCH_LEVELS = {"graded": "ordinal", "categorical": "nominal", "continuous": "interval"}
KINDS = {"human", "judge"}
KIND_NAMES = {k: k for k in KINDS}  # one string object per kind
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
WRITE_BATCH = 5_000


def _quiet(phase: str, rows: int) -> None:
    return None


class StudyImportFailed(Exception):
    """Nothing was written; `errors` lists every problem as 'file:where: field: message'."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(f"{len(errors)} error(s); nothing was imported.\n" + "\n".join(errors[:50])
                         + (f"\n… and {len(errors) - 50} more." if len(errors) > 50 else ""))


@dataclass(frozen=True, slots=True)
class Row:
    where: str | int  # a JSON path, or (files of the long format) the line, placed by `Parsed.place`
    item: str
    dimension: str
    rater: str
    kind: str
    value: float
    group: str = ""


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
    rows: list[Row] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # item → its text, when the source has one
    errors: list[str] = field(default_factory=list)
    prefix: str = ""  # "file:" before a row's line number
    scales: dict[str, Scale] = field(default_factory=dict)  # each dimension's scale, declared or inferred (scales.py)
    warnings: list[str] = field(default_factory=list)  # designs that cannot give the statistic, and the fix

    def place(self, row: Row) -> str:
        """Where a row came from, as messages say it ("ratings.csv:12", a JSON path, "request: row 3")."""
        return f"{self.prefix}{row.where}" if isinstance(row.where, int) else row.where


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


def _jsonl_rows(path: Path, label: str, parsed: Parsed) -> Iterable[tuple[int, Record]]:
    return _records(path, label, parsed, "jsonl")


def read_long(path: Path, *, label: str, study: str, level: str = "ordinal", columns: Mapping[str, str] | None = None,
              dimension: str = DEFAULT_DIMENSION, kind: str = "human", on_progress: Progress = _quiet) -> Parsed:
    """Long rows — `item,rater,score` with optional `study,dimension,rater_kind,group`, in any order and under
    any alias of the rating-file vocabulary (`stats.ratingfile`) — from CSV or JSONL (by the file's suffix).
    A missing `dimension` or `rater_kind` column means every row has `dimension` or `kind`."""
    parsed = Parsed()
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    source: Callable[[Path, str, Parsed], Iterable[tuple[int, Record]]] = _jsonl_rows if jsonl else _csv_rows
    parsed.prefix = f"{label}:"
    return _long_rows(((line, record) for line, record in source(path, label, parsed)),
                      parsed=parsed, study=study, level=level, columns=columns, dimension=dimension, kind=kind,
                      where=f"{label}: the records' fields" if jsonl else f"{label}:1", on_progress=on_progress)


def _long_rows(records: Iterable[tuple[str | int, Record]], *, parsed: Parsed, study: str, level: str,
               columns: Mapping[str, str] | None = None, dimension: str = DEFAULT_DIMENSION, kind: str = "human",
               where: str = "header", strict: bool = False, on_progress: Progress = _quiet) -> Parsed:
    """The long format's checks over records; `strict` (the API) refuses a record with a field the vocabulary does
    not know, naming it."""
    limit = row_limit()
    stream = iter(records)
    head = list(islice(stream, HEADER_SAMPLE))  # the fields are read from the first records; the rest stream by
    if not head:
        return parsed
    names = list(dict.fromkeys(key for _, record in head for key in record))
    try:
        mapped = header_columns(names, required=LONG_REQUIRED, optional=LONG_OPTIONAL, chosen=columns,
                                prefer=(*LONG_COLUMNS, "group"), where=where)
    except HeaderError as exc:
        parsed.errors.append(str(exc))  # one message for the header, not one per row
        return parsed
    shared: dict[str, str] = {}  # one string object per distinct item, rater, dimension: memory grows with them only
    default_kind = kind.strip().lower()
    for n, (at, record) in enumerate(chain(head, stream), start=1):
        if limit and n > limit:
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: more than {limit:,} ratings: the limit of one import "
                                 "(setting STUDY_MAX_ROWS); split the file")
            break  # reading stops one past the limit: memory is bounded whatever the file's size
        if n % PROGRESS_EVERY == 0:
            on_progress("reading", n)
        if strict:
            unknown = [str(k) for k in record if canonical_of(str(k)) not in (*LONG_REQUIRED, *LONG_OPTIONAL)]
            if unknown:
                shown = ", ".join(repr(k[:40]) for k in unknown[:MAX_UNKNOWN_SHOWN])
                more = f" and {len(unknown) - MAX_UNKNOWN_SHOWN} more" if len(unknown) > MAX_UNKNOWN_SHOWN else ""
                parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {shown}{more}: unknown field(s); a rating has item, rater, score and "
                                     "optionally study, dimension, rater_kind, group (or their aliases)")
                continue

        def cell(canonical: str, record: Record = record) -> str:
            value = record.get(mapped[canonical]) if canonical in mapped else None
            return "" if value is None else str(value).strip()

        raw = {c: record.get(mapped[c]) for c in mapped}
        bad = [(c, problem) for c in mapped if c in MAX_LENGTH and (problem := _too_long(cell(c), c))]
        for column, problem in bad:
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {mapped[column]}: {problem}")
        if bad:
            continue
        missing = [c for c in LONG_REQUIRED if cell(c) == ""]
        missing += [c for c in ("dimension", "rater_kind") if c in mapped and cell(c) == ""]
        for column in missing:
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {mapped[column]}: is required")
        if missing:
            continue
        named = cell("study")
        if named and named != study:
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {mapped['study']}: this row is for study {named!r}, not {study!r}")
            continue
        rater_kind = cell("rater_kind").lower() if "rater_kind" in mapped else default_kind
        if rater_kind not in KINDS:
            name = mapped.get("rater_kind", "rater_kind")
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {name}: must be human or judge, not {str(raw.get('rater_kind', kind))[:40]!r}")
            continue
        value = _number(raw["score"])
        if value is None:
            parsed.errors.append(f"{parsed.prefix if isinstance(at, int) else ''}{at}: {mapped['score']}: must be a number, not {str(raw['score'])[:40]!r}")
            continue
        key = cell("dimension") if "dimension" in mapped else dimension
        key = shared.setdefault(key, key)
        parsed.dimensions.setdefault(key, Dimension(key=key, level=level))
        item, rater, group = cell("item"), cell("rater"), cell("group")
        parsed.rows.append(Row(at, shared.setdefault(item, item), key, shared.setdefault(rater, rater),
                               KIND_NAMES[rater_kind], value, shared.setdefault(group, group)))
    return parsed


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
    parsed = Parsed(dimensions={dimension: Dimension(key=dimension, level=level)})
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
            parsed.rows.append(Row(f"{label}:{line}", item, dimension, column,
                                   "judge" if column in judges else "human", value))
    return parsed


# --- checks and writes ------------------------------------------------------------------------------------


def _check(parsed: Parsed) -> list[str]:
    errors = list(parsed.errors)
    seen: dict[tuple[str, str, str], Row] = {}  # the first row of each key (a reference: no new string per row)
    kinds: dict[str, Row] = {}
    for row in parsed.rows:
        key = (row.item, row.dimension, row.rater)
        if key in seen:
            errors.append(f"{parsed.place(row)}: score: a second score of rater {row.rater!r} for item {row.item!r} on "
                          f"{row.dimension!r} (the first: {parsed.place(seen[key])})")
        seen.setdefault(key, row)
        if row.rater in kinds and kinds[row.rater].kind != row.kind:
            first = kinds[row.rater]
            errors.append(f"{parsed.place(row)}: rater_kind: {row.rater!r} is {first.kind} at {parsed.place(first)}")
        kinds.setdefault(row.rater, row)
        # values outside the dimension's scale: refused by scales.scales_apply, which every path calls first
    if not parsed.rows and not errors:
        errors.append("no ratings found")
    limit = row_limit()
    if limit and len(parsed.rows) > limit:
        errors.append(f"{parsed.place(parsed.rows[limit])}: more than {limit:,} ratings: the limit of one import (setting "
                      "STUDY_MAX_ROWS); split the file")
    return errors


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
        return _write(parsed, study=study, source=source, progress=progress, on_progress=on_progress)
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
    parsed = Parsed(dimensions={d.key: d for d in dimensions})
    rows = []
    for position, record in enumerate(records, start=1):
        if isinstance(record, dict):
            rows.append((f"{label}: row {position}", record))
        else:
            parsed.errors.append(f"{label}: row {position}: each rating must be an object")
    _long_rows(rows, parsed=parsed, study=study, level=level, where=f"{label}: the ratings' fields", strict=True)
    scales_apply(parsed)  # issue 32: values implausible on the declared (else inferred) scale are refused …
    for spec in parsed.dimensions.values():  # … but an inferred scale is not stored: a later batch may widen it
        if spec.key not in parsed.scales or parsed.scales[spec.key].source == "inferred":
            spec.scale_min = spec.scale_max = None
    errors = _check(parsed)
    if errors:
        raise StudyImportFailed(errors)
    return _write(parsed, study=study, source=label, progress=False)


@transaction.atomic
def _write(parsed: Parsed, *, study: str, source: str, progress: bool, on_progress: Progress = _quiet) -> ImportSummary:
    obj, _ = Study.objects.get_or_create(name=study, defaults={"source": source[:500]})
    dims = {}
    for spec in parsed.dimensions.values():
        dims[spec.key], _ = StudyDimension.objects.update_or_create(
            study=obj, key=spec.key, defaults={"level": spec.level, "scale_min": spec.scale_min,
                                               "scale_max": spec.scale_max, "prompt": spec.prompt})
    items: dict[str, int] = dict(StudyItem.objects.filter(study=obj).values_list("external_id", "pk"))
    new_items = sorted({r.item for r in parsed.rows} - set(items))
    for start in range(0, len(new_items), WRITE_BATCH):  # pks kept, model instances dropped batch by batch
        for item in StudyItem.objects.bulk_create(
                [StudyItem(study=obj, external_id=e, text=parsed.texts.get(e, ""))
                 for e in new_items[start:start + WRITE_BATCH]], batch_size=1000):
            items[item.external_id] = item.pk
    raters = {r.name: r for r in StudyRater.objects.filter(study=obj)}
    kinds = {r.rater: (r.kind, r.group) for r in parsed.rows}
    for rater in StudyRater.objects.bulk_create(
            [StudyRater(study=obj, name=n, kind=k, group=g) for n, (k, g) in kinds.items() if n not in raters]):
        raters[rater.name] = rater
    existing = {(item, dimension, rater): (pk, value) for item, dimension, rater, pk, value in
                StudyScore.objects.filter(item__study=obj).values_list("item_id", "dimension_id", "rater_id", "pk",
                                                                        "value").iterator(chunk_size=WRITE_BATCH)}
    summary = ImportSummary(study=obj.name, items=len({r.item for r in parsed.rows}), raters=len(kinds),
                            scores=len(parsed.rows), warnings=list(parsed.warnings),
                            scales={k: s.describe() for k, s in parsed.scales.items()})
    create: list[StudyScore] = []
    update: list[StudyScore] = []
    for n, row in enumerate(tqdm(parsed.rows, desc=f"importing into {obj.name}", unit=" scores",
                                 disable=not progress), start=1):
        if n % PROGRESS_EVERY == 0:
            on_progress("writing", n)
        key = (items[row.item], dims[row.dimension].pk, raters[row.rater].pk)
        current = existing.get(key)
        if current is None:
            create.append(StudyScore(item_id=key[0], dimension_id=key[1], rater_id=key[2], value=row.value))
        elif current[1] != row.value:
            update.append(StudyScore(pk=current[0], item_id=key[0], dimension_id=key[1], rater_id=key[2],
                                     value=row.value))
        if len(create) >= WRITE_BATCH:  # written batch by batch: no list of a million model instances
            StudyScore.objects.bulk_create(create, batch_size=WRITE_BATCH)
            summary.created += len(create)
            create = []
        if len(update) >= WRITE_BATCH:
            StudyScore.objects.bulk_update(update, ["value"], batch_size=1000)
            summary.updated += len(update)
            update = []
    StudyScore.objects.bulk_create(create, batch_size=WRITE_BATCH)
    StudyScore.objects.bulk_update(update, ["value"], batch_size=1000)
    summary.created += len(create)
    summary.updated += len(update)
    summary.unchanged = summary.scores - summary.created - summary.updated
    return summary


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
