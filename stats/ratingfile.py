"""The rating-file vocabulary: the canonical column names of a ratings file and the aliases each accepts.

One module, pure Python, used by every reader of ratings: ``manage.py irr`` (``stats.longformat``),
``manage.py import_ratings``, the study upload page and the studies API (``calibration.studies.importing``).
A header is matched once, before any row is read; a header that lacks a required column is refused with ONE
message naming the expected and the found columns (never one error per row).

Matching ignores case, surrounding spaces, and treats spaces and hyphens as underscores (``Rater Kind`` is
``rater_kind``). Example: ``header_columns(["Rater", "item", "Score"], required=("item", "rater", "score"))``
→ ``{"item": "item", "rater": "Rater", "score": "Score"}``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

# canonical name → the names a file may use for it (the canonical name first).
COLUMNS: dict[str, tuple[str, ...]] = {
    "study": ("study", "study_name"),
    "item": ("item", "unit", "item_id", "unit_id"),
    "dimension": ("dimension", "metric", "criterion"),
    "rater": ("rater", "rater_id", "annotator", "coder"),
    "rater_kind": ("rater_kind", "kind", "rater_type"),
    "score": ("score", "value", "rating"),
    "group": ("group", "rater_group"),
}

DESCRIPTIONS: dict[str, str] = {
    "study": "the study's name (may be empty; if given it must be the study imported into)",
    "item": "what was rated: a response, a summary, a unit",
    "dimension": "what about it was rated: a rubric dimension or a metric",
    "rater": "who rated it: a person's code or a judge model's name",
    "rater_kind": "human or judge",
    "score": "the rating: a number (a category code)",
    "group": "the rater's group, e.g. a tradition or a lab (reported separately)",
}


class HeaderError(ValueError):
    """A header the vocabulary cannot read; ``str()`` is the one message (expected and found columns)."""

    def __init__(self, message: str, *, missing: Sequence[str] = (), found: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.missing = list(missing)
        self.found = list(found)


def normalise(name: str) -> str:
    """A column name as the vocabulary compares it: lower case, trimmed, spaces and hyphens as underscores."""
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


_ALIAS = {normalise(alias): canonical for canonical, aliases in COLUMNS.items() for alias in aliases}


def canonical_of(name: str) -> str | None:
    """The canonical column a file's column name stands for, or None (an extra column)."""
    return _ALIAS.get(normalise(name))


def accepted_names(canonical: str) -> str:
    """'score (or value, rating)' — how a message lists a column's accepted names."""
    first, *others = COLUMNS[canonical]
    return f"{first} (or {', '.join(others)})" if others else first


def header_columns(
    names: Iterable[str],
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    chosen: Mapping[str, str] | None = None,
    prefer: Iterable[str] = (),
    where: str = "line 1",
) -> dict[str, str]:
    """Map canonical columns to the file's column names: {canonical: name as spelled in the file}.

    `required` columns must be found, `optional` ones are returned when present. `chosen` ({canonical: file
    column}, e.g. from the upload page's mapping step) overrides the guess for a column; an empty choice means
    "none". When two of the file's columns stand for one canonical column, a name in `prefer` wins (a reader's
    historical spelling: irr's `unit,value`, import_ratings' `item,score`), else the header is refused.
    Raises HeaderError with one message prefixed by `where`.
    """
    found = [str(n) for n in names]
    wanted = list(dict.fromkeys([*required, *optional]))
    unknown = [c for c in wanted if c not in COLUMNS]
    if unknown:
        raise ValueError(f"not a column of the rating-file vocabulary: {', '.join(unknown)}")
    preferred = {normalise(p) for p in prefer}
    result: dict[str, str] = {}
    for canonical in wanted:
        if chosen is not None and canonical in chosen:
            pick = chosen[canonical]
            if pick and pick not in found:
                raise HeaderError(f"{where}: the column {pick!r} chosen for {canonical} is not in the header "
                                  f"(found: {', '.join(found) or 'nothing'})", found=found)
            if pick:
                result[canonical] = pick
            continue
        candidates = [n for n in found if canonical_of(n) == canonical]
        if len(candidates) > 1:
            winners = [n for n in candidates if normalise(n) in preferred]
            if len(winners) != 1:
                raise HeaderError(f"{where}: the columns {', '.join(candidates)} all mean {canonical}; keep one "
                                  f"(found: {', '.join(found)})", found=found)
            candidates = winners
        if candidates:
            result[canonical] = candidates[0]
    taken = [c for c in wanted if c in result]
    clashes = {result[c] for c in taken if [result[d] for d in taken].count(result[c]) > 1}
    if clashes:
        raise HeaderError(f"{where}: the column {sorted(clashes)[0]!r} is chosen for two roles", found=found)
    missing = [c for c in required if c not in result]
    if missing:
        raise HeaderError(header_message(where=where, required=required, optional=optional, found=found,
                                         missing=missing), missing=missing, found=found)
    return result


def header_message(*, where: str, required: Sequence[str], optional: Sequence[str], found: Sequence[str],
                   missing: Sequence[str]) -> str:
    """The one message for a wrong header: the expected columns (with their aliases), the found ones, the gap."""
    expected = ",".join(required) + (f" (optional: {','.join(optional)})" if optional else "")
    lacking = "; ".join(f"no column for {accepted_names(c)}" for c in missing)
    return (f"{where}: wrong header: expected the columns {expected}; found: {','.join(found) or 'nothing'} — "
            f"{lacking}. Rename the columns (see docs/rating-files.md) or map them on the upload page.")
