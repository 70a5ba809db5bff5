"""What every page and API view shares when it reads a request: query-string numbers (an id, a page) parsed the one
way, so a malformed or huge value is refused here instead of overflowing the database driver (a 500). The lowest
layer with HTTP in it (beside `policy.py`), so every app's views can use it."""
from __future__ import annotations

# Query-string numbers. Ids are 64-bit (BigAutoField; SQLite's INTEGER is 64-bit too): a larger value
# overflows the database driver (a 500), so it is refused here. No list is longer than MAX_PAGE pages.
MAX_QUERY_ID = 2**63 - 1
MAX_PAGE = 100_000


def query_whole_number(raw: str | None, *, maximum: int = MAX_QUERY_ID) -> int | None:
    """A query value as a whole number 1..maximum, or None (absent, not ASCII digits, or out of range).

    ASCII only: `"²".isdigit()` is true but `int("²")` fails, and `int("١٢")` is 12.
    Example: `query_whole_number("12")` is 12; `query_whole_number("9" * 30)` and `("abc")` are None.
    """
    if not raw or not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(maximum)):
        return None
    value = int(raw)
    return value if 1 <= value <= maximum else None


def query_page(raw: str | None) -> int | None:
    """A `?page=` value: 1 when absent or not a whole number (lenient, as Django's `get_page`), None past
    MAX_PAGE (the view answers 404: no list has that many pages)."""
    if not (raw and raw.isascii() and raw.isdigit()):
        return 1
    value = int(raw) if len(raw) <= len(str(MAX_PAGE)) else MAX_PAGE + 1
    return None if value > MAX_PAGE else max(1, value)
