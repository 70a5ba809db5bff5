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
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.graphics.shapes import Circle, Drawing, Line, String
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import LongTable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate
from reportlab.platypus.flowables import Flowable

from .build import TARGETS
from .render import _fmt, diagnostic_rows, forest_rows, interval_rows

PAGE = landscape(A4)
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 36.0, 54.0, 40.0
LABEL_PT = 7.0  # the smallest text in the document
ROW_PT = 12.0  # one forest-plot row
TABLE_ROW_PT = 11.0  # one table row
VERDICT_COLOURS = {"pass": "#2d7a46", "fail": "#a33a2b", "uncertain": "#b7791f", "undefined": "#8a94a3"}
FONT_DIRECTORIES = ("/usr/share/fonts", "/usr/local/share/fonts", "/Library/Fonts")
FALLBACK_SIGNS = {"α": "alpha", "κ": "kappa", "≥": ">=", "≤": "<=", "−": "-", "Δ": "delta", "…": "..."}


@dataclass(frozen=True)
class Fonts:
    """The report's regular and bold font names, and whether they cover Greek and Hebrew."""

    regular: str
    bold: str
    unicode: bool  # False: the builtin Helvetica, which has no Greek or Hebrew

    def text(self, value: str) -> str:
        """The text as this font can show it: in visual order in DejaVu, signs spelled out in Helvetica."""
        if self.unicode:
            return visual_order(value)
        for sign, spelled in FALLBACK_SIGNS.items():
            value = value.replace(sign, spelled)
        return value.encode("cp1252", "replace").decode("cp1252")


def visual_order(text: str) -> str:
    """Right-to-left runs (Hebrew, Arabic) reversed into the order they are drawn in, left to right.

    reportlab draws characters in the order given. A run starts and ends with a right-to-left letter
    and takes the spaces and punctuation between such letters; a letter keeps its combining marks
    (niqqud). Digits and mirrored brackets inside a run are not handled (the Unicode bidi algorithm,
    UAX #9, does that; no package for it is installed). Example: ``visual_order("cycle דבר")`` → ``"cycle רבד"``.
    """
    if not any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text):
        return text
    clusters: list[str] = []
    for ch in text:
        if clusters and unicodedata.combining(ch):
            clusters[-1] += ch
        else:
            clusters.append(ch)
    rtl = [unicodedata.bidirectional(c[0]) in ("R", "AL") for c in clusters]
    neutral = [unicodedata.bidirectional(c[0]) in ("WS", "ON", "CS", "ES", "ET") for c in clusters]
    out: list[str] = []
    i = 0
    while i < len(clusters):
        if not rtl[i]:
            out.append(clusters[i])
            i += 1
            continue
        end = i
        j = i
        while j < len(clusters) and (rtl[j] or neutral[j]):
            if rtl[j]:
                end = j
            j += 1
        out.extend(reversed(clusters[i:end + 1]))
        i = end + 1
    return "".join(out)


@lru_cache(maxsize=1)
def _dejavu_files() -> tuple[Path, Path] | None:
    """DejaVu Sans and DejaVu Sans Bold from the system's font directories (what fc-list lists), if present."""
    for directory in FONT_DIRECTORIES:
        root = Path(directory)
        if not root.is_dir():
            continue
        regular = next(iter(sorted(root.rglob("DejaVuSans.ttf"))), None)
        if regular is not None and (regular.parent / "DejaVuSans-Bold.ttf").is_file():
            return regular, regular.parent / "DejaVuSans-Bold.ttf"
    return None


def report_fonts() -> Fonts:
    """Register DejaVu Sans with reportlab when the system has it; else the builtin Helvetica."""
    files = _dejavu_files()
    if files is None:
        return Fonts("Helvetica", "Helvetica-Bold", unicode=False)
    if "FaithBenchSans" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("FaithBenchSans", str(files[0])))
        pdfmetrics.registerFont(TTFont("FaithBenchSans-Bold", str(files[1])))
        pdfmetrics.registerFontFamily("FaithBenchSans", normal="FaithBenchSans", bold="FaithBenchSans-Bold",
                                      italic="FaithBenchSans", boldItalic="FaithBenchSans-Bold")
    return Fonts("FaithBenchSans", "FaithBenchSans-Bold", unicode=True)


def _ci(interval: Sequence[float] | None, digits: int) -> str:
    return f"[{_fmt(interval[0], digits)}, {_fmt(interval[1], digits)}]" if interval else ""


def _label(group: dict[str, Any]) -> str:
    return "Overall" if group["kind"] == "overall" else f"{group['kind']}: {group['value']}"


class _Styles:
    def __init__(self, fonts: Fonts) -> None:
        self.fonts = fonts
        self.title = ParagraphStyle("title", fontName=fonts.bold, fontSize=16, leading=20, spaceAfter=6)
        self.heading = ParagraphStyle("heading", fontName=fonts.bold, fontSize=11, leading=14, spaceBefore=10,
                                      spaceAfter=4, keepWithNext=1)
        self.body = ParagraphStyle("body", fontName=fonts.regular, fontSize=8.5, leading=11)
        self.muted = ParagraphStyle("muted", parent=self.body, textColor=colors.HexColor("#55606e"))

    def paragraph(self, text: str, style: ParagraphStyle | None = None) -> Paragraph:
        return Paragraph(escape(self.fonts.text(text)), style or self.body)


def _table(rows: list[list[Any]], widths: Sequence[float], fonts: Fonts, *, text_columns: Sequence[int] = (0,)
           ) -> LongTable:
    """A long table: header row repeated on every page, rows split across pages, numbers right-aligned."""
    cells = [[fonts.text(str(cell)) if isinstance(cell, str) else cell for cell in row] for row in rows]
    table = LongTable(cells, colWidths=list(widths), rowHeights=TABLE_ROW_PT, repeatRows=1, hAlign="LEFT")
    verdicts = [("TEXTCOLOR", (c, r), (c, r), colors.HexColor(VERDICT_COLOURS[cell]))
                for r, row in enumerate(rows[1:], start=1) for c, cell in enumerate(row)
                if isinstance(cell, str) and cell in VERDICT_COLOURS]
    table.setStyle(TableStyle([
        ("FONTNAME", (0, 0), (-1, -1), fonts.regular),
        ("FONTNAME", (0, 0), (-1, 0), fonts.bold),
        ("FONTSIZE", (0, 0), (-1, -1), LABEL_PT),
        ("LEADING", (0, 0), (-1, -1), LABEL_PT + 1.5),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
        ("ALIGN", (0, 1), (-1, -1), "RIGHT"),
        *[("ALIGN", (c, 1), (c, -1), "LEFT") for c in text_columns],
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8edf3")),
        ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#c5ccd6")),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        *verdicts,
    ]))
    return table


def _sheets(rows: list[list[Any]], widths: Sequence[float], fonts: Fonts, *, n_columns: int,
            height: float) -> list[Flowable]:
    """A narrow long table laid out in side-by-side columns, one page-high sheet at a time, header in each."""
    per_column = max(2, int(height // TABLE_ROW_PT) - 1)
    header, body = rows[0], rows[1:]
    per_sheet = per_column * n_columns
    sheets: list[Flowable] = []
    for start in range(0, len(body), per_sheet):
        part = body[start:start + per_sheet]
        columns = [_table([header, *part[i:i + per_column]], widths, fonts) for i in range(0, len(part), per_column)]
        sheets.append(Table([columns], colWidths=[sum(widths) + 12] * len(columns), hAlign="LEFT",
                            style=[("VALIGN", (0, 0), (-1, -1), "TOP"),
                                   ("LEFTPADDING", (0, 0), (-1, -1), 0), ("RIGHTPADDING", (0, 0), (-1, -1), 12)]))
    return sheets


def _fit(text: str, font: str, size: float, width: float) -> str:
    """The text, cut with an ellipsis when it is wider than `width` points."""
    if pdfmetrics.stringWidth(text, font, size) <= width:
        return text
    while text and pdfmetrics.stringWidth(text + "…", font, size) > width:
        text = text[:-1]
    return text + "…"


def _forest_chunks(rows: list[dict[str, Any]], *, title: str, width: float, height: float,
                   fonts: Fonts) -> list[Drawing]:
    """The forest plot as drawings that each fit `height`: as many rows per chunk as fit, one common scale."""
    title_h, axis_h = 26.0, 26.0
    fits = max(1, int((height - title_h - axis_h) // ROW_PT))
    n_chunks = max(1, -(-len(rows) // fits))
    per_chunk = -(-max(len(rows), 1) // n_chunks)  # rows spread evenly over the chunks
    lows = [r["ci"][0] for r in rows if r["ci"]] + [r["alpha"] for r in rows if r["alpha"] is not None]
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
            colour = colors.HexColor(VERDICT_COLOURS.get(row["verdict"], VERDICT_COLOURS["undefined"]))
            label = _fit(fonts.text(row["label"]), fonts.regular, LABEL_PT, label_w - 4)
            drawing.add(String(label_w, y - 2.5, label, fontName=fonts.regular, fontSize=LABEL_PT, textAnchor="end"))
            if row["ci"]:
                drawing.add(Line(x(row["ci"][0]), y, x(row["ci"][1]), y, strokeColor=colour, strokeWidth=1.4))
            if row["alpha"] is not None:
                drawing.add(Circle(x(row["alpha"]), y, 2.4, fillColor=colour, strokeColor=colour))
            interval = f" {_ci(row['ci'], 2)}" if row["ci"] else ""
            drawing.add(String(left + plot_w + 10, y - 2.5, f"{_fmt(row['alpha'])}{interval}  n = {row['n']} pairable units  "
                               f"{row['verdict']}", fontName=fonts.regular, fontSize=LABEL_PT))
        chunks.append(drawing)
    return chunks


def _summary(report: dict[str, Any], styles: _Styles) -> list[Flowable]:
    overall = next(g for g in report["groups"] if g["kind"] == "overall")
    e, m, g = overall["experts"], overall["judge_vs_majority"], overall["judge_vs_gold"]
    ev, mv = e.get("verdicts") or {}, m.get("verdicts") or {}
    p = styles.paragraph
    return [
        Paragraph(escape(styles.fonts.text("Experts among themselves (overall)")), styles.heading),
        p(f"α = {_fmt(e.get('krippendorff_alpha'))} {_ci(e.get('alpha_ci'), 3)} {ev.get('alpha', 'undefined')} · "
          f"P(α < {e.get('alpha_min', '—')}) = {_fmt(e.get('alpha_below_min_probability'))} · "
          f"n = {e.get('n_pairable_units', '—')} pairable units of {overall['n_units']}"),
        p(f"Exact agreement {_fmt(e.get('percent_agreement'))} {ev.get('exact_agreement', 'undefined')} · "
          f"mean pairwise κ (quadratic) {_fmt(e.get('mean_pairwise_quadratic_kappa'))} {ev.get('kappa', 'undefined')} · "
          f"Fleiss' κ {_fmt(e.get('fleiss_kappa'))} · Gwet's AC1 {_fmt(e.get('gwet_ac1'))}"),
        Paragraph(escape(styles.fonts.text("Judge against the panel (overall)")), styles.heading),
        p(f"vs expert majority: α = {_fmt(m.get('alpha'))} {_ci(m.get('alpha_ci'), 3)} "
          f"{mv.get('alpha', 'undefined')} · n = {m['n_units']} pairable units · κ (quadratic) {_fmt(m.get('quadratic_kappa'))} · "
          f"exact {_fmt(m.get('exact_agreement'))} · mean signed difference (judge − majority) "
          f"{_fmt(m.get('mean_signed_difference'))}"),
        p(f"vs adjudicated gold: α = {_fmt(g.get('alpha'))} {_ci(g.get('alpha_ci'), 3)} · κ (quadratic) "
          f"{_fmt(g.get('quadratic_kappa'))} · exact {_fmt(g.get('exact_agreement'))} · n = {g['n_units']} pairable units"),
        p(f"Panel α without the judge {_fmt(overall.get('panel_alpha_without_judge'))} · with the judge as one "
          f"more rater {_fmt(overall.get('panel_alpha_with_judge'))}"),
    ]


def _groups_table(report: dict[str, Any], fonts: Fonts, width: float) -> LongTable:
    header = ["Group", "pairable units", "experts α", "95 % CI", "", "exact", "judge α (majority)", "95 % CI", "",
              "judge κ", "judge α (gold)", "pairable (gold)"]
    widths = [150, 44, 46, 66, 50, 40, 74, 66, 50, 40, 62, 48]
    rows: list[list[Any]] = [header]
    for group in report["groups"]:
        e, m, g = group["experts"], group["judge_vs_majority"], group["judge_vs_gold"]
        rows.append([
            _fit(_label(group), fonts.regular, LABEL_PT, widths[0] - 6), e["n_pairable_units"],  # _table sets the text
            _fmt(e.get("krippendorff_alpha")), _ci(e.get("alpha_ci"), 2), (e.get("verdicts") or {}).get("alpha", ""),
            _fmt(e.get("percent_agreement")), _fmt(m.get("alpha")), _ci(m.get("alpha_ci"), 2),
            (m.get("verdicts") or {}).get("alpha", "undefined"), _fmt(m.get("quadratic_kappa")),
            _fmt(g.get("alpha")), g["n_units"],
        ])
    scale = min(1.0, width / sum(widths))
    return _table(rows, [w * scale for w in widths], fonts, text_columns=(0, 3, 4, 7, 8))


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


def _page_decoration(report: dict[str, Any], fonts: Fonts, version: int | None,
                     input_hash: str | None) -> Callable[[Canvas, BaseDocTemplate], None]:
    meta = report["meta"]
    return page_decoration(
        fonts, heading="FaithBench calibration report — cycle: ", name=str(meta.get("cycle") or "—"),
        line=f"snapshot version {'—' if version is None else version} · input hash {input_hash or '—'}",
        footer=f"seed {meta.get('seed')} · {meta.get('n_resamples')} bootstrap resamples · "
               f"rubric v{meta.get('rubric_version', '—')} · judge run {meta.get('judge_run') or '—'}")


def page_decoration(fonts: Fonts, *, heading: str, name: str, line: str, footer: str = ""
                    ) -> Callable[[Canvas, BaseDocTemplate], None]:
    """Every page's header (heading + name, cut to fit; the snapshot line) and footer (and page number)."""
    heading, name, line, footer = (fonts.text(t) for t in (heading, name, line, footer))
    width, height = PAGE

    def decorate(canvas: Canvas, doc: BaseDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont(fonts.bold, 9)
        canvas.drawString(MARGIN_X, height - 24, heading + _fit(name, fonts.bold, 9, width - 2 * MARGIN_X
                                                                - pdfmetrics.stringWidth(heading, fonts.bold, 9)))
        canvas.setFont(fonts.regular, LABEL_PT)
        canvas.drawString(MARGIN_X, height - 35, line)
        canvas.setStrokeColor(colors.HexColor("#c5ccd6"))
        canvas.line(MARGIN_X, height - 40, width - MARGIN_X, height - 40)
        if footer:
            canvas.drawString(MARGIN_X, 22, footer)
        canvas.drawRightString(width - MARGIN_X, 22, f"page {doc.page}")
        canvas.restoreState()

    return decorate


def _intervals_section(overall: dict[str, Any], styles: _Styles, width: float) -> list[Flowable]:
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
        for row in interval_rows(overall[comparison], comparison):
            interval = row["interval"] or {}
            bounded = interval.get("low") is not None
            # The coverage figure first: the column is narrower than the page's, and the design is in the heading.
            basis = interval.get("coverage_basis") if interval.get("coverage") is not None else None
            if not bounded:
                reliable = "—"
            elif interval.get("reliable"):
                reliable = f"yes ({basis})" if basis else "yes"
            else:
                reliable = f"no: {basis or interval.get('reason')}"
            rows.append([title, row["label"], _fmt(row["value"]),
                         _ci([interval["low"], interval["high"]], 3) if bounded else "—",
                         interval.get("method") or "—", _fit(reliable, fonts.regular, LABEL_PT, widths[-1] - 6)])
    if len(rows) == 1:
        return [*out, styles.paragraph("No coefficient is defined for these data yet.", styles.muted)]
    return [*out, _table(rows, widths, fonts, text_columns=(0, 1, 3, 4, 5))]


def _diagnostics_section(overall: dict[str, Any], styles: _Styles) -> list[Flowable]:
    """Each rater's bias against the rest of the panel (overall) and the judge's Bland–Altman summary."""
    fonts = styles.fonts
    out: list[Flowable] = [Paragraph(escape(fonts.text("Rater diagnostics (overall)")), styles.heading)]
    rows: list[list[Any]] = [["Code", "n", "bias", "95 % interval", "flag", "α without"]]
    for d in diagnostic_rows(overall):
        rows.append([d["rater"], d["n_units"], _fmt(d["mean_difference"], 2),
                     _ci([d["low"], d["high"]], 2) if d["low"] is not None else "—",
                     "flagged" if d["flagged"] else "—", _fmt(d["alpha_without"])])
    if len(rows) > 1:
        out.append(_table(rows, [60, 36, 44, 84, 44, 54], fonts, text_columns=(0, 3, 4)))
    else:
        out.append(styles.paragraph("Diagnostics need two or more raters.", styles.muted))
    ba = overall["judge_vs_majority"].get("bland_altman")
    if ba:
        limits = _ci([ba["lower_limit"], ba["upper_limit"]], 2) if ba.get("lower_limit") is not None else "—"
        out.append(styles.paragraph(
            f"Judge − expert median (Bland–Altman, n = {ba['n_units']}): mean {_fmt(ba['mean_difference'], 2)}, "
            f"SD {_fmt(ba['sd'], 2)}, 95 % limits of agreement {limits}. A rater is flagged when the whole bias "
            "interval lies more than 0.5 points from 0.", styles.muted))
    return out


def report_pdf(report: dict[str, Any], *, version: int | None = None, input_hash: str | None = None) -> bytes:
    """The report as PDF bytes; `version` and `input_hash` (of a report snapshot) go in every page's header."""
    fonts = report_fonts()
    styles = _Styles(fonts)
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=PAGE, leftMargin=MARGIN_X, rightMargin=MARGIN_X, topMargin=MARGIN_TOP,
                            bottomMargin=MARGIN_BOTTOM, title="FaithBench calibration report",
                            subject=str(report["meta"].get("cycle") or ""), invariant=1)
    frame_w, frame_h = doc.width - 12, doc.height - 12  # a frame pads its flowables by 6 pt on each side
    meta = report["meta"]
    p = styles.paragraph
    story: list[Flowable] = [
        Paragraph(escape(fonts.text(f"IRR report: {meta.get('cycle', '—')}")), styles.title),
        p(f"Rubric v{meta.get('rubric_version', '—')} · judge run {meta.get('judge_run') or '—'} · "
          f"{report['n_experts']} experts · seed {meta['seed']} · {meta['n_resamples']} bootstrap resamples "
          f"(95 %, percentile, units resampled; stratified by dimension where a group spans dimensions)", styles.muted),
        p(f"Targets (methodology §5.7.2): α ≥ {TARGETS['alpha']}, κ ≥ {TARGETS['kappa']}, exact agreement ≥ "
          f"{TARGETS['exact_agreement']:.0%}. The judge passes only if α(judge, expert majority) ≥ "
          f"{TARGETS['alpha']}. A verdict is uncertain when the 95 % interval straddles the target. "
          f"Expert majority: {meta['majority_rule']}.", styles.muted),
        *_summary(report, styles),
    ]
    for comparison, title in (("experts", "Experts among themselves: α (ordinal)"),
                              ("judge_vs_majority", "Judge against the expert majority: α (ordinal)")):
        story.append(Spacer(1, 8))
        story += _forest_chunks(forest_rows(report, comparison), title=title, width=frame_w,
                                height=frame_h - 4, fonts=fonts)
    story += [Paragraph(escape(fonts.text("All groups")), styles.heading), _groups_table(report, fonts, frame_w)]

    overall = next(g for g in report["groups"] if g["kind"] == "overall")
    experts = overall["experts"]
    story.append(Paragraph(escape(fonts.text("Raters (overall): α without the rater")), styles.heading))
    raters = [["Code", "α without", "change"]] + [
        [r["rater"], _fmt(r.get("alpha_without")), _fmt(r.get("change"))]
        for r in experts.get("leave_one_rater_out", [])]
    story += (_sheets(raters, [60, 60, 60], fonts, n_columns=4, height=frame_h - 20) if len(raters) > 1
              else [p("Fewer than three experts rated: no leave-one-out α.", styles.muted)])
    story.append(Paragraph(escape(fonts.text("Pairwise κ (quadratic, overall)")), styles.heading))
    pairs = [["Pair", "common units", "κ", "exact"]] + [
        [f"{a} · {b}", pair["n_units"], _fmt(pair.get("quadratic_kappa")), _fmt(pair.get("exact_agreement"))]
        for pair in experts.get("pairwise_kappa", []) for a, b in [pair["raters"]]]
    story += (_sheets(pairs, [90, 66, 50, 50], fonts, n_columns=3, height=frame_h - 20) if len(pairs) > 1
              else [p("No pair of experts shares two or more units yet.", styles.muted)])
    story += _intervals_section(overall, styles, frame_w)
    story += _diagnostics_section(overall, styles)
    story.append(Paragraph(escape(fonts.text("Confusion matrices (overall; rows: judge score)")), styles.heading))
    story.append(Table([[_confusion_table(overall["judge_vs_gold"].get("confusion"), "gold", fonts),
                         _confusion_table(overall["judge_vs_majority"].get("confusion"), "majority", fonts)]],
                       colWidths=[220, 220], hAlign="LEFT", style=[("VALIGN", (0, 0), (-1, -1), "TOP"),
                                                                   ("LEFTPADDING", (0, 0), (-1, -1), 0)]))
    if experts.get("warnings"):
        story.append(Paragraph(escape(fonts.text("Notes")), styles.heading))
        story += [p(f"• {warning}", styles.muted) for warning in experts["warnings"]]
    decorate = _page_decoration(report, fonts, version, input_hash)
    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buffer.getvalue()
