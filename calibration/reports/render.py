"""Server-side renderings of a calibration report: SVG charts, long-format CSV, JSON and PDF."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from django.template.defaultfilters import floatformat
from django.utils.html import escape

from .build import TARGETS

COMPARISONS = ("experts", "judge_vs_majority", "judge_vs_gold")


def _fmt(value: float | None, digits: int = 3) -> str:
    """A number as the report page shows it (Django's floatformat: half-up on the decimal, no "-0.000")."""
    return "—" if value is None else str(floatformat(value, digits))


def forest_rows(report: dict[str, Any], comparison: str = "experts") -> list[dict[str, Any]]:
    """(label, α, interval, n, verdict) per group, for the forest plot and tables."""
    rows = []
    for group in report["groups"]:
        block = group[comparison]
        alpha = block.get("krippendorff_alpha", block.get("alpha"))
        rows.append({
            "label": "Overall" if group["kind"] == "overall" else f"{group['kind'].replace('_', ' ')}: {group['value']}",
            "alpha": alpha,
            "ci": block.get("alpha_ci"),
            "n": block.get("n_units", group["n_units"]),
            "verdict": (block.get("verdicts") or {}).get("alpha", "undefined"),
        })
    return rows


def rater_rows(group: dict[str, Any], rater_key: dict[str, str]) -> list[dict[str, Any]]:
    """Code, expert and leave-one-out α per rater of a group, for the admin's rater table."""
    influence = {r["rater"]: r for r in group["experts"].get("leave_one_rater_out", [])}
    return [{"code": code, "expert": email, "alpha_without": influence.get(code, {}).get("alpha_without"),
             "change": influence.get(code, {}).get("change")} for code, email in rater_key.items()]


def forest_plot_svg(rows: list[dict[str, Any]], *, title: str, target: float = TARGETS["alpha"]) -> str:
    """A forest plot of α with its interval per group, against a dashed line at the target."""
    row_h, left, width, top = 22, 250, 360, 34
    lows = [r["ci"][0] for r in rows if r["ci"]] + [r["alpha"] for r in rows if r["alpha"] is not None]
    x_min = min([-0.2, *lows]) if lows else -0.2
    x_max = 1.0

    def x(value: float) -> float:
        return left + (value - x_min) / (x_max - x_min) * width

    height = top + row_h * len(rows) + 36
    colour = {"pass": "#2d7a46", "fail": "#a33a2b", "uncertain": "#b7791f", "undefined": "#8a94a3"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {left + width + 260} {height}" '
        f'width="100%" aria-label="{escape(title)}">',
        f'<title>{escape(title)}</title>',
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{x(target):.1f}" y1="{top - 8}" x2="{x(target):.1f}" y2="{height - 30}" stroke="#27507a" '
        f'stroke-dasharray="4 3"/>',
        f'<text x="{x(target) + 3:.1f}" y="{top - 10}" font-size="11" fill="#27507a">α = {target}</text>',
    ]
    for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{height - 30}" x2="{x(tick):.1f}" y2="{height - 26}" stroke="#555"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="10" text-anchor="middle">{tick:.1f}</text>')
    parts.append(f'<line x1="{left}" y1="{height - 30}" x2="{left + width}" y2="{height - 30}" stroke="#555"/>')
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        fill = colour.get(row["verdict"], "#8a94a3")
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(row["label"])}</text>')
        if row["ci"]:
            low, high = row["ci"]
            parts.append(f'<line x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}" stroke="{fill}" stroke-width="2"/>')
        if row["alpha"] is not None:
            parts.append(f'<circle cx="{x(row["alpha"]):.1f}" cy="{y:.1f}" r="4" fill="{fill}"/>')
        interval = f" [{_fmt(row['ci'][0], 2)}, {_fmt(row['ci'][1], 2)}]" if row["ci"] else ""
        parts.append(f'<text x="{left + width + 8}" y="{y + 4:.1f}" font-size="10">{_fmt(row["alpha"])}{interval} '
                     f'n={row["n"]} {escape(row["verdict"])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def confusion_svg(matrix: list[list[int]] | None, *, title: str, reference: str = "gold") -> str:
    """A 4 × 4 heat map: rows the judge's score, columns the reference score."""
    if not matrix:
        return f'<p class="muted">{escape(title)}: no units with both scores.</p>'
    cell, left, top = 44, 70, 44
    peak = max(max(row) for row in matrix) or 1
    size = left + cell * 4 + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {size} {top + cell * 4 + 30}" '
             f'width="{size}" aria-label="{escape(title)}"><title>{escape(title)}</title>',
             f'<text x="{left}" y="14" font-size="12" font-weight="bold">{escape(title)}</text>',
             f'<text x="{left + cell * 2}" y="32" font-size="10" text-anchor="middle">{escape(reference)} score</text>',
             f'<text x="12" y="{top + cell * 2}" font-size="10" transform="rotate(-90 12 {top + cell * 2})" '
             f'text-anchor="middle">judge score</text>']
    for j in range(4):
        parts.append(f'<text x="{left + j * cell + cell / 2}" y="{top - 4}" font-size="10" text-anchor="middle">{j}</text>')
    for i, row in enumerate(matrix):
        parts.append(f'<text x="{left - 8}" y="{top + i * cell + cell / 2 + 4}" font-size="10" text-anchor="end">{i}</text>')
        for j, count in enumerate(row):
            shade = int(245 - 170 * count / peak)
            stroke = ' stroke="#1d232b" stroke-width="2"' if i == j else ' stroke="#fff"'
            parts.append(f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell}" height="{cell}" '
                         f'fill="rgb({shade},{shade + 5 if shade < 250 else 250},255)"{stroke}/>')
            parts.append(f'<text x="{left + j * cell + cell / 2}" y="{top + i * cell + cell / 2 + 4}" font-size="11" '
                         f'text-anchor="middle">{count}</text>')
    parts.append("</svg>")
    return "".join(parts)


CSV_HEADER = ["group_kind", "group_value", "comparison", "metric", "value", "ci_low", "ci_high", "n_units", "verdict"]


def _metric_rows(group: dict[str, Any]) -> Iterator[list[Any]]:
    base = [group["kind"], group["value"]]
    experts = group["experts"]
    verdicts = experts.get("verdicts", {})
    ci = experts.get("alpha_ci") or [None, None]
    n = experts.get("n_units", group["n_units"])
    yield base + ["experts", "krippendorff_alpha", experts.get("krippendorff_alpha"), *ci, n, verdicts.get("alpha")]
    yield base + ["experts", "alpha_below_min_probability", experts.get("alpha_below_min_probability"), None, None, n, None]
    yield base + ["experts", "percent_agreement", experts.get("percent_agreement"), None, None, n,
                  verdicts.get("exact_agreement")]
    yield base + ["experts", "mean_pairwise_quadratic_kappa", experts.get("mean_pairwise_quadratic_kappa"), None, None,
                  n, verdicts.get("kappa")]
    yield base + ["experts", "fleiss_kappa", experts.get("fleiss_kappa"), None, None, n, None]
    yield base + ["experts", "gwet_ac1", experts.get("gwet_ac1"), None, None, n, None]
    for comparison in ("judge_vs_majority", "judge_vs_gold"):
        block = group[comparison]
        verdicts = block.get("verdicts", {})
        ci = block.get("alpha_ci") or [None, None]
        yield base + [comparison, "krippendorff_alpha", block.get("alpha"), *ci, block["n_units"], verdicts.get("alpha")]
        yield base + [comparison, "quadratic_kappa", block.get("quadratic_kappa"), None, None, block["n_units"],
                      verdicts.get("kappa")]
        yield base + [comparison, "exact_agreement", block.get("exact_agreement"), None, None, block["n_units"],
                      verdicts.get("exact_agreement")]
        yield base + [comparison, "mean_signed_difference", block.get("mean_signed_difference"), None, None,
                      block["n_units"], None]
    yield base + ["panel", "alpha_without_judge", group.get("panel_alpha_without_judge"), None, None, group["n_units"], None]
    yield base + ["panel", "alpha_with_judge", group.get("panel_alpha_with_judge"), None, None, group["n_units"], None]


def report_csv(report: dict[str, Any]) -> str:
    """Long format: one row per group × comparison × metric."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for group in report["groups"]:
        for row in _metric_rows(group):
            writer.writerow(["" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in row])
    return buffer.getvalue()


def report_json(report: dict[str, Any]) -> str:
    """Everything, indented, with no NaN (the builder never produces one; this enforces it)."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False, sort_keys=False) + "\n"
