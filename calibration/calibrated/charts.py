"""Small inline SVG charts for the variance budget (a stacked bar of shares) and the score history (points with
interval whiskers per snapshot). No style attributes (the CSP allows none); every number drawn is also in the
page's tables, so a screen reader or a phone loses nothing."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils.safestring import SafeString, mark_safe

from stats.variance_budget import GROUP_LABELS, GROUPS

if TYPE_CHECKING:
    from .history import Point

# Colour-blind-safe (Okabe–Ito), each with a contrast ≥ 3:1 against white for the graphic (WCAG 1.4.11).
GROUP_COLOURS = {"case": "#0072b2", "route": "#d55e00", "generation": "#009e73", "judge_run": "#cc79a7",
                 "judge_error": "#6b5d00"}
POINT_COLOUR = "#1f2937"
CHANGED_COLOUR = "#b91c1c"
CALIBRATED_COLOUR = "#1f5fa8"


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def stacked_bar(shares: dict[str, float | None], label: str, width: int = 240, height: int = 18) -> SafeString:
    """One bar, 100 % wide, split into the budget lines' shares in GROUPS order (not estimable lines omitted)."""
    parts = [f'<svg class="budget-bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{_attr(label)}">']
    x = 0.0
    for group in GROUPS:
        share = shares.get(group)
        if not share:
            continue
        w = width * share
        parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{GROUP_COLOURS[group]}">'
                     f"<title>{_attr(GROUP_LABELS[group])}: {share:.0%}</title></rect>")
        x += w
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped labels only


def history_chart(points: list[Point], n_snapshots: int, index_of: dict[int, int], *, equated: bool, label: str,
                  width: int = 320, height: int = 130) -> SafeString:
    """A model's score per snapshot (x: snapshot order, y: score), whiskers for the interval; the anchor-equated
    score when `equated`; a red ring where the change from the previous snapshot exceeds its interval; the
    calibrated score (blue diamond) where a calibrated version exists."""
    values: list[float] = []
    for p in points:
        low, high, mid = ((p.equated_lower, p.equated_upper, p.equated) if equated else (p.lower, p.upper, p.score))
        values += [v for v in (low, high, mid) if v is not None]
        if p.calibrated:
            values += [v for v in (p.calibrated.lower, p.calibrated.upper) if v is not None]
    low_v, high_v = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max((high_v - low_v) * 0.08, 0.01)
    low_v, high_v = low_v - pad, high_v + pad
    left, right, top, bottom = 34, 8, 8, 18

    def sx(i: int) -> float:
        span = max(n_snapshots - 1, 1)
        return left + (width - left - right) * (i / span if n_snapshots > 1 else 0.5)

    def sy(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - low_v) / (high_v - low_v))

    parts = [f'<svg class="history-chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{_attr(label)}">',
             f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" stroke="#6b7280"/>',
             f'<text x="2" y="{sy(high_v - pad) + 4:.1f}" font-size="10" fill="#374151">{high_v - pad:.2f}</text>',
             f'<text x="2" y="{sy(low_v + pad) + 4:.1f}" font-size="10" fill="#374151">{low_v + pad:.2f}</text>']
    line: list[str] = []
    for p in points:
        i = index_of[p.snapshot.run_id]
        low, high, mid = ((p.equated_lower, p.equated_upper, p.equated) if equated else (p.lower, p.upper, p.score))
        x = sx(i)
        parts.append(f'<text x="{x:.1f}" y="{height - 4}" font-size="9" fill="#374151" text-anchor="middle">'
                     f"{i + 1}</text>")
        if low is not None and high is not None:
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{sy(low):.1f}" y2="{sy(high):.1f}" '
                         f'stroke="{POINT_COLOUR}" stroke-width="2"/>')
        if mid is not None:
            line.append(f"{x:.1f},{sy(mid):.1f}")
            parts.append(f'<circle cx="{x:.1f}" cy="{sy(mid):.1f}" r="3.5" fill="{POINT_COLOUR}"/>')
            if p.changed:
                parts.append(f'<circle cx="{x:.1f}" cy="{sy(mid):.1f}" r="7" fill="none" stroke="{CHANGED_COLOUR}" '
                             'stroke-width="2"/>')
        cal = p.calibrated
        if cal and cal.estimate is not None:
            cx, cy = x + 6, sy(cal.estimate)
            parts.append(f'<path d="M{cx:.1f} {cy - 4:.1f} L{cx + 4:.1f} {cy:.1f} L{cx:.1f} {cy + 4:.1f} '
                         f'L{cx - 4:.1f} {cy:.1f} Z" fill="{CALIBRATED_COLOUR}"/>')
    if len(line) > 1:
        parts.insert(4, f'<polyline points="{" ".join(line)}" fill="none" stroke="#9ca3af" stroke-width="1"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped labels only
