"""Declared scales of a rating study (issue 32 part 3): infer a dimension's scale from the file, refuse values
outside it with their lines, and flag a design that cannot give an agreement statistic before anything is written.

A scale is (level, minimum, maximum, categories). The uploader declares it (page, API, command) or confirms the
one inferred here; the import stores minimum and maximum on the dimension (`StudyDimension.scale_min/max`) and
the report states them.

Inference (`scale_infer`), stated so a reader can check it:
1. A value is *implausible* for a rating when its magnitude exceeds :data:`MAX_PLAUSIBLE` (no published rating
   scale we know of runs past 0–100; `1e308` and `99999999999999999999999` are not ratings) or when it is
   negative while the negatives are fewer than :data:`NEGATIVE_SHARE` of the values or all one value (a stray
   `-5` in a 1–5 file; a bipolar −3…3 scale has several negative points and keeps them).
2. The scale is the narrowest common scale (:data:`COMMON_SCALES`: 0–1, 1–5, 0–3, 1–7, 0–10, 0–100 …) holding
   every plausible value, else the plausible values' own minimum–maximum.
3. Ordinal and nominal scales of whole numbers with at most :data:`MAX_CATEGORIES` points list them as categories
   (nominal: the codes seen).
Values outside the scale — declared or inferred — are refused, each with its line and field; nothing is written.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from .rows import KIND_CODES, Columns

MAX_PLAUSIBLE = 100.0
NEGATIVE_SHARE = 0.05
MAX_CATEGORIES = 11
COMMON_SCALES: tuple[tuple[float, float], ...] = tuple(sorted(
    [(0, 1), (1, 2), (0, 2), (1, 3), (0, 3), (1, 4), (0, 4), (1, 5), (0, 5), (1, 6), (0, 6), (1, 7), (0, 7),
     (1, 9), (1, 10), (0, 10), (-1, 1), (-2, 2), (-3, 3), (-5, 5), (1, 100), (0, 100)],
    key=lambda r: (r[1] - r[0], -r[0])))


@dataclass(frozen=True)
class Scale:
    """A dimension's scale: level of measurement, minimum, maximum and (ordinal/nominal) categories."""

    level: str
    minimum: float | None
    maximum: float | None
    categories: tuple[float, ...] = ()
    source: str = "declared"  # "declared" (by the uploader or the file) or "inferred" (from the values)

    def contains(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.categories and self.level == "nominal":
            return value in self.categories
        return ((self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum))

    def contains_each(self, values: np.ndarray) -> np.ndarray:
        """`contains` of each value, as a boolean array."""
        inside = np.isfinite(values)
        if self.categories and self.level == "nominal":
            return inside & np.isin(values, self.categories)
        if self.minimum is not None:
            inside &= values >= self.minimum
        if self.maximum is not None:
            inside &= values <= self.maximum
        return inside

    def describe(self) -> str:
        """As the preview and the command print it: 'ordinal, 1–5 (categories 1, 2, 3, 4, 5), inferred'."""
        if self.minimum is None or self.maximum is None:
            span = "no minimum or maximum"
        else:
            span = f"{self.minimum:g}–{self.maximum:g}"
        cats = f" (categories {', '.join(f'{c:g}' for c in self.categories)})" if self.categories else ""
        return f"{self.level}, {span}{cats}, {self.source}"


@dataclass
class ScaleCheck:
    """The scale of each dimension, the values refused (with lines) and the design warnings."""

    scales: dict[str, Scale] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _whole(values: Iterable[float]) -> bool:
    return all(float(v).is_integer() for v in values)


def _categories(level: str, low: float, high: float, seen: np.ndarray) -> tuple[float, ...]:
    if level == "nominal":
        distinct = np.unique(seen).tolist()
        return tuple(distinct) if len(distinct) <= MAX_CATEGORIES * 2 else ()
    if level == "ordinal" and _whole([low, high]) and high - low + 1 <= MAX_CATEGORIES:
        return tuple(float(v) for v in range(int(low), int(high) + 1))
    return ()


def scale_infer(values: Sequence[float] | np.ndarray, *, level: str) -> Scale:
    """The scale a column of ratings is most plausibly on (see the module's rule). Example:
    ``scale_infer([1, 2, 5, 1e308, -5], level="ordinal")`` is ordinal 1–5 with categories 1…5."""
    given = np.asarray(values, dtype=float)
    finite = given[np.isfinite(given)]
    negatives = finite[(finite < 0) & (np.abs(finite) <= MAX_PLAUSIBLE)]
    keep_negative = len(np.unique(negatives)) >= 2 and len(negatives) / len(finite) >= NEGATIVE_SHARE
    plausible = finite[(np.abs(finite) <= MAX_PLAUSIBLE) & ((finite >= 0) | keep_negative)]
    if not len(plausible):
        return Scale(level, None, None, (), "inferred")
    low, high = float(plausible.min()), float(plausible.max())
    for a, b in COMMON_SCALES:
        if level == "ratio" and a != 0:  # a ratio scale's zero is a true zero: it starts there
            continue
        if a <= low and high <= b:
            low, high = float(a), float(b)
            break
    return Scale(level, low, high, _categories(level, low, high, plausible), "inferred")


def scale_declared(*, level: str, minimum: float | None, maximum: float | None,
                   categories: Sequence[float] = ()) -> Scale:
    """A scale the uploader states; categories default to the whole points of an ordinal min–max scale."""
    cats = tuple(sorted(float(c) for c in categories))
    if cats and minimum is None:
        minimum = cats[0]
    if cats and maximum is None:
        maximum = cats[-1]
    if not cats and minimum is not None and maximum is not None:
        cats = _categories(level, minimum, maximum, np.empty(0)) if level == "ordinal" else ()
    return Scale(level, minimum, maximum, cats, "declared")


def scale_check(columns: Columns, *, dimensions: Sequence[str], levels: Mapping[str, str],
                declared: Mapping[str, Scale] | None = None,
                place: Callable[[int], str] | None = None) -> ScaleCheck:
    """Each dimension's scale (declared, else inferred from its rows), every value outside it as an error
    ('file:12: score: 1e+308 is outside the scale …', in row order; `place` words a row's index), and the design
    warnings (`design_warnings`). `columns` are the ratings (`rows.Columns`), `dimensions` the dimension codes' keys."""
    declared = declared or {}
    code_of = {key: code for code, key in enumerate(dimensions)}
    result = ScaleCheck()
    for key, level in levels.items():
        mine = np.flatnonzero(columns.dimension == code_of[key]) if key in code_of else np.empty(0, dtype=np.int64)
        values = columns.value[mine]
        scale = declared.get(key) or scale_infer(values, level=level)
        result.scales[key] = scale
        inside = scale.contains_each(values)
        for index in mine[~inside].tolist():
            result.errors.append(f"{place(index) if place else index}: score: {float(columns.value[index]):g} is "
                                 f"outside {key!r}'s scale ({scale.describe()}); correct the value, or declare a "
                                 "scale that holds it")
        result.warnings += design_warnings(columns, mine[inside], dimension=key)
    return result


def design_warnings(columns: Columns, rows: np.ndarray, *, dimension: str) -> list[str]:
    """What keeps a dimension's human ratings (the rows at the indices `rows` of `columns`) from giving an agreement
    statistic, and what would fix it."""
    humans = rows[columns.kind[rows] == KIND_CODES.index("human")]
    if not len(humans):
        return []
    items, raters = columns.item[humans].astype(np.int64), columns.rater[humans]
    span = int(raters.max()) + 1
    pairs = np.unique(items * span + raters)  # each (item, rater) once
    per_item = np.unique(pairs // span, return_counts=True)[1]  # the raters of each item
    warnings = []
    if per_item.max() < 2:
        warnings.append(f"{dimension!r}: each of its {len(per_item)} item(s) is rated by one human rater only, so "
                        "agreement (Krippendorff's α) cannot be computed: it compares two or more ratings of the "
                        "same item. Fix: add a second rater's ratings of at least some items (the same item "
                        "ids), or check that the item and rater columns are mapped the right way round.")
    distinct = np.unique(columns.value[humans])
    if len(distinct) == 1:
        warnings.append(f"{dimension!r}: every human rating is {float(distinct[0]):g}, one category, so agreement "
                        "is undefined (there is no variation to agree on). Fix: check the score column is the "
                        "rating, or add items the raters scored differently.")
    return warnings


def delimiter_named(path: Path, *, label: str) -> str:
    """A message when a .csv file is separated by semicolons or tabs (the importer reads commas), else ''."""
    if path.suffix.lower() != ".csv":
        return ""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return ""
    if "," in first:
        return ""
    for mark, name in ((";", "semicolon"), ("\t", "tab")):
        if mark in first:
            return (f"{label}:1: the file is {name}-separated (its header has {name}s and no commas); the importer "
                    "reads comma-separated CSV: save it as CSV with commas (in a spreadsheet: 'CSV, comma "
                    "delimited'), or as JSONL")
    return ""


class DeclaredScale(TypedDict, total=False):
    """A scale as the upload page, the command or the API states it (JSON-serialisable: kept in the session)."""

    scale_min: float | None
    scale_max: float | None
    categories: list[float]


def scales_apply(parsed: Any, *, scale: DeclaredScale | None = None) -> None:
    """Settle the scale of each dimension of an import (`importing.Parsed`): the uploader's `scale`, else the one
    the file declares (JUDGE-BENCH's worst/best, the API's declared dimension), else the inferred one; store it on
    the dimensions, add every value outside it to `parsed.errors` and the design warnings to `parsed.warnings`."""
    declared: dict[str, Scale] = {}
    for key, spec in parsed.dimensions.items():
        if scale and (scale.get("scale_min") is not None or scale.get("scale_max") is not None
                      or scale.get("categories")):
            declared[key] = scale_declared(level=spec.level, minimum=scale.get("scale_min"),
                                           maximum=scale.get("scale_max"), categories=scale.get("categories") or ())
        elif spec.scale_min is not None and spec.scale_max is not None:
            declared[key] = scale_declared(level=spec.level, minimum=spec.scale_min, maximum=spec.scale_max)
    check = scale_check(parsed.rows.columns(), dimensions=parsed.rows.dimensions.names,
                        levels={k: d.level for k, d in parsed.dimensions.items()}, declared=declared,
                        place=parsed.place_of)
    for key, found in check.scales.items():
        parsed.dimensions[key].scale_min, parsed.dimensions[key].scale_max = found.minimum, found.maximum
    parsed.scales = check.scales
    parsed.errors += check.errors
    parsed.warnings = check.warnings


def scale_option(minimum: float | None, maximum: float | None, categories: str | Sequence[float] = "") -> \
        DeclaredScale | None:
    """A declared scale from a form's or a command's fields (categories as '0,1,2' or numbers); None if empty.

    Raises ValueError naming the field for a category that is not a number or a minimum above the maximum."""
    if isinstance(categories, str):
        cats = []
        for part in (p.strip() for p in categories.split(",")):
            if not part:
                continue
            try:
                value = float(part)
            except ValueError:
                raise ValueError(f"categories: {part[:40]!r} is not a number") from None
            if not math.isfinite(value):
                raise ValueError(f"categories: {part[:40]!r} is not a finite number")
            cats.append(value)
    else:
        cats = [float(c) for c in categories]
    if minimum is not None and maximum is not None and minimum > maximum:
        raise ValueError(f"scale_max: {maximum:g} is below the minimum {minimum:g}")
    if minimum is None and maximum is None and not cats:
        return None
    return {"scale_min": minimum, "scale_max": maximum, "categories": cats}
