"""Read long-format ratings (one row per unit × rater: ``unit,rater,value``) into reliability matrices.

The header is read by the rating-file vocabulary (``stats.ratingfile``): ``item,rater,score``,
``rater,item,score`` and the other aliases are the same columns; a wrong header is one message.

Small I/O helper for ``manage.py irr`` and any script: no Django. Every problem with the file raises
:class:`LongFormatError` with one line naming the file and the line: missing column, empty file, a value
that is not a number where the level needs one, a value outside ``categories``, a repeated unit × rater.

Values. Numbers are category codes. With ``categories`` given, they are the full category set (an unused
category still counts, and anything else is an error); otherwise the categories are the values seen in
the whole file (not per group, so every group is measured on the same scale). Text values are allowed at
the nominal level (coded in sorted order) and at the ordinal level only when ``categories`` gives their
order. An empty value, ``.``, ``NA``, ``N/A``, ``NaN`` or ``null`` is a missing rating; such rows are counted.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stats.alpha import Level, check_level
from stats.matrix import FloatArray
from stats.ratingfile import HeaderError, header_columns

REQUIRED_COLUMNS = ("unit", "rater", "value")  # irr's spellings of the vocabulary's item, rater, score
IRR_COLUMNS = ("item", "rater", "score")
MISSING_TOKENS = frozenset({"", ".", "na", "n/a", "nan", "null", "none"})


class LongFormatError(ValueError):
    """A long-format ratings file cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class RatingGroup:
    """One group's ratings as a raters × units matrix of category codes (np.nan = missing).

    Raters are sorted by id; units keep the order in which the file first mentions them.
    """

    key: str | None
    unit_ids: list[str]
    rater_ids: list[str]
    matrix: FloatArray
    strata: list[str] | None


@dataclass(frozen=True)
class LongRatings:
    """All groups of a file, the numeric category codes and how to show them (numbers or text labels)."""

    source: str
    groups: list[RatingGroup]
    categories: list[float]
    category_labels: list[int | float | str]
    n_missing_rows: int


@dataclass(frozen=True)
class _Row:
    line: int
    group: str | None
    unit: str
    rater: str
    value: str
    stratum: str | None


def read_long_csv(
    path: str | Path,
    *,
    level: Level = "ordinal",
    group_by: str | None = None,
    strata_by: str | None = None,
    categories: Sequence[str] | None = None,
) -> LongRatings:
    """Read a ``unit,rater,value`` CSV (extra columns allowed) into one reliability matrix per group.

    Source: the long ("tidy") layout of rating data, pivoted to Krippendorff's (2011) raters × units matrix.
    Example: rows ``u1,A,1`` and ``u1,B,2`` → one group with matrix ``[[1.], [2.]]``.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return parse_long_csv(
                handle, source=source, level=level, group_by=group_by, strata_by=strata_by, categories=categories
            )
    except FileNotFoundError as exc:
        raise LongFormatError(f"{source}: no such file") from exc
    except IsADirectoryError as exc:
        raise LongFormatError(f"{source}: is a directory, not a CSV file") from exc
    except UnicodeDecodeError as exc:
        raise LongFormatError(f"{source}: not a UTF-8 text file ({exc.reason})") from exc


def parse_long_csv(
    lines: Iterable[str],
    *,
    source: str = "<csv>",
    level: Level = "ordinal",
    group_by: str | None = None,
    strata_by: str | None = None,
    categories: Sequence[str] | None = None,
) -> LongRatings:
    """Parse long-format CSV text (an iterable of lines) the way :func:`read_long_csv` reads a file.

    Source: as :func:`read_long_csv`. Example: ``parse_long_csv(["unit,rater,value", "u1,A,1", "u1,B,1"])``.
    """
    level = check_level(level)
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        raise LongFormatError(f"{source}, line 1: the file is empty; expected the header unit,rater,value (or item,rater,score)") from None
    except csv.Error as exc:
        raise LongFormatError(f"{source}, line 1: not valid CSV ({exc})") from None
    names = [name.strip() for name in header]
    index = _column_index(names, source, group_by, strata_by)

    rows: list[_Row] = []
    seen: dict[tuple[str | None, str, str], int] = {}
    n_missing = 0
    try:
        for raw in reader:
            line = reader.line_num
            if not raw or all(not cell.strip() for cell in raw):
                continue
            if len(raw) != len(names):
                raise LongFormatError(
                    f"{source}, line {line}: expected {len(names)} fields like the header, found {len(raw)}"
                )
            cell = {key: raw[i].strip() for key, i in index.items()}
            unit, rater = cell["unit"], cell["rater"]
            if not unit:
                raise LongFormatError(f"{source}, line {line}: empty unit")
            if not rater:
                raise LongFormatError(f"{source}, line {line}: empty rater")
            group = cell.get("group")
            key = (group, unit, rater)
            if key in seen:
                where = f" in group {group!r}" if group_by else ""
                raise LongFormatError(
                    f"{source}, line {line}: duplicate rating for unit {unit!r} by rater {rater!r}{where} "
                    f"(first given on line {seen[key]})"
                )
            seen[key] = line
            if cell["value"].lower() in MISSING_TOKENS:
                n_missing += 1
                continue
            rows.append(_Row(line, group, unit, rater, cell["value"], cell.get("stratum")))
    except csv.Error as exc:
        raise LongFormatError(f"{source}, line {reader.line_num}: not valid CSV ({exc})") from None
    if not rows:
        raise LongFormatError(f"{source}, line {reader.line_num + 1}: no ratings after the header")

    codes, cat_values, cat_labels = _code_values(rows, source, level, categories)
    groups = _build_groups(rows, codes, source, strata_by)
    return LongRatings(
        source=source, groups=groups, categories=cat_values, category_labels=cat_labels, n_missing_rows=n_missing
    )


def _column_index(names: list[str], source: str, group_by: str | None, strata_by: str | None) -> dict[str, int]:
    duplicated = sorted({n for n in names if names.count(n) > 1 and n})
    if duplicated:
        raise LongFormatError(f"{source}, line 1: column {duplicated[0]!r} appears twice in the header")
    try:
        # The shared vocabulary (unit = item, value = score …); irr's own spellings win when a file has both.
        columns = header_columns(names, required=IRR_COLUMNS, prefer=REQUIRED_COLUMNS, where=f"{source}, line 1")
    except HeaderError as exc:
        raise LongFormatError(str(exc)) from None
    index = {role: names.index(columns[canonical]) for role, canonical in zip(REQUIRED_COLUMNS, IRR_COLUMNS, strict=True)}
    for role, column in (("group", group_by), ("stratum", strata_by)):
        if column is None:
            continue
        if column not in names:
            raise LongFormatError(f"{source}, line 1: no column {column!r} to {'group' if role == 'group' else 'stratify'} by")
        if column in columns.values():
            raise LongFormatError(f"{source}, line 1: cannot {'group' if role == 'group' else 'stratify'} by {column!r}")
        index[role] = names.index(column)
    return index


def _code_values(
    rows: list[_Row], source: str, level: Level, categories: Sequence[str] | None
) -> tuple[list[float], list[float], list[int | float | str]]:
    """Turn the text values into numeric codes; return (codes per row, category codes, category labels)."""
    if categories is not None:
        tokens = [c.strip() for c in categories if c.strip()]
        if not tokens:
            raise LongFormatError(f"{source}: --categories is empty")
        numeric = [_number(t) for t in tokens]
        if all(n is not None for n in numeric):
            cat_values = sorted({float(n) for n in numeric if n is not None})
            allowed = set(cat_values)
            codes = []
            for row in rows:
                number = _number(row.value)
                if number is None:
                    raise LongFormatError(f"{source}, line {row.line}: value {row.value!r} is not a number")
                if number not in allowed:
                    raise LongFormatError(
                        f"{source}, line {row.line}: value {row.value} is outside the categories "
                        f"{', '.join(_label(v) for v in cat_values)}"
                    )
                codes.append(number)
            _check_ratio(rows, codes, source, level)
            return codes, cat_values, [_plain(v) for v in cat_values]
        if level in ("interval", "ratio"):
            raise LongFormatError(f"{source}: --categories must be numbers at the {level} level")
        if len(set(tokens)) != len(tokens):
            raise LongFormatError(f"{source}: --categories lists a category twice")
        position = {label: float(i) for i, label in enumerate(tokens)}
        codes = []
        for row in rows:
            if row.value not in position:
                raise LongFormatError(
                    f"{source}, line {row.line}: value {row.value!r} is not one of the categories {', '.join(tokens)}"
                )
            codes.append(position[row.value])
        return codes, [float(i) for i in range(len(tokens))], list(tokens)

    numbers = [_number(row.value) for row in rows]
    first_text = next((row for row, n in zip(rows, numbers, strict=True) if n is None), None)
    if first_text is None:
        codes = [float(n) for n in numbers if n is not None]
        _check_ratio(rows, codes, source, level)
        cat_values = sorted(set(codes))
        return codes, cat_values, [_plain(v) for v in cat_values]
    if level in ("interval", "ratio"):
        raise LongFormatError(
            f"{source}, line {first_text.line}: value {first_text.value!r} is not a number "
            f"(the {level} level needs numbers)"
        )
    if level == "ordinal":
        raise LongFormatError(
            f"{source}, line {first_text.line}: value {first_text.value!r} is not a number; at the ordinal "
            "level give the order of text categories with --categories"
        )
    labels = sorted({row.value for row in rows})
    position = {label: float(i) for i, label in enumerate(labels)}
    return [position[row.value] for row in rows], [float(i) for i in range(len(labels))], list(labels)


def _build_groups(rows: list[_Row], codes: list[float], source: str, strata_by: str | None) -> list[RatingGroup]:
    by_group: dict[str | None, list[tuple[_Row, float]]] = {}
    for row, code in zip(rows, codes, strict=True):
        by_group.setdefault(row.group, []).append((row, code))
    groups = []
    for key in sorted(by_group, key=lambda k: "" if k is None else k):
        members = by_group[key]
        units = list(dict.fromkeys(row.unit for row, _ in members))
        raters = sorted({row.rater for row, _ in members})
        unit_pos = {u: i for i, u in enumerate(units)}
        rater_pos = {r: i for i, r in enumerate(raters)}
        matrix = np.full((len(raters), len(units)), np.nan)
        unit_stratum: dict[str, tuple[str, int]] = {}
        for row, code in members:
            matrix[rater_pos[row.rater], unit_pos[row.unit]] = code
            if strata_by is not None:
                stratum = row.stratum or ""
                first = unit_stratum.setdefault(row.unit, (stratum, row.line))
                if first[0] != stratum:
                    raise LongFormatError(
                        f"{source}, line {row.line}: unit {row.unit!r} is in stratum {stratum!r} here but in "
                        f"{first[0]!r} on line {first[1]}; a unit must belong to one stratum"
                    )
        strata = [unit_stratum[u][0] for u in units] if strata_by is not None else None
        groups.append(RatingGroup(key=key, unit_ids=units, rater_ids=raters, matrix=matrix, strata=strata))
    return groups


def _check_ratio(rows: list[_Row], codes: list[float], source: str, level: Level) -> None:
    if level != "ratio":
        return
    for row, code in zip(rows, codes, strict=True):
        if code < 0:
            raise LongFormatError(f"{source}, line {row.line}: negative value {row.value} at the ratio level")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _label(value: float) -> str:
    return str(_plain(value))
