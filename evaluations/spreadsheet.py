"""CSV cells that a spreadsheet will not run as formulas (OWASP "CSV Injection"), and the way back.

Every CSV the application writes passes its cells through `csv_cell_protect`; every CSV importer passes
them through `csv_cell_unprotect`, so export → import still round-trips byte for byte.

The rule (OWASP, https://owasp.org/www-community/attacks/CSV_Injection): a cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with an apostrophe, which spreadsheets
read as "this cell is text" and do not display. Two refinements:

- **Numbers stay numbers.** A cell that is a plain decimal number (``-0.25``, ``+3``, ``-1.5e-3``) is left
  alone: statistics CSVs are full of negative values, a number cannot be a formula, and an apostrophe
  would turn it into text in every spreadsheet and break every reader that parses it as a number.
- **Apostrophes are escaped too, when needed.** A cell whose text really begins with an apostrophe that
  the importer would otherwise strip (``'=x``) gets one more (``''=x``), so `csv_cell_unprotect`
  is the exact inverse of `csv_cell_protect` for every string.

Pure Python, no Django: usable from any layer.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _needs_escape(text: str) -> bool:
    if not text:
        return False
    if text[0] in FORMULA_PREFIXES:
        return _NUMBER.fullmatch(text) is None
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


def csv_dict_protect(row: Mapping[str, Any]) -> dict[str, Any]:
    """`csv_cell_protect` over a record's values (for `csv.DictWriter.writerow`)."""
    return {key: csv_cell_protect(cell) for key, cell in row.items()}


def csv_row_unprotect(row: Iterable[str]) -> list[str]:
    """`csv_cell_unprotect` over a row read by `csv.reader`."""
    return [csv_cell_unprotect(cell) for cell in row]
