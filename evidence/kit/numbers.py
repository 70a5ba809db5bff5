"""One way to say a number: estimates, intervals, n and interval-method labels as every human-facing file of every
kind writes them (pages through the `evidence_numbers` template filters, PDF, README.txt), and the long CSV's
machine cells. The artefact checker (`checker.py`) reads figures back with the parsers beside the writers, so it
compares like with like. Stored JSON numbers are never formatted: they are the figures.

Example: `estimate(0.77182)` is "0.772", `interval(0.70149, 0.83, 2)` is "[0.70, 0.83]", `method_label("bca")`
is "BCa", `csv_number(0.5)` is "0.500000".
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from django.template.defaultfilters import floatformat

NONE = "—"  # a figure that is not defined
CSV_DIGITS = 6  # the long CSV's cells: enough to recompute, the same on every platform

# Interval method keys as stored (and in the CSV's ci_method column) → what a reader is told.
METHOD_LABELS = {
    "bca": "BCa",
    "percentile": "percentile",
    "F": "F-based",
    "f": "F-based",
    "wilson": "Wilson",
    "normal": "normal",
    "t": "Student-t",
    "anytime": "anytime-valid",
    "betting": "betting",
    "boundary": "anytime-valid",
}


def estimate(value: float | None, digits: int = 3) -> str:
    """A point estimate (Django's floatformat: half-up on the decimal, no "-0.000"); "—" when undefined."""
    return NONE if value is None else str(floatformat(value, digits))


def interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """An interval, "[low, high]"; empty when there is none."""
    if low is None or high is None:
        return ""
    return f"[{estimate(low, digits)}, {estimate(high, digits)}]"


def interval_of(bounds: Sequence[float | None] | None, digits: int = 3) -> str:
    """`interval` of a stored [low, high] pair (or None)."""
    return interval(bounds[0], bounds[1], digits) if bounds else ""


def n_text(n: int | None, unit: str = "") -> str:
    """A sample size as every file writes it: "n = 12 pairable units"; "n = —" when unknown."""
    shown = NONE if n is None else f"{n:d}"
    return f"n = {shown}{' ' + unit if unit else ''}"


def method_label(method: str | None) -> str:
    """An interval method's name for a reader ("bca" → "BCa"); "—" for none; an unknown key is shown as it is."""
    if not method:
        return NONE
    return METHOD_LABELS.get(method, method)


def methods_sentence(methods: Iterable[str | None]) -> str:
    """The distinct methods used, labelled, in a fixed order, joined for a sentence: "BCa or percentile"."""
    labels = sorted({method_label(m) for m in methods if m}, key=str.lower)
    if not labels:
        return "none"
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]


def csv_number(value: float | int | None) -> str:
    """A long-CSV cell: floats with 6 decimals, whole numbers as they are, empty when undefined."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{CSV_DIGITS}f}"
    return str(value)


# --- reading back (the checker) ----------------------------------------------------------------------------------

NUMBER = r"−?-?\d+(?:\.\d+)?"
_INTERVAL = re.compile(rf"\[\s*({NUMBER}),\s*({NUMBER})\s*\]")


def number_parse(text: str) -> float | None:
    """A number as written by `estimate` or `csv_number` (None for "—" or empty)."""
    text = text.strip().replace("−", "-")
    if text in ("", NONE):
        return None
    return float(text)


def digits_of(text: str) -> int:
    """How many decimals a written number shows: the precision the checker allows it."""
    text = text.strip()
    return len(text.split(".", 1)[1]) if "." in text else 0


def interval_parse(text: str) -> tuple[float, float, int] | None:
    """An interval written by `interval`: (low, high, decimals shown), or None."""
    found = _INTERVAL.search(text)
    if not found:
        return None
    low, high = found.group(1), found.group(2)
    return (float(low.replace("−", "-")), float(high.replace("−", "-")), min(digits_of(low), digits_of(high)))


def methods_named(text: str) -> set[str]:
    """The method labels a sentence names (a README's or a PDF's statement of how its intervals were made)."""
    found = set()
    for label in set(METHOD_LABELS.values()):
        if re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text):
            found.add(label)
    return found
