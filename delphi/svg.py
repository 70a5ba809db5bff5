"""A small inline SVG histogram of one weight's answers in a round (server-side; no script, no library).

Built from numbers only (counts and positions), so the markup needs no escaping of user text.
"""
from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

BIN_WIDTH = 5  # points per bar: 0–5, 5–10, …, 95–100 (the last bar includes 100)
BINS = 100 // BIN_WIDTH
WIDTH, HEIGHT, BAR = 200, 44, 10  # px; 20 bars of 10 px
AXIS = 10  # px below the bars for the 0 / 50 / 100 labels


def histogram_counts(values: Sequence[Decimal | float]) -> list[int]:
    """Counts per 5-point bin over 0–100; 100 falls in the last bin."""
    counts = [0] * BINS
    for value in values:
        index = min(int(Decimal(str(value)) // BIN_WIDTH), BINS - 1)
        counts[max(index, 0)] += 1
    return counts


def _x(points: float) -> float:
    return round(points * WIDTH / 100, 1)


def histogram_svg(values: Sequence[Decimal | float], *, median: float | None = None,
                  own: Decimal | float | None = None, label: str = "") -> SafeString:
    """An SVG bar chart of the answers, a line at the group median, a triangle at the viewer's own value."""
    counts = histogram_counts(values)
    peak = max(counts) or 1
    bars_h = HEIGHT - AXIS
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="histogram" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{_aria(counts, median, own, label)}">',
        f'<line x1="0" y1="{bars_h}" x2="{WIDTH}" y2="{bars_h}" stroke="#9aa4b1" stroke-width="1"/>',
    ]
    for index, count in enumerate(counts):
        if not count:
            continue
        h = max(2.0, round(count / peak * (bars_h - 4), 1))
        low, high = index * BIN_WIDTH, (index + 1) * BIN_WIDTH
        parts.append(
            f'<rect x="{index * BAR + 1}" y="{bars_h - h}" width="{BAR - 2}" height="{h}" fill="#7f9cc0">'
            f"<title>{low}–{high}: {count}</title></rect>"
        )
    if median is not None:
        x = _x(float(median))
        parts.append(f'<line x1="{x}" y1="0" x2="{x}" y2="{bars_h}" stroke="#27507a" stroke-width="2"/>')
    if own is not None:
        x = _x(float(own))
        parts.append(f'<polygon points="{x - 4},{bars_h + 8} {x + 4},{bars_h + 8} {x},{bars_h + 1}" fill="#a35c00"/>')
    for tick in (0, 50, 100):
        anchor = {0: "start", 50: "middle", 100: "end"}[tick]
        parts.append(f'<text x="{_x(tick)}" y="{HEIGHT - 1}" font-size="8" fill="#5b6573" '
                     f'text-anchor="{anchor}">{tick}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and fixed text only (label is reduced to letters, digits, spaces and hyphens).


def _aria(counts: list[int], median: float | None, own: Decimal | float | None, label: str) -> str:
    """The chart in words, in the interface language (the weight's name is a glossary term)."""
    safe_label = "".join(ch for ch in gettext(label) if ch.isalnum() or ch in " -") if label else ""
    bins = ", ".join(gettext("%(low)s to %(high)s: %(count)s") % {"low": i * BIN_WIDTH, "high": (i + 1) * BIN_WIDTH,
                                                                  "count": c} for i, c in enumerate(counts) if c)
    values = {"weight": safe_label, "bins": bins or gettext("none")}
    text = (gettext("Histogram of answers for %(weight)s: %(bins)s") if safe_label
            else gettext("Histogram of answers: %(bins)s")) % values
    if median is not None:
        text += "; " + gettext("median %(value)s") % {"value": f"{float(median):g}"}
    if own is not None:
        text += "; " + gettext("your value %(value)s") % {"value": f"{float(own):g}"}
    return escape(text)  # a translation is text: escaped for the attribute
