"""A study's report as a PDF: per dimension the humans' coefficients with intervals, each judge against them,
the rater groups and the judges' confusion matrices. Same fonts, tables and page furniture as a cycle's PDF
(study, version and input hash on every page); invariant output, so the same report renders to the same bytes."""
from __future__ import annotations

import io
from typing import Any
from xml.sax.saxutils import escape

from reportlab.pdfbase import pdfmetrics
from reportlab.platypus import Paragraph, SimpleDocTemplate, Table
from reportlab.platypus.flowables import Flowable

from evidence.kit.numbers import interval, method_label
from evidence.kit.pdfkit import (
    LABEL_PT,
    MARGIN_BOTTOM,
    MARGIN_TOP,
    MARGIN_X,
    PAGE,
    Fonts,
    Styles,
    fmt,
    page_decoration,
    report_fonts,
    table,
)

from .report import (
    HUMAN_METRICS,
    METRIC_LABELS,
    Confusion,
    StudyDimension,
    StudyGroup,
    StudyJudge,
    StudyReport,
    summary_interval,
)


def _humans_rows(label: str, block: StudyDimension | StudyGroup) -> list[list[Any]]:
    humans = block.humans
    if not humans:
        return [[label, "fewer than two human raters", "", "", "", ""]]
    rows = []
    for metric in HUMAN_METRICS:
        value = humans.get(metric)
        if isinstance(value, (int, float)) or value is None:
            low, high = summary_interval(humans, metric)
            entry = (humans.get("intervals") or {}).get(metric)
            method = method_label(entry.get("method")) if isinstance(entry, dict) and low is not None else ""
            rows.append([label, METRIC_LABELS[metric], fmt(value), interval(low, high), method,
                         humans.get("n_units", "")])
    return rows


def _judge_rows(label: str, block: StudyDimension | StudyGroup) -> list[list[Any]]:
    return [[label, judge.rater, judge.n_items, fmt(judge.spearman_rho), fmt(judge.kendall_tau_b),
             fmt(judge.mean_signed_difference), fmt(judge.cohen_kappa_linear),
             fmt(judge.alpha_without_judge), fmt(judge.alpha_with_judge)]
            for judge in block.judges]


def _confusion(judge: StudyJudge, confusion: Confusion, fonts: Fonts) -> Table:
    labels = [str(v) for v in confusion.labels]
    rows = [[f"{judge.rater} ↓ / humans →", *labels]] + [
        [labels[i], *[str(c) for c in row]] for i, row in enumerate(confusion.matrix)]
    return table(rows, [max(80.0, 8.0 + pdfmetrics.stringWidth(rows[0][0], fonts.bold, LABEL_PT))]
                  + [22.0] * len(labels), fonts)


def study_report_pdf(report: StudyReport, *, version: int | None = None, input_hash: str | None = None) -> bytes:
    """The study's report as PDF bytes; `version` and `input_hash` go in every page's header."""
    fonts = report_fonts()
    styles = Styles(fonts)
    buffer = io.BytesIO()
    meta = report.meta
    doc = SimpleDocTemplate(buffer, pagesize=PAGE, leftMargin=MARGIN_X, rightMargin=MARGIN_X, topMargin=MARGIN_TOP,
                            bottomMargin=MARGIN_BOTTOM, title="FaithBench study report",
                            subject=str(meta.study or ""), invariant=1)
    p = styles.paragraph
    story: list[Flowable] = [
        Paragraph(escape(fonts.text(f"Rating study: {'—' if meta.study is None else meta.study}")), styles.title),
        p(f"Source: {meta.source or '—'} · seed {meta.seed} · {meta.n_resamples} bootstrap resamples "
          f"(items resampled; the interval of each coefficient is the one its simulated coverage supports, "
          f"named in the Method column)", styles.muted),
        p(f"Judges: {'' if meta.judge_reference is None else meta.judge_reference}.", styles.muted),
    ]
    for key, entry in report.dimensions.items():
        scale = entry.scale or [None, None]
        story.append(Paragraph(escape(fonts.text(
            f"{key} — {entry.level}, scale {fmt(scale[0], 0) if scale[0] is not None else '—'}–"
            f"{fmt(scale[1], 0) if scale[1] is not None else '—'}, {entry.n_items} items, "
            f"{entry.n_humans} human raters")), styles.heading))
        blocks: list[tuple[str, StudyDimension | StudyGroup]] = [("all raters", entry)] + [
            (f"group {name}", block) for name, block in entry.groups.items()]
        humans = [["Raters", "Coefficient", "Value", "95 % interval", "Method", "Units"]]
        for label, block in blocks:
            humans += _humans_rows(label, block)
        story.append(table(humans, [130, 120, 55, 105, 55, 45], fonts, text_columns=(0, 1)))
        judges = [["Raters", "Judge", "Items", "ρ", "τ-b", "mean diff.", "κ (linear)", "α humans", "α with judge"]]
        for label, block in blocks:
            judges += _judge_rows(label, block)
        if len(judges) > 1:
            story.append(Paragraph(escape(fonts.text("Judges against the humans")), styles.heading))
            story.append(table(judges, [130, 160, 40, 50, 50, 55, 55, 55, 65], fonts, text_columns=(0, 1)))
            matrices = [_confusion(judge, judge.confusion, fonts) for judge in entry.judges if judge.confusion]
            if matrices:
                story.append(Paragraph(escape(fonts.text("Confusion matrices (rows: judge; columns: lower human "
                                                         "median)")), styles.heading))
                story += matrices
        notes = (entry.humans.get("warnings") if entry.humans else None) or []
        story += [p(f"• {note}", styles.muted) for note in notes]
    decorate = page_decoration(
        fonts, heading="FaithBench calibration — rating study: ", name=str(meta.study or "—"),
        line=f"snapshot version {'—' if version is None else version} · input hash {input_hash or '—'}")
    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buffer.getvalue()
