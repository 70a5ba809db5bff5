"""Stream JSON, JSONL and CSV files as (line number, record) pairs.

Readers yield a RowError in place of a record when a line cannot be parsed. JSONL and CSV are read
line by line, so a large file is never held in memory whole; a JSON array is decoded object by
object from the text.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

from ..spreadsheet import ESCAPE, csv_row_unprotect
from .errors import ImportFailed, RowError

FORMATS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}

Item = tuple[int, "dict | RowError"]


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


def check_readable(path: str | Path, label: str) -> None:
    """Fail early, with one clear line, on a missing, empty or non-UTF-8 file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as exc:
        raise ImportFailed([RowError(label, 0, "", f"cannot read file: {exc.strerror}")]) from exc
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n"):
        raise ImportFailed([RowError(label, 0, "", "file is empty")])


def read_records(path: str | Path, *, fmt: str, label: str) -> Iterator[Item]:
    """Yield (line, record) or (line, RowError) for every record of the file."""
    reader = {"json": _read_json, "jsonl": _read_jsonl, "csv": _read_csv}[fmt]
    try:
        yield from reader(Path(path), label)
    except UnicodeDecodeError as exc:
        yield 0, RowError(label, 0, "", f"file is not valid UTF-8 (byte {exc.start} of a chunk)")


NUL_MESSAGE = "contains a NUL character (U+0000), which no text field can hold; remove it"


def nul_field(value: object, path: str = "") -> str | None:
    """The first field (a dotted path; "" for the value itself) whose key or text holds a NUL character, or None.
    PostgreSQL's text columns cannot store U+0000: such a value is refused with its line and field, never sent."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return here.replace("\x00", "\\0")
            found = nul_field(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = nul_field(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _nul_checked(line: int, record: dict, label: str) -> dict | RowError:
    field = nul_field(record)
    return record if field is None else RowError(label, line, field, NUL_MESSAGE)


def _line_of(text: str, index: int, cache: list[int]) -> int:
    # Incremental newline count: records come in order, so count only the new stretch.
    last_index, last_line = cache
    line = last_line + text.count("\n", last_index, index)
    cache[:] = [index, line]
    return line


def _skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _read_json(path: Path, label: str) -> Iterator[Item]:
    """A top-level JSON array of objects; each record's line is where its object starts."""
    text = path.read_text(encoding="utf-8-sig")
    decoder = json.JSONDecoder()
    cache = [0, 1]
    index = _skip_ws(text, 0)
    if index >= len(text) or text[index] != "[":
        line = _line_of(text, index, cache)
        yield line, RowError(label, line, "", "expected a JSON array of records")
        return
    index = _skip_ws(text, index + 1)
    if index < len(text) and text[index] == "]":
        return
    while True:
        line = _line_of(text, index, cache)
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            yield exc.lineno, RowError(label, exc.lineno, "", f"invalid JSON at column {exc.colno}: {exc.msg}",
                                       exc.colno)
            return
        yield line, (_nul_checked(line, value, label) if isinstance(value, dict)
                     else RowError(label, line, "", "each record must be a JSON object"))
        index = _skip_ws(text, end)
        if index < len(text) and text[index] == ",":
            index = _skip_ws(text, index + 1)
            continue
        if index < len(text) and text[index] == "]" and _skip_ws(text, index + 1) == len(text):
            return
        line = _line_of(text, index, cache)
        column = index - text.rfind("\n", 0, index)
        yield line, RowError(label, line, "", f"invalid JSON at column {column}: expected ',' or ']' after a record",
                             column)
        return


def _read_jsonl(path: Path, label: str) -> Iterator[Item]:
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line.rstrip("\r\n"))  # a column on this line, not on "line 2"
            except json.JSONDecodeError as exc:
                # json.loads counts from the start of this line's text: its line is always 1, its column ours.
                yield number, RowError(label, number, "", f"invalid JSON at column {exc.colno}: {exc.msg}", exc.colno)
                continue
            yield number, (_nul_checked(number, value, label) if isinstance(value, dict)
                           else RowError(label, number, "", "each line must be a JSON object"))


def _read_csv(path: Path, label: str) -> Iterator[Item]:
    cells = csv_cells(path, label)
    line, header = next(cells)
    if not isinstance(header, list):
        yield line, header
        return
    for line, row in cells:
        yield line, (dict(zip(header, row, strict=True)) if isinstance(row, list) else row)


def csv_cells(path: str | Path, label: str) -> Iterator[tuple[int, list[str] | RowError]]:
    """The CSV reader's rows as lists of cells: first (1, the header) — or (line, RowError) and nothing more when the
    header is missing, has a NUL character or a column twice —, then (line, cells) for each row, its cells
    unprotected (`csv_row_unprotect`), or (line, RowError) for a row with the wrong number of cells or a NUL
    character. Blank rows are skipped; a row's line is the line it starts on. `_read_csv` is this with dicts; a
    reader of a million rows takes the lists (a dict per row costs time and memory)."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader, None)
            if not header:
                yield 1, RowError(label, 1, "", "CSV file has no header row")
                return
            if any("\x00" in n for n in header):
                yield 1, RowError(label, 1, "header", NUL_MESSAGE)
                return
            duplicates = sorted({n for n in header if header.count(n) > 1})
            if duplicates:
                yield 1, RowError(label, 1, ", ".join(duplicates), "column appears twice in the header")
                return
            yield 1, header
            width = len(header)
            start = reader.line_num + 1
            for cells in reader:
                if not any(cells):
                    start = reader.line_num + 1
                    continue
                joined = "".join(cells)  # one test of the row for the two rare cases below
                if len(cells) != width:
                    yield start, RowError(label, start, "", f"row has {len(cells)} cells; the header has {width}")
                elif "\x00" in joined:
                    column = next(n for n, c in zip(header, cells, strict=True) if "\x00" in c)
                    yield start, RowError(label, start, column, NUL_MESSAGE)
                else:
                    yield start, (csv_row_unprotect(cells) if ESCAPE in joined else cells)
                start = reader.line_num + 1
        except csv.Error as exc:
            yield reader.line_num, RowError(label, reader.line_num, "", f"invalid CSV: {exc}")
