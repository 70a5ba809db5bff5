"""The calibration report as a PDF (reportlab platypus) that lays out a report of any size.

What the report page shows, on paper: the overall summary, both forest plots, the table of all groups,
the raters' leave-one-out α, the pairwise κ of the overall group, both confusion matrices and the notes.
Numbers are formatted as the page formats them (Django's ``floatformat``). Long tables are
``LongTable``s that repeat their header row on every page (narrow ones — raters, rater pairs — side by
side in columns, a page-high sheet at a time); a forest plot is cut into chunks that each fit a page,
drawn on one common scale, with the labels at 7 pt. Every page carries the cycle, the snapshot version
and the input hash (— until snapshots exist) in its header.

Text is set in DejaVu Sans when the system has it (Greek, Hebrew and the α/κ/≥ signs); otherwise in the
builtin Helvetica, with those signs spelled out. reportlab draws characters in the order given, so
right-to-left runs are put in drawing order by :func:`visual_order`, a small stand-in for the Unicode
bidi algorithm. The output is invariant (no creation date, fixed document id), so the same report
renders to the same bytes.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape

from reportlab.graphics.shapes import Circle, Drawing, Line, String
from reportlab.lib import colors
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import LongTable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate
from reportlab.platypus.flowables import Flowable

from evaluations.labels import group_label, language_label
from evidence.kit.numbers import interval_of, method_label, methods_sentence
from evidence.kit.pdfkit import (
    LABEL_PT,
    MARGIN_BOTTOM,
    MARGIN_TOP,
    MARGIN_X,
    PAGE,
    ROW_PT,
    VERDICT_COLOURS,
    Fonts,
    Styles,
    fit,
    fmt,
    interval_text,
    page_decoration,
    report_fonts,
    sheets,
    table,
)

from .build import TARGETS
from .checks import report_methods
from .render import ForestRow, diagnostic_rows, forest_rows, interval_rows
from .schema import Group, Report


def _label(group: Group) -> str:
    """A group as the page names it ("Sub-dimension: Allusion Detection"), never its keys."""
    return group_label(group.kind, group.value)


def _forest_chunks(rows: list[ForestRow], *, title: str, width: float, height: float,
                   fonts: Fonts) -> list[Drawing]:
    """The forest plot as drawings that each fit `height`: as many rows per chunk as fit, one common scale."""
    title_h, axis_h = 26.0, 26.0
    fits = max(1, int((height - title_h - axis_h) // ROW_PT))
    n_chunks = max(1, -(-len(rows) // fits))
    per_chunk = -(-max(len(rows), 1) // n_chunks)  # rows spread evenly over the chunks
    lows = [r.ci[0] for r in rows if r.ci] + [r.alpha for r in rows if r.alpha is not None]
    x_min, x_max = (min([-0.2, *lows]) if lows else -0.2), 1.0
    label_w, plot_w = 230.0, 330.0
    left = label_w + 8

    def x(value: float) -> float:
        return left + (value - x_min) / (x_max - x_min) * plot_w

    target = TARGETS["alpha"]
    chunks = []
    for number, start in enumerate(range(0, max(len(rows), 1), per_chunk), start=1):
        part = rows[start:start + per_chunk]
        drawing = Drawing(width, title_h + ROW_PT * len(part) + axis_h)
        top = drawing.height - title_h
        caption = title if n_chunks == 1 else f"{title} ({number} of {n_chunks})"
        drawing.add(String(left, drawing.height - 10, fonts.text(caption), fontName=fonts.bold, fontSize=9))
        drawing.add(Line(x(target), axis_h - 4, x(target), top + 2, strokeColor=colors.HexColor("#27507a"),
                         strokeDashArray=[3, 2], strokeWidth=0.8))
        drawing.add(String(x(target) + 3, top + 2, fonts.text(f"α = {target}"), fontName=fonts.regular,
                           fontSize=LABEL_PT, fillColor=colors.HexColor("#27507a")))
        drawing.add(Line(left, axis_h - 4, left + plot_w, axis_h - 4, strokeColor=colors.HexColor("#555555"),
                         strokeWidth=0.6))
        for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
            drawing.add(Line(x(tick), axis_h - 4, x(tick), axis_h - 7, strokeColor=colors.HexColor("#555555"),
                             strokeWidth=0.6))
            drawing.add(String(x(tick), axis_h - 15, f"{tick:.1f}", fontName=fonts.regular, fontSize=LABEL_PT,
                               textAnchor="middle"))
        for i, row in enumerate(part):
            y = top - (i + 0.5) * ROW_PT
            colour = colors.HexColor(VERDICT_COLOURS.get(row.verdict, VERDICT_COLOURS["undefined"]))
            label = fit(fonts.text(row.label), fonts.regular, LABEL_PT, label_w - 4)
            drawing.add(String(label_w, y - 2.5, label, fontName=fonts.regular, fontSize=LABEL_PT, textAnchor="end"))
            if row.ci:
                drawing.add(Line(x(row.ci[0]), y, x(row.ci[1]), y, strokeColor=colour, strokeWidth=1.4))
            if row.alpha is not None:
                drawing.add(Circle(x(row.alpha), y, 2.4, fillColor=colour, strokeColor=colour))
            interval = f" {interval_text(row.ci, 2)}" if row.ci else ""
            drawing.add(String(left + plot_w + 10, y - 2.5, f"{fmt(row.alpha)}{interval}  n = {row.n} pairable units  "
                               f"{row.verdict}", fontName=fonts.regular, fontSize=LABEL_PT))
        chunks.append(drawing)
    return chunks


def _summary(report: Report, styles: Styles) -> list[Flowable]:
    overall = report.overall
    e, m, g = overall.experts, overall.judge_vs_majority, overall.judge_vs_gold
    ev, mv = e.verdicts, m.verdicts
    p = styles.paragraph
    return [
        Paragraph(escape(styles.fonts.text("Experts among themselves (overall)")), styles.heading),
        p(f"α = {fmt(e.krippendorff_alpha)} {interval_text(e.alpha_ci, 3)} {ev.alpha} · "
          f"P(α < {e.alpha_min}) = {fmt(e.alpha_below_min_probability)} · "
          f"n = {e.n_pairable_units} pairable units of {overall.n_units}"),
        p(f"Exact agreement {fmt(e.percent_agreement)} {ev.exact_agreement} · "
          f"mean pairwise κ (quadratic) {fmt(e.mean_pairwise_quadratic_kappa)} {ev.kappa} · "
          f"Fleiss' κ {fmt(e.fleiss_kappa)} · Gwet's AC1 {fmt(e.gwet_ac1)}"),
        Paragraph(escape(styles.fonts.text("Judge against the panel (overall)")), styles.heading),
        p(f"vs expert majority: α = {fmt(m.alpha)} {interval_text(m.alpha_ci, 3)} "
          f"{mv.alpha} · n = {m.n_units} pairable units · κ (quadratic) {fmt(m.quadratic_kappa)} · "
          f"exact {fmt(m.exact_agreement)} · mean signed difference (judge − majority) "
          f"{fmt(m.mean_signed_difference)}"),
        p(f"vs adjudicated gold: α = {fmt(g.alpha)} {interval_text(g.alpha_ci, 3)} · κ (quadratic) "
          f"{fmt(g.quadratic_kappa)} · exact {fmt(g.exact_agreement)} · n = {g.n_units} pairable units"),
        p(f"Panel α without the judge {fmt(overall.panel_alpha_without_judge)} · with the judge as one "
          f"more rater {fmt(overall.panel_alpha_with_judge)}"),
    ]


def _groups_table(report: Report, fonts: Fonts, width: float) -> LongTable:
    header = ["Group", "pairable units", "experts α", "95 % CI", "", "exact", "judge α (majority)", "95 % CI", "",
              "judge κ", "judge α (gold)", "pairable (gold)"]
    widths = [150, 44, 46, 66, 50, 40, 74, 66, 50, 40, 62, 48]
    rows: list[list[Any]] = [header]
    for group in report.groups:
        e, m, g = group.experts, group.judge_vs_majority, group.judge_vs_gold
        rows.append([
            fit(_label(group), fonts.regular, LABEL_PT, widths[0] - 6), e.n_pairable_units,  # table() sets the text
            fmt(e.krippendorff_alpha), interval_text(e.alpha_ci, 2), e.verdicts.alpha,
            fmt(e.percent_agreement), fmt(m.alpha), interval_text(m.alpha_ci, 2),
            m.verdicts.alpha, fmt(m.quadratic_kappa),
            fmt(g.alpha), g.n_units,
        ])
    scale = min(1.0, width / sum(widths))
    return table(rows, [w * scale for w in widths], fonts, text_columns=(0, 3, 4, 7, 8))


def _confusion_table(matrix: list[list[int]] | None, reference: str, fonts: Fonts) -> Table:
    if not matrix:
        return Table([[fonts.text(f"Judge vs {reference}: no units with both scores.")]],
                     style=[("FONTNAME", (0, 0), (-1, -1), fonts.regular), ("FONTSIZE", (0, 0), (-1, -1), LABEL_PT)])
    rows: list[list[Any]] = [[f"judge \\ {reference}", *[str(j) for j in range(len(matrix))]]]
    rows += [[str(i), *row] for i, row in enumerate(matrix)]
    table = Table(rows, colWidths=[70] + [32] * len(matrix))
    table.setStyle(TableStyle([
        ("FONTNAME", (0, 0), (-1, -1), fonts.regular), ("FONTSIZE", (0, 0), (-1, -1), LABEL_PT),
        ("FONTNAME", (0, 0), (-1, 0), fonts.bold), ("FONTNAME", (0, 0), (0, -1), fonts.bold),
        ("ALIGN", (1, 0), (-1, -1), "RIGHT"), ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#c5ccd6")),
        *[("BACKGROUND", (i + 1, i + 1), (i + 1, i + 1), colors.HexColor("#e8edf3")) for i in range(len(matrix))],
    ]))
    return table


def _page_decoration(report: Report, fonts: Fonts, version: int | None,
                     input_hash: str | None) -> Callable[[Canvas, BaseDocTemplate], None]:
    meta = report.meta
    return page_decoration(
        fonts, heading="FaithBench calibration report — cycle: ", name=str(meta.cycle or "—"),
        line=f"snapshot version {'—' if version is None else version} · input hash {input_hash or '—'}",
        footer=f"seed {meta.seed} · {meta.n_resamples} bootstrap resamples · "
               f"rubric v{_or_dash(meta.rubric_version)} · judge run {meta.judge_run or '—'}")


def _or_dash(value: object) -> object:
    """An optional meta value as the report showed a key it did not have: "—"."""
    return "—" if value is None else value


def _intervals_section(overall: Group, styles: Styles, width: float) -> list[Flowable]:
    """Every coefficient of the overall group with its interval, method and reliability (statistics v2)."""
    fonts = styles.fonts
    out: list[Flowable] = [Paragraph(escape(fonts.text("Every coefficient with its 95 % interval (overall)")),
                                     styles.heading),
                           styles.paragraph("Unit bootstrap (ICC: F-based); the method is the one whose simulated "
                                            "coverage, estimated for a panel of this design, reaches 0.93, else the interval is "
                                            "marked not reliable.", styles.muted)]
    widths = [64, 130, 44, 84, 50, width - 372]
    rows: list[list[Any]] = [["Comparison", "Coefficient", "value", "95 % interval", "method", "reliable"]]
    for comparison, title in (("experts", "experts"), ("judge_vs_majority", "judge vs majority"),
                              ("judge_vs_gold", "judge vs gold")):
        for row in interval_rows(getattr(overall, comparison), comparison):
            interval = row.interval
            # The coverage figure first: the column is narrower than the page's, and the design is in the heading.
            basis = interval.coverage_basis if interval is not None and interval.coverage is not None else None
            if interval is None or interval.low is None:
                reliable, bounds = "—", "—"
            else:
                reliable = (f"yes ({basis})" if basis else "yes") if interval.reliable else \
                    f"no: {basis or interval.reason}"
                bounds = interval_text([interval.low, interval.high], 3)
            rows.append([title, row.label, fmt(row.value), bounds,
                         method_label(interval.method) if interval is not None and interval.low is not None
                         else "—",
                         fit(reliable, fonts.regular, LABEL_PT, widths[-1] - 6)])
    if len(rows) == 1:
        return [*out, styles.paragraph("No coefficient is defined for these data yet.", styles.muted)]
    return [*out, table(rows, widths, fonts, text_columns=(0, 1, 3, 4, 5))]


def _diagnostics_section(overall: Group, styles: Styles) -> list[Flowable]:
    """Each rater's bias against the rest of the panel (overall) and the judge's Bland–Altman summary."""
    fonts = styles.fonts
    out: list[Flowable] = [Paragraph(escape(fonts.text("Rater diagnostics (overall)")), styles.heading)]
    rows: list[list[Any]] = [["Code", "n", "bias", "95 % interval", "flag", "α without"]]
    for d in diagnostic_rows(overall):
        rows.append([d.rater, d.n_units, fmt(d.mean_difference, 2),
                     interval_text([d.low, d.high], 2) if d.low is not None else "—",
                     "flagged" if d.flagged else "—", fmt(d.alpha_without)])
    if len(rows) > 1:
        out.append(table(rows, [60, 36, 44, 84, 44, 54], fonts, text_columns=(0, 3, 4)))
    else:
        out.append(styles.paragraph("Diagnostics need two or more raters.", styles.muted))
    ba = overall.judge_vs_majority.bland_altman
    if ba:
        limits = interval_text([ba.lower_limit, ba.upper_limit], 2) if ba.lower_limit is not None else "—"
        out.append(styles.paragraph(
            f"Judge − expert median (Bland–Altman, n = {ba.n_units}): mean {fmt(ba.mean_difference, 2)}, "
            f"SD {fmt(ba.sd, 2)}, 95 % limits of agreement {limits}. A rater is flagged when the whole bias "
            "interval lies more than 0.5 points from 0.", styles.muted))
    return out


def _languages_section(report: Report, styles: Styles) -> list[Flowable]:
    """Issue 35: α per case language (experts; judge against the majority), words where a language has too few."""
    if not report.languages:
        return []
    fonts = styles.fonts
    rows: list[list[Any]] = [["Language", "Items", "Experts", "Experts' α", "n", "Judge vs majority α", "n"]]
    notes = []
    for cell in report.languages:
        label = language_label(cell.language)
        if cell.words:
            rows.append([label, cell.n_items, cell.n_experts, "—", "—", "—", "—"])
            notes.append(cell.words)
            continue
        rows.append([label, cell.n_items, cell.n_experts, f"{fmt(cell.alpha)} {interval_of(cell.alpha_ci)}",
                     cell.n_pairable_units, f"{fmt(cell.judge_alpha)} {interval_of(cell.judge_alpha_ci)}", cell.n_judged])
    out: list[Flowable] = [Paragraph(escape(fonts.text("By case language")), styles.heading),
                           table(rows, [110, 40, 50, 130, 40, 130, 40], fonts, text_columns=(0, 3, 5))]
    out += [styles.paragraph(f"• {note}", styles.muted) for note in notes]
    return out


def report_pdf(report: Report, *, version: int | None = None, input_hash: str | None = None) -> bytes:
    """The report as PDF bytes; `version` and `input_hash` (of a report snapshot) go in every page's header."""
    fonts = report_fonts()
    styles = Styles(fonts)
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=PAGE, leftMargin=MARGIN_X, rightMargin=MARGIN_X, topMargin=MARGIN_TOP,
                            bottomMargin=MARGIN_BOTTOM, title="FaithBench calibration report",
                            subject=str(report.meta.cycle or ""), invariant=1)
    frame_w, frame_h = doc.width - 12, doc.height - 12  # a frame pads its flowables by 6 pt on each side
    meta = report.meta
    p = styles.paragraph
    story: list[Flowable] = [
        Paragraph(escape(fonts.text(f"IRR report: {_or_dash(meta.cycle)}")), styles.title),
        p(f"Rubric v{_or_dash(meta.rubric_version)} · judge run {meta.judge_run or '—'} · "
          f"{report.n_experts} experts · seed {meta.seed} · {meta.n_resamples} bootstrap resamples "
          f"(95 %, {methods_sentence(report_methods(report))} per coefficient, units resampled; stratified by "
          f"dimension where a group spans dimensions)", styles.muted),
        p(f"Targets (methodology §5.7.2): α ≥ {TARGETS['alpha']}, κ ≥ {TARGETS['kappa']}, exact agreement ≥ "
          f"{TARGETS['exact_agreement']:.0%}. The judge passes only if α(judge, expert majority) ≥ "
          f"{TARGETS['alpha']}. A verdict is uncertain when the 95 % interval straddles the target. "
          f"Expert majority: {meta.majority_rule}.", styles.muted),
        *_summary(report, styles),
    ]
    for comparison, title in (("experts", "Experts among themselves: α (ordinal)"),
                              ("judge_vs_majority", "Judge against the expert majority: α (ordinal)")):
        story.append(Spacer(1, 8))
        story += _forest_chunks(forest_rows(report, comparison, label=_label), title=title, width=frame_w,
                                height=frame_h - 4, fonts=fonts)
    story += [Paragraph(escape(fonts.text("All groups")), styles.heading), _groups_table(report, fonts, frame_w)]

    overall = report.overall
    experts = overall.experts
    story.append(Paragraph(escape(fonts.text("Raters (overall): α without the rater")), styles.heading))
    raters = [["Code", "α without", "change"]] + [
        [r.rater, fmt(r.alpha_without), fmt(r.change)]
        for r in experts.leave_one_rater_out]
    story += (sheets(raters, [60, 60, 60], fonts, n_columns=4, height=frame_h - 20) if len(raters) > 1
              else [p("Fewer than three experts rated: no leave-one-out α.", styles.muted)])
    story.append(Paragraph(escape(fonts.text("Pairwise κ (quadratic, overall)")), styles.heading))
    pairs = [["Pair", "common units", "κ", "exact"]] + [
        [f"{a} · {b}", pair.n_units, fmt(pair.quadratic_kappa), fmt(pair.exact_agreement)]
        for pair in experts.pairwise_kappa for a, b in [pair.raters]]
    story += (sheets(pairs, [90, 66, 50, 50], fonts, n_columns=3, height=frame_h - 20) if len(pairs) > 1
              else [p("No pair of experts shares two or more units yet.", styles.muted)])
    story += _intervals_section(overall, styles, frame_w)
    story += _diagnostics_section(overall, styles)
    story.append(Paragraph(escape(fonts.text("Confusion matrices (overall; rows: judge score)")), styles.heading))
    story.append(Table([[_confusion_table(overall.judge_vs_gold.confusion, "gold", fonts),
                         _confusion_table(overall.judge_vs_majority.confusion, "majority", fonts)]],
                       colWidths=[220, 220], hAlign="LEFT", style=[("VALIGN", (0, 0), (-1, -1), "TOP"),
                                                                   ("LEFTPADDING", (0, 0), (-1, -1), 0)]))
    story += _languages_section(report, styles)
    if experts.warnings:
        story.append(Paragraph(escape(fonts.text("Notes")), styles.heading))
        story += [p(f"• {warning}", styles.muted) for warning in experts.warnings]
    decorate = _page_decoration(report, fonts, version, input_hash)
    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buffer.getvalue()
