"""Rows and interval bars for the calibrated leaderboard page, from a stored snapshot's tree (no statistics here).

The bars are small inline SVGs (no style attributes: the CSP allows none); every number in them is also in the
table's text, so a screen reader or a phone loses nothing."""
from __future__ import annotations

import math
from typing import Any

from django.utils.safestring import SafeString, mark_safe

BAR_WIDTH = 220
BAR_HEIGHT = 30
JUDGE_COLOUR = "#8a94a3"
CALIBRATED_COLOUR = "#1f5fa8"


def interval_axis(report: dict[str, Any]) -> tuple[float, float]:
    """One shared axis for every model's bars: the smallest and largest bound shown, padded a little."""
    bounds = [v for entry in report.get("models", []) for board in ("judge_only", "calibrated")
              for v in (entry[board].get("lower"), entry[board].get("upper"), entry[board].get("estimate"))
              if v is not None]
    if not bounds:
        return 0.0, 1.0
    low, high = min(bounds), max(bounds)
    pad = max((high - low) * 0.05, 0.01)
    return max(0.0, low - pad), min(1.0, high + pad)


def _x(value: float, axis: tuple[float, float]) -> float:
    low, high = axis
    return round(4 + (BAR_WIDTH - 8) * (value - low) / (high - low if high > low else 1.0), 1)


def interval_bars(judge: dict[str, Any], calibrated: dict[str, Any], axis: tuple[float, float],
                  label: str) -> SafeString:
    """Two interval bars on one axis: the judge-only (grey, top) and the calibrated (blue, below)."""
    parts = [f'<svg class="interval-bars" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" viewBox="0 0 {BAR_WIDTH} '
             f'{BAR_HEIGHT}" role="img" aria-label="{_attr(label)}">']
    for y, block, colour in ((9, judge, JUDGE_COLOUR), (22, calibrated, CALIBRATED_COLOUR)):
        low, high, point = block.get("lower"), block.get("upper"), block.get("estimate")
        if low is not None and high is not None:
            parts.append(f'<line x1="{_x(low, axis)}" x2="{_x(high, axis)}" y1="{y}" y2="{y}" stroke="{colour}" '
                         'stroke-width="3"/>')
        if point is not None:
            parts.append(f'<circle cx="{_x(point, axis)}" cy="{y}" r="4" fill="{colour}"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and an escaped label only


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _fmt(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.3f}"


def _ci(block: dict[str, Any]) -> str:
    """'0.412–0.530', or '−0.292 to −0.100' when a bound is negative (a dash between minus signs misreads)."""
    low, high = block.get("lower"), block.get("upper")
    if low is None or high is None:
        return ""
    if low < 0 or high < 0:
        return f"{low:.3f} to {high:.3f}".replace("-", "−")
    return f"{low:.3f}–{high:.3f}"


def _skipped_summary(skipped: list[dict[str, Any]]) -> str:
    """One line for a cell's left-out strata (the main table lists each; cells would repeat it dozens of times)."""
    if not skipped:
        return ""
    names = ", ".join(s["stratum"] for s in skipped)
    return f"left out (fewer than 2 expert labels): {names}"


def _rank(rank: list[int] | None) -> str:
    if not rank:
        return "—"
    return str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}–{rank[1]}"


def board_rows(report: dict[str, Any], axis: tuple[float, float]) -> list[dict[str, Any]]:
    rows = []
    for entry in report.get("models", []):
        judge, cal, shift, gold = entry["judge_only"], entry["calibrated"], entry["shift"], entry["gold_only"]
        label = (f"{entry['model']}: judge-only {_fmt(judge['estimate'])} ({_ci(judge) or 'no interval'}), "
                 f"calibrated {_fmt(cal['estimate'])} ({_ci(cal) or 'no interval'})")
        rows.append({
            "model": entry["model"], "family": entry["family"], "self_preference": entry["self_preference"],
            "judge": _fmt(judge["estimate"]), "judge_ci": _ci(judge), "judged": entry["judged"],
            "calibrated": _fmt(cal["estimate"]), "calibrated_ci": _ci(cal), "lam": cal.get("lam"),
            "n": cal["n"], "covered": cal.get("covered_weight"), "skipped": cal.get("skipped") or [],
            "note": cal.get("note", ""),
            "shift": _fmt(shift["estimate"]).replace("-", "−"), "shift_ci": _ci(shift),
            "gold": _fmt(gold["estimate"]), "gold_ci": _ci(gold), "gold_n": gold["n"],
            "rank": _rank(entry.get("rank_set")),
            "more": entry["evidence"]["more_labels"], "hours": entry["evidence"]["expert_hours"],
            "evidence_note": entry["evidence"].get("note", ""),
            "bars": interval_bars(judge, cal, axis, label),
        })
    return rows


def cell_rows(report: dict[str, Any], facet: str) -> list[dict[str, Any]]:
    """Per model × dimension (or tradition): judge-only, calibrated with n, the shift, the labels still needed."""
    rows = []
    for entry in report.get("models", []):
        for key, cell in entry[facet].items():
            cal = cell["calibrated"]
            rows.append({
                "model": entry["model"], "cell": key, "judge": _fmt(cell["judge_only"]["estimate"]),
                "judge_ci": _ci(cell["judge_only"]), "calibrated": _fmt(cal["estimate"]), "calibrated_ci": _ci(cal),
                "n": cal["n"], "judged": cell["judge_only"].get("n"),
                "skipped": _skipped_summary(cal.get("skipped") or []) if cal["estimate"] is not None else "",
                "shift": _fmt(cell["shift"]["estimate"]).replace("-", "−"), "shift_ci": _ci(cell["shift"]),
                "more": cell["evidence"]["more_labels"], "hours": cell["evidence"]["expert_hours"],
                "evidence_note": cell["evidence"].get("note", ""),
            })
    return rows


def pair_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Adjacent pairs (in calibrated order) whose order the simultaneous interval does not settle, first."""
    rows = []
    for pair in report.get("pairs", []):
        if not pair["adjacent"]:
            continue
        rows.append({
            "a": pair["model_a"], "b": pair["model_b"], "difference": _fmt(pair["estimate"]).replace("-", "−"),
            "ci": _ci(pair),
            "separated": pair["separated"], "more": pair["more_labels_each"], "hours": pair["expert_hours"],
        })
    return rows
