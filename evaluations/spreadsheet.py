"""CSV cells that a spreadsheet will not run as formulas (OWASP "CSV Injection"), and the way back.

Every CSV the application writes passes its cells through `csv_cell_protect`; every CSV importer passes
them through `csv_cell_unprotect`, so export → import still round-trips byte for byte.

The rule (OWASP, https://owasp.org/www-community/attacks/CSV_Injection): a cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return — or with ``=``, ``+``, ``-``, ``@`` after leading
whitespace (spaces, tabs, carriage returns, line feeds), which spreadsheets trim before they look — is
prefixed with an apostrophe, which spreadsheets read as "this cell is text" and do not display. Refinements:

- **Numbers stay numbers.** A cell that is a plain decimal number (``-0.25``, ``+3``, ``-1.5e-3``) is left
  alone: statistics CSVs are full of negative values, a number cannot be a formula, and an apostrophe
  would turn it into text in every spreadsheet and break every reader that parses it as a number.
- **Apostrophes are escaped too, when needed.** A cell whose text really begins with an apostrophe that
  the importer would otherwise strip (``'=x``) gets one more (``''=x``), so `csv_cell_unprotect`
  is the exact inverse of `csv_cell_protect` for every string.
- **A carriage return is always quoted.** Python's `csv.writer` with ``lineterminator="\n"`` quotes a cell
  holding a line feed but not one holding a bare carriage return, and every spreadsheet (and `csv.reader`)
  reads an unquoted ``\r`` as the end of a row: ``'\r=1+1`` became a row that starts ``=1+1``. Write through
  `csv_writer` / `csv_dict_writer`, which quote every cell of a row that holds one.

Pure Python, no Django: usable from any layer.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
FORMULA_STARTS = ("=", "+", "-", "@")  # evaluated even after leading whitespace
LEADING_WHITESPACE = " \t\r\n"
ESCAPE = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _needs_escape(text: str) -> bool:
    if not text:
        return False
    if text[0] in FORMULA_PREFIXES:
        return _NUMBER.fullmatch(text) is None
    if text[0] in LEADING_WHITESPACE:
        trimmed = text.lstrip(LEADING_WHITESPACE)
        return trimmed[:1] in FORMULA_STARTS and _NUMBER.fullmatch(trimmed) is None
    # an apostrophe the importer would take for an escape must itself be escaped
    return text[0] == ESCAPE and _needs_escape(text[1:])


def csv_cell_protect(value: Any) -> Any:
    """A cell a spreadsheet shows as text: ``"=HYPERLINK(…)"`` → ``"'=HYPERLINK(…)"``; numbers unchanged.

    Non-strings (ints, floats, None) are returned as they are: the csv module writes them as numbers.
    Example: ``csv_cell_protect("-0.25") == "-0.25"``; ``csv_cell_protect("- a list") == "'- a list"``.
    """
    if isinstance(value, str) and _needs_escape(value):
        return ESCAPE + value
    return value


def csv_cell_unprotect(value: str) -> str:
    """The inverse of `csv_cell_protect`: ``"'=x"`` → ``"=x"``; any other cell unchanged."""
    if value.startswith(ESCAPE) and _needs_escape(value[1:]):
        return value[1:]
    return value


def csv_row_protect(row: Iterable[Any]) -> list[Any]:
    """`csv_cell_protect` over a row (for `csv.writer.writerow`)."""
    return [csv_cell_protect(cell) for cell in row]


def csv_row_unprotect(row: Iterable[str]) -> list[str]:
    """`csv_cell_unprotect` over a row read by `csv.reader`."""
    return [csv_cell_unprotect(cell) for cell in row]


class _Stream(Protocol):
    def write(self, text: str, /) -> Any: ...


class SpreadsheetWriter:
    """`csv.writer` (``lineterminator="\\n"``) that protects every cell and quotes every cell of a row holding a
    carriage return (the one character `csv.writer` would otherwise leave bare). The writer of every CSV of ours."""

    def __init__(self, stream: _Stream) -> None:
        self._plain = csv.writer(stream, lineterminator="\n")
        self._quoted = csv.writer(stream, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: Iterable[Any]) -> None:
        cells = csv_row_protect(row)
        carriage_return = any(isinstance(cell, str) and "\r" in cell for cell in cells)
        (self._quoted if carriage_return else self._plain).writerow(cells)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SpreadsheetDictWriter:
    """`csv.DictWriter`'s interface over `SpreadsheetWriter`: records by `fieldnames`, missing keys blank."""

    def __init__(self, stream: _Stream, fieldnames: Sequence[str]) -> None:
        self.fieldnames = list(fieldnames)
        self._writer = SpreadsheetWriter(stream)

    def writeheader(self) -> None:
        self._writer.writerow(self.fieldnames)

    def writerow(self, record: Mapping[str, Any]) -> None:
        unknown = set(record) - set(self.fieldnames)
        if unknown:
            raise ValueError(f"record has fields not in fieldnames: {', '.join(sorted(unknown))}")
        self._writer.writerow(record.get(name, "") for name in self.fieldnames)

    def writerows(self, records: Iterable[Mapping[str, Any]]) -> None:
        for record in records:
            self.writerow(record)


def csv_writer(stream: _Stream) -> SpreadsheetWriter:
    """The CSV writer of every file we produce (see `SpreadsheetWriter`)."""
    return SpreadsheetWriter(stream)


def csv_dict_writer(stream: _Stream, fieldnames: Sequence[str]) -> SpreadsheetDictWriter:
    """The dict-record CSV writer of every file we produce (see `SpreadsheetDictWriter`)."""
    return SpreadsheetDictWriter(stream, fieldnames)
