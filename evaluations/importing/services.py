"""Atomic, idempotent imports: validate every row first, then upsert by external id in one transaction."""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from tqdm import tqdm

from ..models import EvaluatedModel, ModelResponse, TestCase, TheoBertCase, Tradition
from .errors import ImportFailed, RowError
from .readers import read_records
from .schemas import SCHEMAS, Schema

logger = logging.getLogger(__name__)

PROGRESS_THRESHOLD = 1000  # rows; smaller files finish before a bar would be useful
BATCH = 500


@dataclass
class ImportReport:
    """What an import did."""

    kind: str
    file: str
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    def __str__(self) -> str:
        return (
            f"{self.file}: {self.rows} {self.kind} rows — {self.created} created, "
            f"{self.updated} updated, {self.unchanged} unchanged"
        )


def _progress(items: Iterable, *, total: int, desc: str, show: bool | None) -> Iterator:
    visible = total >= PROGRESS_THRESHOLD if show is None else show
    return iter(tqdm(items, total=total, desc=desc, unit="row", disable=not visible, leave=False))


def import_file(
    *,
    path: str | Path,
    kind: str,
    fmt: str | None = None,
    name: str | None = None,
    dry_run: bool = False,
    progress: bool | None = None,
) -> ImportReport:
    """Import a file of `kind` (cases, responses, theobert); raises ImportFailed and writes nothing on any error."""
    if kind not in SCHEMAS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(SCHEMAS)}")
    label = name or str(path)
    schema = SCHEMAS[kind]
    records = read_records(path, fmt=fmt, name=name)
    rows, errors = _validate(schema, records, label, progress)
    importer = {"cases": _CaseImporter, "responses": _ResponseImporter, "theobert": _TheoBertImporter}[kind]
    job = importer(label)
    errors.extend(job.resolve(rows))
    if errors:
        logger.info("import of %s rejected: %d error(s)", label, len(errors))
        raise ImportFailed(errors)
    report = ImportReport(kind=kind, file=label, rows=len(rows))
    with transaction.atomic():
        job.write(rows, report, progress)
        if dry_run:
            transaction.set_rollback(True)
    logger.info("imported %s", report)
    return report


def _validate(
    schema: Schema, records: list[tuple[int, dict]], label: str, progress: bool | None
) -> tuple[list[tuple[int, dict]], list[RowError]]:
    errors: list[RowError] = []
    rows: list[tuple[int, dict]] = []
    seen: dict[tuple, int] = {}
    for line, record in _progress(records, total=len(records), desc=f"validating {label}", show=progress):
        clean, problems = schema.clean(record)
        errors.extend(RowError(label, line, f, m) for f, m in problems)
        if problems:
            continue
        key = tuple(clean[k] for k in schema.key)
        if key in seen:
            errors.append(
                RowError(label, line, schema.key[0], f"duplicate of the record on line {seen[key]}")
            )
            continue
        seen[key] = line
        rows.append((line, clean))
    return rows, errors


def _diff(obj: Any, values: dict) -> bool:
    """Set changed attributes on obj; True when anything changed."""
    changed = False
    for attr, value in values.items():
        if getattr(obj, attr) != value:
            setattr(obj, attr, value)
            changed = True
    return changed


def _chunks(values: list, size: int = BATCH) -> Iterator[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class _CaseImporter:
    def __init__(self, label: str) -> None:
        self.label = label
        self.traditions: dict[str, Tradition] = {}

    def resolve(self, rows: list[tuple[int, dict]]) -> list[RowError]:
        self.traditions = {t.key: t for t in Tradition.objects.all()}
        return [
            RowError(self.label, line, "tradition", f"unknown tradition {row['tradition']!r}; expected one of "
                     f"{', '.join(sorted(self.traditions))} or empty")
            for line, row in rows
            if row["tradition"] and row["tradition"] not in self.traditions
        ]

    def write(self, rows: list[tuple[int, dict]], report: ImportReport, progress: bool | None) -> None:
        ids = [row["external_id"] for _, row in rows]
        existing: dict[str, TestCase] = {}
        for chunk in _chunks(ids):
            existing.update({c.external_id: c for c in TestCase.objects.filter(external_id__in=chunk)})
        to_create, to_update = [], []
        for _, row in _progress(rows, total=len(rows), desc=f"writing {self.label}", show=progress):
            values = dict(row)
            tradition = values.pop("tradition")
            values["tradition_id"] = self.traditions[tradition].pk if tradition else None
            case = existing.get(values["external_id"])
            if case is None:
                to_create.append(TestCase(**values))
            elif _diff(case, values):
                to_update.append(case)
        fields = [f for f in SCHEMAS["cases"].names if f not in ("external_id", "tradition")] + ["tradition"]
        TestCase.objects.bulk_create(to_create, batch_size=BATCH)
        for case in to_update:  # bulk_update skips auto_now; keep updated_at honest
            case.updated_at = timezone.now()
        TestCase.objects.bulk_update(to_update, fields + ["updated_at"], batch_size=BATCH)
        report.created, report.updated = len(to_create), len(to_update)
        report.unchanged = len(rows) - report.created - report.updated


class _ResponseImporter:
    def __init__(self, label: str) -> None:
        self.label = label
        self.cases: dict[str, int] = {}
        self.models: dict[str, EvaluatedModel] = {}
        self.new_models: dict[str, EvaluatedModel] = {}

    def resolve(self, rows: list[tuple[int, dict]]) -> list[RowError]:
        errors: list[RowError] = []
        wanted = sorted({row["case"] for _, row in rows})
        for chunk in _chunks(wanted):
            self.cases.update(dict(TestCase.objects.filter(external_id__in=chunk).values_list("external_id", "pk")))
        names = {row["model"] for _, row in rows}
        self.models = {m.name: m for m in EvaluatedModel.objects.filter(name__in=names)}
        for line, row in rows:
            if row["case"] not in self.cases:
                errors.append(RowError(self.label, line, "case", f"no test case with external_id {row['case']!r}"))
            name = row["model"]
            known = self.models.get(name) or self.new_models.get(name)
            if known is None:
                if not row["provider"] or not row["family"]:
                    field = "provider" if not row["provider"] else "family"
                    errors.append(RowError(self.label, line, field, f"model {name!r} is new: give its provider and family"))
                    continue
                self.new_models[name] = EvaluatedModel(name=name, provider=row["provider"], family=row["family"].lower())
            else:
                for field in ("provider", "family"):
                    given = row[field].lower() if field == "family" else row[field]
                    if given and given != getattr(known, field):
                        errors.append(RowError(self.label, line, field,
                                               f"{given!r} disagrees with the {field} already recorded for {name!r}"))
        return errors

    def write(self, rows: list[tuple[int, dict]], report: ImportReport, progress: bool | None) -> None:
        for model in self.new_models.values():
            model.save()
            self.models[model.name] = model
        case_ids = sorted({self.cases[row["case"]] for _, row in rows})
        model_ids = [m.pk for m in self.models.values()]
        existing: dict[tuple[int, int, str], ModelResponse] = {}
        for chunk in _chunks(case_ids):
            for response in ModelResponse.objects.filter(test_case_id__in=chunk, model_id__in=model_ids):
                existing[(response.test_case_id, response.model_id, response.run_label)] = response
        to_create, to_update = [], []
        fields = ["text", "temperature", "max_tokens", "system_prompt", "settings", "prompt_tokens", "completion_tokens"]
        for _, row in _progress(rows, total=len(rows), desc=f"writing {self.label}", show=progress):
            key = (self.cases[row["case"]], self.models[row["model"]].pk, row["run_label"])
            values = {f: row[f] for f in fields}
            response = existing.get(key)
            if response is None:
                to_create.append(ModelResponse(test_case_id=key[0], model_id=key[1], run_label=key[2], **values))
            elif _diff(response, values):
                to_update.append(response)
        ModelResponse.objects.bulk_create(to_create, batch_size=BATCH)
        ModelResponse.objects.bulk_update(to_update, fields, batch_size=BATCH)
        report.created, report.updated = len(to_create), len(to_update)
        report.unchanged = len(rows) - report.created - report.updated


class _TheoBertImporter:
    def __init__(self, label: str) -> None:
        self.label = label

    def resolve(self, rows: list[tuple[int, dict]]) -> list[RowError]:
        return []

    def write(self, rows: list[tuple[int, dict]], report: ImportReport, progress: bool | None) -> None:
        existing = {c.case_id: c for c in TheoBertCase.objects.filter(case_id__in=[r["id"] for _, r in rows])}
        to_create, to_update = [], []
        fields = [f for f in SCHEMAS["theobert"].names if f != "id"]
        for _, row in rows:
            values = {f: row[f] for f in fields}
            case = existing.get(row["id"])
            if case is None:
                to_create.append(TheoBertCase(case_id=row["id"], **values))
            elif _diff(case, values):
                to_update.append(case)
        TheoBertCase.objects.bulk_create(to_create, batch_size=BATCH)
        TheoBertCase.objects.bulk_update(to_update, fields, batch_size=BATCH)
        report.created, report.updated = len(to_create), len(to_update)
        report.unchanged = len(rows) - report.created - report.updated
