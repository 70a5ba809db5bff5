"""Read JSON, JSONL and CSV files into (line number, record) pairs."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from .errors import ImportFailed, RowError

FORMATS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}

Record = tuple[int, dict]


def format_for(path: str | Path, fmt: str | None = None) -> str:
    """The file format, from an explicit name or the file's suffix."""
    if fmt:
        if fmt not in {"json", "jsonl", "csv"}:
            raise ImportFailed([RowError(str(path), 0, "", f"unknown format {fmt!r}; use json, jsonl or csv")])
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ImportFailed(
            [RowError(str(path), 0, "", f"cannot tell the format from the suffix {suffix!r}; use .json, .jsonl or .csv")]
        )
    return FORMATS[suffix]


def read_records(path: str | Path, *, fmt: str | None = None, name: str | None = None) -> list[Record]:
    """Parse a whole file; a syntax error raises ImportFailed naming the line."""
    label = name or str(path)
    fmt = format_for(name or path, fmt)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFailed([RowError(label, 0, "", f"cannot read file: {exc.strerror}")]) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportFailed([RowError(label, line, "", "file is not valid UTF-8")]) from exc
    if not text.strip():
        raise ImportFailed([RowError(label, 0, "", "file is empty")])
    reader = {"json": _read_json, "jsonl": _read_jsonl, "csv": _read_csv}[fmt]
    return list(reader(text, label))


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _read_json(text: str, label: str) -> Iterator[Record]:
    """A top-level JSON array of objects; each record's line is where its object starts."""
    decoder = json.JSONDecoder()
    start = _skip_ws(text, 0)
    if start >= len(text) or text[start] != "[":
        raise ImportFailed([RowError(label, _line_of(text, start), "", "expected a JSON array of records")])
    yield from _read_json_array(text, start, label, decoder)


def _read_json_array(text: str, start: int, label: str, decoder: json.JSONDecoder) -> Iterator[Record]:
    index = _skip_ws(text, start + 1)
    if index < len(text) and text[index] == "]":
        return
    while True:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise ImportFailed([RowError(label, exc.lineno, "", f"invalid JSON: {exc.msg}")]) from exc
        line = _line_of(text, index)
        if not isinstance(value, dict):
            raise ImportFailed([RowError(label, line, "", "each record must be a JSON object")])
        yield line, value
        index = _skip_ws(text, end)
        if index < len(text) and text[index] == ",":
            index = _skip_ws(text, index + 1)
            continue
        if index < len(text) and text[index] == "]":
            return
        raise ImportFailed([RowError(label, _line_of(text, index), "", "invalid JSON: expected ',' or ']'")])


def _read_jsonl(text: str, label: str) -> Iterator[Record]:
    errors: list[RowError] = []
    records: list[Record] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(RowError(label, number, "", f"invalid JSON: {exc.msg}"))
            continue
        if not isinstance(value, dict):
            errors.append(RowError(label, number, "", "each line must be a JSON object"))
            continue
        records.append((number, value))
    if errors:
        raise ImportFailed(errors)
    yield from records


def _read_csv(text: str, label: str) -> Iterator[Record]:
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        if not reader.fieldnames:
            raise ImportFailed([RowError(label, 1, "", "CSV file has no header row")])
        duplicates = {n for n in reader.fieldnames if reader.fieldnames.count(n) > 1}
        if duplicates:
            raise ImportFailed([RowError(label, 1, ", ".join(sorted(duplicates)), "column appears twice in the header")])
        start = reader.line_num + 1
        for row in reader:
            if None in row:  # more cells than header columns
                raise ImportFailed([RowError(label, start, "", "row has more cells than the header")])
            yield start, {k: v for k, v in row.items()}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ImportFailed([RowError(label, reader.line_num, "", f"invalid CSV: {exc}")]) from exc
