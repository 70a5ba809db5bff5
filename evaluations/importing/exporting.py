"""Deterministic exports in the import formats: export → import → export gives the same bytes.

Held-out test cases, and responses to them, are left out unless the caller explicitly includes them
(only the management command run by an operator can ask for that).
"""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..models import ModelResponse, TestCase, TheoBertCase, Visibility
from ..spreadsheet import csv_writer
from .readers import format_for
from .schemas import SCHEMAS


def _number(value: Decimal | None) -> float | int | None:
    if value is None:
        return None
    normalized = value.normalize()
    return int(normalized) if normalized == normalized.to_integral_value() else float(normalized)


def _case_records(queryset: Any, include_held_out: bool) -> Iterator[dict]:
    qs = queryset if queryset is not None else TestCase.objects.all()
    if not include_held_out:
        qs = qs.filter(visibility=Visibility.PUBLIC)
    for case in qs.select_related("tradition", "source_case").order_by("external_id"):
        yield {
            "external_id": case.external_id,
            "dimension": case.dimension,
            "difficulty": case.difficulty,
            "tradition": case.tradition.key if case.tradition else None,
            "question_type": case.question_type,
            "visibility": case.visibility,
            "is_active": case.is_active,
            "prompt": case.prompt,
            "reference_answer": case.reference_answer,
            "version": case.version,
            "language": case.language,
            "source_case": case.source_case.external_id if case.source_case else "",
            "translator": case.translator,
            "translation_method": case.translation_method,
            "verified_by": case.verified_by,
        }


def response_records(queryset: Any, include_held_out: bool) -> Iterator[dict]:
    qs = queryset if queryset is not None else ModelResponse.objects.all()
    if not include_held_out:
        qs = qs.filter(test_case__visibility=Visibility.PUBLIC)
    qs = qs.select_related("test_case", "model", "condition").order_by(
        "test_case__external_id", "model__name", "run_label", "condition__name", "repetition")
    for response in qs.iterator(chunk_size=2000):
        yield {
            "case": response.test_case.external_id,
            "model": response.model.name,
            "provider": response.model.provider,
            "family": response.model.family,
            "run_label": response.run_label,
            "condition": response.condition.name,
            "repetition": response.repetition,
            "text": response.text,
            "temperature": _number(response.temperature),
            "max_tokens": response.max_tokens,
            "system_prompt": response.system_prompt,
            "settings": response.settings,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "language": response.asked_language,
        }


def _theobert_records(queryset: Any, include_held_out: bool) -> Iterator[dict]:
    qs = queryset if queryset is not None else TheoBertCase.objects.all()
    for case in qs.order_by("case_id"):
        yield {
            "id": case.case_id,
            **{name: getattr(case, name) for name in SCHEMAS["theobert"].names if name != "id"},
        }


SOURCES = {"cases": _case_records, "responses": response_records, "theobert": _theobert_records}


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def export_records(*, kind: str, fmt: str, queryset: Any = None, include_held_out: bool = False) -> Iterator[str]:
    """Yield the export text of `kind` in `fmt` (json, jsonl or csv), piece by piece."""
    records = SOURCES[kind](queryset, include_held_out)
    if fmt == "jsonl":
        for record in records:
            yield json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n"
    elif fmt == "json":
        first = True
        yield "["
        for record in records:
            body = json.dumps(record, ensure_ascii=False, indent=2)
            yield ("\n" if first else ",\n") + "\n".join("  " + line for line in body.splitlines())
            first = False
        yield "]\n" if first else "\n]\n"
    elif fmt == "csv":
        names = SCHEMAS[kind].names
        buffer = io.StringIO()
        writer = csv_writer(buffer)
        writer.writerow(names)
        for record in records:
            writer.writerow([_csv_cell(record[n]) for n in names])
            if buffer.tell() > 1 << 16:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()
    else:
        raise ValueError(f"unknown export format {fmt!r}; use json, jsonl or csv")


def export_to_path(*, kind: str, path: str | Path, fmt: str | None = None, include_held_out: bool = False) -> int:
    """Write an export file; returns the number of bytes written."""
    fmt = format_for(path, fmt)
    written = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for piece in export_records(kind=kind, fmt=fmt, include_held_out=include_held_out):
            handle.write(piece)
            written += len(piece.encode("utf-8"))
    return written
