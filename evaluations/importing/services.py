"""Atomic, idempotent imports in two streaming passes.

Pass 1 parses and validates every record, keeping only keys and references, and reports every
problem at once (file, line, field). Only when the whole file is clean does pass 2 parse it again
and upsert by external id, batch by batch, inside one transaction. Memory stays bounded by the
batch size rather than the file size.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from tqdm import tqdm

from ..methodology import STANDARD_CONDITION_NAME
from ..models import EvaluatedModel, GenerationCondition, ModelResponse, TestCase, TheoBertCase, Tradition
from ..models.conditions import standard_condition_id
from .errors import ImportFailed, RowError
from .readers import Item, check_readable, format_for, read_records
from .schemas import SCHEMAS, Schema

logger = logging.getLogger(__name__)

PROGRESS_BYTES = 1 << 20  # files above 1 MB get a progress bar unless told otherwise
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
    _check_kind(kind)
    label = name or str(path)
    fmt = format_for(name or path, fmt)
    check_readable(path, label)
    show = os.path.getsize(path) >= PROGRESS_BYTES if progress is None else progress
    return _import(kind=kind, label=label, read=lambda: read_records(path, fmt=fmt, label=label), dry_run=dry_run,
                   show=show)


@transaction.atomic
def import_files(
    *, paths: Sequence[str | Path], kind: str, fmt: str | None = None, dry_run: bool = False,
    progress: bool | None = None,
) -> list[ImportReport]:
    """Import several files of `kind` in one transaction: any bad row in any file and nothing is written; raises
    ImportFailed with the errors of every file."""
    reports: list[ImportReport] = []
    errors: list[RowError] = []
    for path in paths:
        try:
            reports.append(import_file(path=path, kind=kind, fmt=fmt, dry_run=dry_run, progress=progress))
        except ImportFailed as exc:
            errors.extend(exc.errors)
    if errors:
        raise ImportFailed(errors)
    return reports


def import_records(*, records: Sequence[Any], kind: str, label: str = "request", dry_run: bool = False) -> ImportReport:
    """Import records given in memory (the API's bulk POST): the same checks and writes as a file, where
    "line" is the record's position (1, 2, …); raises ImportFailed and writes nothing on any error."""
    _check_kind(kind)

    def read() -> Iterator[Item]:
        for position, record in enumerate(records, start=1):
            if isinstance(record, dict):
                yield position, record
            else:
                yield position, RowError(label, position, "", "each record must be an object")

    return _import(kind=kind, label=label, read=read, dry_run=dry_run, show=False)


def _check_kind(kind: str) -> None:
    if kind not in SCHEMAS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(SCHEMAS)}")


def _import(*, kind: str, label: str, read: Callable[[], Iterator[Item]], dry_run: bool, show: bool) -> ImportReport:
    """Both passes over `read()` (called once per pass): check everything, then write everything or nothing."""
    schema = SCHEMAS[kind]
    job = _IMPORTERS[kind](label)

    errors: list[RowError] = []
    seen: dict[tuple, int] = {}
    for line, clean in _clean(schema, read(), label, errors, desc=f"checking {label}", show=show):
        key = tuple(clean[k] for k in schema.key)
        if key in seen:
            errors.append(RowError(label, line, schema.key[0], f"duplicate of the record on line {seen[key]}"))
            continue
        seen[key] = line
        job.observe(line, clean)
    errors.extend(job.resolve())
    if errors:
        logger.info("import of %s rejected: %d error(s)", label, len(errors))
        raise ImportFailed(errors)

    report = ImportReport(kind=kind, file=label, rows=len(seen))
    with transaction.atomic():
        job.prepare()
        batch: list[dict] = []
        for _, clean in _clean(schema, read(), label, errors, desc=f"writing {label}", show=show):
            batch.append(clean)
            if len(batch) == BATCH:
                job.write(batch, report)
                batch = []
        if batch:
            job.write(batch, report)
        job.finish(report)
        if errors:  # the file changed between the passes
            raise ImportFailed(errors)
        if dry_run:
            transaction.set_rollback(True)
    report.unchanged = report.rows - report.created - report.updated
    logger.info("imported %s", report)
    return report


def _clean(
    schema: Schema, items: Iterator[Item], label: str, errors: list[RowError], *, desc: str, show: bool
) -> Iterator[tuple[int, dict]]:
    """Parsed, validated records; problems go to `errors`."""
    for line, record in tqdm(items, desc=desc, unit=" rows", disable=not show, leave=False):
        if isinstance(record, RowError):
            errors.append(record)
            continue
        clean, problems = schema.clean(record)
        if problems:
            errors.extend(RowError(label, line, field, message) for field, message in problems)
            continue
        yield line, clean


def _changed(obj: Any, values: dict) -> bool:
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


class _Importer:
    """Per-kind rules: what to remember in pass 1, which references to check, how to upsert a batch."""

    def __init__(self, label: str) -> None:
        self.label = label

    def observe(self, line: int, row: dict) -> None:
        pass

    def resolve(self) -> list[RowError]:
        return []

    def prepare(self) -> None:
        pass

    def write(self, rows: list[dict], report: ImportReport) -> None:
        raise NotImplementedError

    def finish(self, report: ImportReport) -> None:
        """After the last batch, inside the transaction: anything a batch had to leave for later."""


class _CaseImporter(_Importer):
    fields = [f for f in SCHEMAS["cases"].names if f not in ("external_id", "tradition", "source_case")] + [
        "tradition", "source_case"]

    def __init__(self, label: str) -> None:
        super().__init__(label)
        self.tradition_lines: list[tuple[int, str]] = []
        self.traditions: dict[str, int] = {}
        self.file_languages: dict[str, str] = {}  # external_id → language, every case in the file
        self.source_lines: list[tuple[int, str, str]] = []  # (line, language, source external_id)
        self.held: list[dict] = []  # translations whose source is created later in this import

    def observe(self, line: int, row: dict) -> None:
        if row["tradition"]:
            self.tradition_lines.append((line, row["tradition"]))
        self.file_languages[row["external_id"]] = row["language"]
        if row["source_case"]:
            self.source_lines.append((line, row["language"], row["source_case"]))

    def resolve(self) -> list[RowError]:
        self.traditions = dict(Tradition.objects.values_list("key", "pk"))
        known = ", ".join(self.traditions)
        errors = [
            RowError(self.label, line, "tradition", f"unknown tradition {key!r}; expected one of {known} or empty")
            for line, key in self.tradition_lines
            if key not in self.traditions
        ]
        stored: dict[str, str] = {}
        outside = sorted({source for _, _, source in self.source_lines if source not in self.file_languages})
        for chunk in _chunks(outside):
            stored.update(TestCase.objects.filter(external_id__in=chunk).values_list("external_id", "language"))
        for line, language, source in self.source_lines:
            source_language = self.file_languages.get(source, stored.get(source))
            if source_language is None:
                errors.append(RowError(self.label, line, "source_case",
                                       f"no test case with external_id {source!r} (in this file or already imported)"))
            elif source_language.split("-")[0] == language.split("-")[0]:
                errors.append(RowError(self.label, line, "source_case",
                                       f"the source case {source!r} is in {source_language!r} too: a translation's "
                                       f"source is in another language (check the language column)"))
        self.source_lines = []
        return errors

    def write(self, rows: list[dict], report: ImportReport) -> None:
        sources = dict(TestCase.objects.filter(external_id__in={r["source_case"] for r in rows if r["source_case"]})
                       .values_list("external_id", "pk"))
        ready = []
        for row in rows:
            if row["source_case"] and row["source_case"] not in sources:
                self.held.append(row)  # its source is further on in the file: written in finish()
            else:
                ready.append(row)
        self._write(ready, sources, report)

    def finish(self, report: ImportReport) -> None:
        """The held translations, each once its source exists (a chain of translations takes several rounds)."""
        while self.held:
            sources = dict(TestCase.objects.filter(external_id__in={r["source_case"] for r in self.held})
                           .values_list("external_id", "pk"))
            ready = [r for r in self.held if r["source_case"] in sources]
            if not ready:  # resolve() found every source, so only a cycle of translations is left
                raise ImportFailed([RowError(self.label, 0, "source_case",
                                             "these cases name each other as sources: "
                                             + ", ".join(sorted(r["external_id"] for r in self.held)))])
            self.held = [r for r in self.held if r["source_case"] not in sources]
            self._write(ready, sources, report)

    def _write(self, rows: list[dict], sources: dict[str, int], report: ImportReport) -> None:
        existing = {c.external_id: c for c in TestCase.objects.filter(external_id__in=[r["external_id"] for r in rows])}
        to_create, to_update = [], []
        for row in rows:
            values = dict(row)
            tradition = values.pop("tradition")
            values["tradition_id"] = self.traditions[tradition] if tradition else None
            source = values.pop("source_case")
            values["source_case_id"] = sources[source] if source else None
            case = existing.get(values["external_id"])
            if case is None:
                to_create.append(TestCase(**values))
            elif _changed(case, values):
                case.updated_at = timezone.now()  # bulk_update does not apply auto_now
                to_update.append(case)
        TestCase.objects.bulk_create(to_create)
        TestCase.objects.bulk_update(to_update, self.fields + ["updated_at"])
        report.created += len(to_create)
        report.updated += len(to_update)


class _ResponseImporter(_Importer):
    fields = ["text", "temperature", "max_tokens", "system_prompt", "settings", "prompt_tokens", "completion_tokens",
              "language"]

    def __init__(self, label: str) -> None:
        super().__init__(label)
        self.refs: list[tuple[int, str, str, str, str]] = []
        self.cases: dict[str, int] = {}
        self.models: dict[str, EvaluatedModel] = {}
        self.new_models: dict[str, EvaluatedModel] = {}
        self.condition_lines: dict[str, int] = {}  # condition name → first line naming it
        self.conditions: dict[str, int] = {}
        self.condition_languages: dict[str, str] = {}
        self.language_lines: list[tuple[int, str, str, str]] = []  # (line, case, condition, language given)

    def observe(self, line: int, row: dict) -> None:
        self.refs.append((line, row["case"], row["model"], row["provider"], row["family"].lower()))
        self.condition_lines.setdefault(row["condition"], line)
        if row["language"]:
            self.language_lines.append((line, row["case"], row["condition"], row["language"]))

    def _resolve_conditions(self) -> list[RowError]:
        """Condition names → ids; "standard" is the standard condition whatever it is called now."""
        self.conditions = dict(GenerationCondition.objects.filter(name__in=list(self.condition_lines))
                               .values_list("name", "pk"))
        if STANDARD_CONDITION_NAME in self.condition_lines and STANDARD_CONDITION_NAME not in self.conditions:
            self.conditions[STANDARD_CONDITION_NAME] = standard_condition_id()
        languages = dict(GenerationCondition.objects.filter(pk__in=self.conditions.values()).values_list("pk", "language"))
        self.condition_languages = {name: languages[pk] for name, pk in self.conditions.items()}
        missing = [(line, name) for name, line in self.condition_lines.items() if name not in self.conditions]
        if not missing:
            return []
        known = ", ".join(GenerationCondition.objects.values_list("name", flat=True)) or "none"
        return [RowError(self.label, line, "condition",
                         f"no generation condition named {name!r} (known: {known}); create it first")
                for line, name in missing]

    def resolve(self) -> list[RowError]:
        errors: list[RowError] = self._resolve_conditions()
        case_languages: dict[str, str] = {}
        for chunk in _chunks(sorted({ref[1] for ref in self.refs})):
            for external_id, pk, language in TestCase.objects.filter(external_id__in=chunk).values_list(
                    "external_id", "pk", "language"):
                self.cases[external_id], case_languages[external_id] = pk, language
        for line, case, condition, language in self.language_lines:
            asked = {self.condition_languages.get(condition), case_languages.get(case)} - {None}
            if asked and language not in asked:
                errors.append(RowError(self.label, line, "language", (
                    f"{language!r} is neither the generation condition's language "
                    f"({self.condition_languages.get(condition, '?')!r}) nor the case's "
                    f"({case_languages.get(case, '?')!r}): a response in one language claiming another")))
        self.language_lines = []
        self.models = {m.name: m for m in EvaluatedModel.objects.filter(name__in={ref[2] for ref in self.refs})}
        for line, case, name, provider, family in self.refs:
            if case not in self.cases:
                errors.append(RowError(self.label, line, "case", f"no test case with external_id {case!r}"))
            known = self.models.get(name) or self.new_models.get(name)
            if known is None:
                if not provider or not family:
                    field = "provider" if not provider else "family"
                    errors.append(RowError(self.label, line, field, f"model {name!r} is new: give its provider and family"))
                    continue
                self.new_models[name] = EvaluatedModel(name=name, provider=provider, family=family)
                continue
            for field, given in (("provider", provider), ("family", family)):
                if given and given != getattr(known, field):
                    errors.append(RowError(
                        self.label, line, field, f"{given!r} disagrees with the {field} already recorded for {name!r}"
                    ))
        self.refs = []
        return errors

    def prepare(self) -> None:
        for model in self.new_models.values():
            model.save()
            self.models[model.name] = model

    def write(self, rows: list[dict], report: ImportReport) -> None:
        keys = [(self.cases[r["case"]], self.models[r["model"]].pk, r["run_label"], self.conditions[r["condition"]],
                 r["repetition"]) for r in rows]
        existing = {
            (r.test_case_id, r.model_id, r.run_label, r.condition_id, r.repetition): r
            for r in ModelResponse.objects.filter(
                test_case_id__in={k[0] for k in keys}, model_id__in={k[1] for k in keys}
            )
        }
        to_create, to_update = [], []
        for key, row in zip(keys, rows, strict=True):
            values = {f: row[f] for f in self.fields}
            values["language"] = row["language"] or self.condition_languages[row["condition"]]
            response = existing.get(key)
            if response is None:
                to_create.append(ModelResponse(test_case_id=key[0], model_id=key[1], run_label=key[2],
                                               condition_id=key[3], repetition=key[4], **values))
            elif _changed(response, values):
                to_update.append(response)
        ModelResponse.objects.bulk_create(to_create)
        ModelResponse.objects.bulk_update(to_update, self.fields)
        report.created += len(to_create)
        report.updated += len(to_update)


class _TheoBertImporter(_Importer):
    fields = [f for f in SCHEMAS["theobert"].names if f != "id"]

    def write(self, rows: list[dict], report: ImportReport) -> None:
        existing = {c.case_id: c for c in TheoBertCase.objects.filter(case_id__in=[r["id"] for r in rows])}
        to_create, to_update = [], []
        for row in rows:
            values = {f: row[f] for f in self.fields}
            case = existing.get(row["id"])
            if case is None:
                to_create.append(TheoBertCase(case_id=row["id"], **values))
            elif _changed(case, values):
                to_update.append(case)
        TheoBertCase.objects.bulk_create(to_create)
        TheoBertCase.objects.bulk_update(to_update, self.fields)
        report.created += len(to_create)
        report.updated += len(to_update)


_IMPORTERS: dict[str, type[_Importer]] = {
    "cases": _CaseImporter, "responses": _ResponseImporter, "theobert": _TheoBertImporter,
}
