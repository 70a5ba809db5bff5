"""Server-side renderings of a calibration report: SVG charts, long-format CSV, JSON and PDF."""
from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.utils.html import escape

from evaluations.spreadsheet import csv_writer
from evidence.kit.pdfkit import fmt

from .build import TARGETS
from .schema import AgainstReference, Experts, Group, Interval, LanguageCell, Report

COMPARISONS = ("experts", "judge_vs_majority", "judge_vs_gold")
Block = Experts | AgainstReference


def block_of(group: Group, comparison: str) -> Block:
    """A group's block by the comparison's name: "experts", "judge_vs_majority" or "judge_vs_gold"."""
    if comparison not in COMPARISONS:
        raise KeyError(comparison)
    block: Block = getattr(group, comparison)
    return block


def pairable_units(block: Block, group: Group) -> int:
    """The pairable units (two or more ratings) behind a block's coefficients: the n a report shows for them.

    The experts' block counts them (``n_pairable_units``); a judge-vs-reference block's ``n_units`` are the units
    with both ratings, which are its pairable units.
    """
    return int(block.n_pairable_units if isinstance(block, Experts) else block.n_units)


@dataclass(frozen=True)
class ForestRow:
    """One group's line of a forest plot or table: label, α, its interval, n and the verdict."""

    label: str
    alpha: float | None
    ci: list[float] | None
    n: int
    verdict: str


def forest_rows(report: Report, comparison: str = "experts",
                label: Callable[[Group], str] | None = None) -> list[ForestRow]:
    """(label, α, interval, n, verdict) per group, for the forest plot and tables; `label` names a group (the pages
    pass evaluations.labels' names; the PDF keeps the keys)."""
    rows = []
    for group in report.groups:
        block = block_of(group, comparison)
        rows.append(ForestRow(
            label=label(group) if label else
            "Overall" if group.kind == "overall" else f"{group.kind.replace('_', ' ')}: {group.value}",
            alpha=block.krippendorff_alpha if isinstance(block, Experts) else block.alpha,
            ci=block.alpha_ci,
            # The units the coefficient and its interval rest on: every n on a report is this one quantity.
            n=pairable_units(block, group),
            verdict=block.verdicts.alpha,
        ))
    return rows


@dataclass(frozen=True)
class RaterRow:
    """A rater's code, the expert behind it and α without them (the admin's rater table)."""

    code: str
    expert: str
    alpha_without: float | None
    change: float | None


def rater_rows(group: Group, rater_key: dict[str, str]) -> list[RaterRow]:
    """Code, expert and leave-one-out α per rater of a group, for the admin's rater table."""
    influence = {r.rater: r for r in group.experts.leave_one_rater_out}
    rows = []
    for code, email in rater_key.items():
        known = influence.get(code)
        rows.append(RaterRow(code=code, expert=email, alpha_without=known.alpha_without if known else None,
                             change=known.change if known else None))
    return rows


@dataclass(frozen=True)
class DiagnosticRow:
    """A rater's bias against the rest of the panel (RaterDiagnostic) with the expert, α without and the shares."""

    rater: str
    n_units: int
    mean_difference: float | None
    low: float | None
    high: float | None
    flagged: bool
    shares: dict[str, float]
    expert: str
    alpha_without: float | None
    shares_text: str


def diagnostic_rows(group: Group, rater_key: dict[str, str] | None = None) -> list[DiagnosticRow]:
    """Per rater of a group: bias against the rest of the panel with its interval, flag, shares and α without."""
    influence = {r.rater: r for r in group.experts.leave_one_rater_out}
    key = rater_key or {}
    rows = []
    for d in group.experts.rater_diagnostics or []:
        known = influence.get(d.rater)
        rows.append(DiagnosticRow(
            rater=d.rater, n_units=d.n_units, mean_difference=d.mean_difference, low=d.low, high=d.high,
            flagged=d.flagged, shares=d.shares, expert=key.get(d.rater, ""),
            alpha_without=known.alpha_without if known else None,
            shares_text=" · ".join(f"{point}: {share:.0%}" for point, share in d.shares.items())))
    return rows


def forest_plot_svg(rows: list[ForestRow], *, title: str, target: float = TARGETS["alpha"]) -> str:
    """A forest plot of α with its interval per group, against a dashed line at the target."""
    row_h, left, width, top = 22, 250, 360, 34
    lows = [r.ci[0] for r in rows if r.ci] + [r.alpha for r in rows if r.alpha is not None]
    x_min = min([-0.2, *lows]) if lows else -0.2
    x_max = 1.0

    def x(value: float) -> float:
        return left + (value - x_min) / (x_max - x_min) * width

    height = top + row_h * len(rows) + 36
    colour = {"pass": "#2d7a46", "fail": "#a33a2b", "uncertain": "#b7791f", "undefined": "#8a94a3"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {left + width + 320} {height}" '
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
        fill = colour.get(row.verdict, "#8a94a3")
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(row.label)}</text>')
        if row.ci:
            low, high = row.ci
            parts.append(f'<line x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}" stroke="{fill}" stroke-width="2"/>')
        if row.alpha is not None:
            parts.append(f'<circle cx="{x(row.alpha):.1f}" cy="{y:.1f}" r="4" fill="{fill}"/>')
        interval = f" [{fmt(row.ci[0], 2)}, {fmt(row.ci[1], 2)}]" if row.ci else ""
        parts.append(f'<text x="{left + width + 8}" y="{y + 4:.1f}" font-size="10">{fmt(row.alpha)}{interval} '
                     f'n = {row.n} pairable units · {escape(row.verdict)}</text>')
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


CSV_HEADER = ["group_kind", "group_value", "comparison", "metric", "value", "ci_low", "ci_high", "n_pairable_units",
              "verdict", "ci_method", "ci_reliable", "ci_coverage"]


def _ac2(b: Experts, kind: str) -> float | None:
    return None if b.gwet_ac2 is None else getattr(b.gwet_ac2, kind)


def _cohen(b: Experts, kind: str) -> float | None:
    return None if b.cohen_kappa is None else getattr(b.cohen_kappa, kind)


# Interval key → (label, how to read its point value from an experts block / a judge-vs-reference block).
COEFFICIENTS: list[tuple[str, str, Callable[[Experts], float | None],
                         Callable[[AgainstReference], float | None] | None]] = [
    ("krippendorff_alpha", "Krippendorff's α (ordinal)", lambda b: b.krippendorff_alpha, lambda b: b.alpha),
    ("percent_agreement", "exact agreement", lambda b: b.percent_agreement, lambda b: b.exact_agreement),
    ("within_one_agreement", "agreement within one point", lambda b: b.within_one_agreement, None),
    ("fleiss_kappa", "Fleiss' κ", lambda b: b.fleiss_kappa, None),
    ("gwet_ac1", "Gwet's AC1", lambda b: b.gwet_ac1, None),
    ("gwet_ac2_linear", "Gwet's AC2 (linear)", lambda b: _ac2(b, "linear"), None),
    ("gwet_ac2_quadratic", "Gwet's AC2 (quadratic)", lambda b: _ac2(b, "quadratic"), None),
    ("cohen_kappa_unweighted", "Cohen's κ (unweighted)", lambda b: _cohen(b, "unweighted"), None),
    ("cohen_kappa_linear", "Cohen's κ (linear)", lambda b: _cohen(b, "linear"), None),
    ("cohen_kappa_quadratic", "Cohen's κ (quadratic)", lambda b: _cohen(b, "quadratic"), lambda b: b.quadratic_kappa),
    ("spearman_rho", "Spearman's ρ", lambda b: b.spearman_rho, lambda b: b.spearman_rho),
    ("kendall_tau_b", "Kendall's τ-b", lambda b: b.kendall_tau_b, lambda b: b.kendall_tau_b),
    ("icc_2_1", "ICC(2,1) absolute agreement", lambda b: b.icc_2_1, None),
    ("icc_3_1", "ICC(3,1) consistency", lambda b: b.icc_3_1, None),
]


@dataclass(frozen=True)
class IntervalRow:
    """A coefficient of a block with its value and, when stored, its interval."""

    key: str
    label: str
    value: float
    interval: Interval | None


def interval_rows(block: Block, comparison: str = "experts") -> list[IntervalRow]:
    """Every coefficient of a block that has a value, with its interval (method, reliable, reason) when stored.

    Reports computed before statistics v2 have no ``intervals``: their rows carry α's percentile interval only.
    """
    intervals = block.intervals or {}
    rows = []
    for key, label, experts_value, reference_value in COEFFICIENTS:
        if comparison == "experts":
            assert isinstance(block, Experts)
            value = experts_value(block)
        else:
            assert isinstance(block, AgainstReference)
            if reference_value is None:
                continue
            value = reference_value(block)
        if value is None:
            continue
        interval = intervals.get(key)
        if interval is None and key == "krippendorff_alpha" and block.alpha_ci:
            interval = Interval(low=block.alpha_ci[0], high=block.alpha_ci[1], method="percentile", reliable=True,
                                reason=None)
        rows.append(IntervalRow(key=key, label=label, value=value, interval=interval))
    return rows


CsvCell = str | int | float | None


def _metric_rows(group: Group) -> Iterator[list[CsvCell]]:
    base: list[CsvCell] = [group.kind, group.value]
    experts = group.experts
    verdicts = experts.verdicts
    n = pairable_units(experts, group)
    verdict_of = {"krippendorff_alpha": verdicts.alpha, "percent_agreement": verdicts.exact_agreement}
    for row in interval_rows(experts, "experts"):
        yield base + ["experts", row.key, row.value, *_interval_cells(row.interval), n,
                      verdict_of.get(row.key), *_method_cells(row.interval)]
    yield base + ["experts", "alpha_below_min_probability", experts.alpha_below_min_probability, None, None, n,
                  None, None, None, None]
    yield base + ["experts", "mean_pairwise_quadratic_kappa", experts.mean_pairwise_quadratic_kappa, None, None,
                  n, verdicts.kappa, None, None, None]
    for comparison, block in (("judge_vs_majority", group.judge_vs_majority), ("judge_vs_gold", group.judge_vs_gold)):
        verdicts = block.verdicts
        verdict_of = {"krippendorff_alpha": verdicts.alpha, "percent_agreement": verdicts.exact_agreement,
                      "cohen_kappa_quadratic": verdicts.kappa}
        for row in interval_rows(block, comparison):
            yield base + [comparison, row.key, row.value, *_interval_cells(row.interval),
                          pairable_units(block, group), verdict_of.get(row.key), *_method_cells(row.interval)]
        yield base + [comparison, "mean_signed_difference", block.mean_signed_difference, None, None,
                      pairable_units(block, group), None, None, None, None]
    # α without the judge is the experts' α (their pairable units); with the judge as one more rater its pairable
    # units are not recorded, so the cell stays empty rather than showing another quantity.
    yield base + ["panel", "alpha_without_judge", group.panel_alpha_without_judge, None, None, n,
                  None, None, None, None]
    yield base + ["panel", "alpha_with_judge", group.panel_alpha_with_judge, None, None, None, None,
                  None, None, None]


def _interval_cells(interval: Interval | None) -> list[CsvCell]:
    return [None, None] if not interval else [interval.low, interval.high]


def _method_cells(interval: Interval | None) -> list[CsvCell]:
    if not interval or interval.low is None:
        return [None, None, None]
    return [interval.method, "yes" if interval.reliable else "no", interval.coverage]


def language_figures(cell: LanguageCell) -> list[tuple[str, float | None, list[float] | None, int]]:
    """A language cell's two figures as (comparison, α, interval, n): the experts' α on its pairable units and the
    judge's α against the expert majority on its judged units (issue 35)."""
    return [("experts", cell.alpha, cell.alpha_ci, cell.n_pairable_units),
            ("judge_vs_majority", cell.judge_alpha, cell.judge_alpha_ci, cell.n_judged)]


def _language_rows(report: Report) -> Iterator[list[CsvCell]]:
    """tables.csv's language cells: group_kind "language", α with its percentile interval (or no value: words)."""
    for cell in report.languages or []:
        for comparison, value, ci, n in language_figures(cell):
            yield ["language", cell.language, comparison, "krippendorff_alpha", value,
                   *(ci if ci else [None, None]), n, None, "percentile" if ci else None, None, None]


def report_csv(report: Report) -> str:
    """Long format: one row per group × comparison × metric (and per language cell)."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(CSV_HEADER)
    for group in report.groups:
        for row in _metric_rows(group):
            writer.writerow("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in row)
    for row in _language_rows(report):
        writer.writerow("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in row)
    return buffer.getvalue()


def report_json(report: Report) -> str:
    """Everything, indented, with no NaN (the builder never produces one; this enforces it)."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False, allow_nan=False, sort_keys=False) + "\n"
