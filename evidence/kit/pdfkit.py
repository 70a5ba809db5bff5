"""The PDF kit every artefact's printable summary shares (a cycle's report, a study's report, the calibrated
leaderboard): page size and margins, fonts (DejaVu Sans when the system has it, else Helvetica with signs spelled
out), visual order for right-to-left runs, paragraph styles, long tables, side-by-side sheets, text cut to fit,
number and interval formats, and every page's header and footer.

Text is set in DejaVu Sans when the system has it (Greek, Hebrew and the α/κ/≥ signs); otherwise in the
builtin Helvetica, with those signs spelled out. reportlab draws characters in the order given, so
right-to-left runs are put in drawing order by :func:`visual_order`, a small stand-in for the Unicode
bidi algorithm.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import LongTable, Paragraph, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate
from reportlab.platypus.flowables import Flowable

from .numbers import estimate, interval_of

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


def fmt(value: float | None, digits: int = 3) -> str:
    """A number as the report page shows it: the one formatter's `estimate` (evidence/kit/numbers.py)."""
    return estimate(value, digits)


def interval_text(interval: Sequence[float | None] | None, digits: int) -> str:
    """An interval as the report shows it, "[low, high]"; empty without one (the one formatter's `interval`)."""
    return interval_of(interval, digits)


class Styles:
    """The paragraph styles of a report in its fonts."""

    def __init__(self, fonts: Fonts) -> None:
        self.fonts = fonts
        self.title = ParagraphStyle("title", fontName=fonts.bold, fontSize=16, leading=20, spaceAfter=6)
        self.heading = ParagraphStyle("heading", fontName=fonts.bold, fontSize=11, leading=14, spaceBefore=10,
                                      spaceAfter=4, keepWithNext=1)
        self.body = ParagraphStyle("body", fontName=fonts.regular, fontSize=8.5, leading=11)
        self.muted = ParagraphStyle("muted", parent=self.body, textColor=colors.HexColor("#55606e"))

    def paragraph(self, text: str, style: ParagraphStyle | None = None) -> Paragraph:
        return Paragraph(escape(self.fonts.text(text)), style or self.body)


def table(rows: list[list[Any]], widths: Sequence[float], fonts: Fonts, *, text_columns: Sequence[int] = (0,)
           ) -> LongTable:
    """A long table: header row repeated on every page, rows split across pages, numbers right-aligned."""
    cells = [[fonts.text(str(cell)) if isinstance(cell, str) else cell for cell in row] for row in rows]
    long_table = LongTable(cells, colWidths=list(widths), rowHeights=TABLE_ROW_PT, repeatRows=1, hAlign="LEFT")
    verdicts = [("TEXTCOLOR", (c, r), (c, r), colors.HexColor(VERDICT_COLOURS[cell]))
                for r, row in enumerate(rows[1:], start=1) for c, cell in enumerate(row)
                if isinstance(cell, str) and cell in VERDICT_COLOURS]
    long_table.setStyle(TableStyle([
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
    return long_table


def sheets(rows: list[list[Any]], widths: Sequence[float], fonts: Fonts, *, n_columns: int,
            height: float) -> list[Flowable]:
    """A narrow long table laid out in side-by-side columns, one page-high sheet at a time, header in each."""
    per_column = max(2, int(height // TABLE_ROW_PT) - 1)
    header, body = rows[0], rows[1:]
    per_sheet = per_column * n_columns
    sheets: list[Flowable] = []
    for start in range(0, len(body), per_sheet):
        part = body[start:start + per_sheet]
        columns = [table([header, *part[i:i + per_column]], widths, fonts) for i in range(0, len(part), per_column)]
        sheets.append(Table([columns], colWidths=[sum(widths) + 12] * len(columns), hAlign="LEFT",
                            style=[("VALIGN", (0, 0), (-1, -1), "TOP"),
                                   ("LEFTPADDING", (0, 0), (-1, -1), 0), ("RIGHTPADDING", (0, 0), (-1, -1), 12)]))
    return sheets


def fit(text: str, font: str, size: float, width: float) -> str:
    """The text, cut with an ellipsis when it is wider than `width` points."""
    if pdfmetrics.stringWidth(text, font, size) <= width:
        return text
    while text and pdfmetrics.stringWidth(text + "…", font, size) > width:
        text = text[:-1]
    return text + "…"


def page_decoration(fonts: Fonts, *, heading: str, name: str, line: str, footer: str = ""
                    ) -> Callable[[Canvas, BaseDocTemplate], None]:
    """Every page's header (heading + name, cut to fit; the snapshot line) and footer (and page number)."""
    heading, name, line, footer = (fonts.text(t) for t in (heading, name, line, footer))
    width, height = PAGE

    def decorate(canvas: Canvas, doc: BaseDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont(fonts.bold, 9)
        canvas.drawString(MARGIN_X, height - 24, heading + fit(name, fonts.bold, 9, width - 2 * MARGIN_X
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


