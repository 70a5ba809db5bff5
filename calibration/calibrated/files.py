"""The calibrated leaderboard's files: inputs.csv (the exact rows; its SHA-256 is the input hash), report.json,
tables.csv (long format), report.pdf and the citable zip bundle — each rendered once, same rows → same bytes."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import fields
from typing import Any, TypedDict
from xml.sax.saxutils import escape

from reportlab.platypus import Paragraph, SimpleDocTemplate

from evaluations.labels import language_label, rubric_label, tradition_label
from evaluations.spreadsheet import csv_row_unprotect, csv_writer
from evidence.kit.files import citable_bundle
from evidence.kit.pdfkit import (
    MARGIN_BOTTOM,
    MARGIN_TOP,
    MARGIN_X,
    PAGE,
    Styles,
    page_decoration,
    report_fonts,
    table,
)
from evidence.models import SnapshotFile

from .build import InputRow
from .schema import CalibratedReport, Cell, Estimate, ModelEntry, Pair, Span, TruthSensitivity, Verdict

INPUT_FIELDS = [f.name for f in fields(InputRow)]
LEGACY_INPUT_FIELDS = INPUT_FIELDS[:INPUT_FIELDS.index("arrival")]
SCHEMA2_INPUT_FIELDS = INPUT_FIELDS[:INPUT_FIELDS.index("expert_fair")]  # before the severity-adjusted truth
PRE_LANGUAGE_INPUT_FIELDS = INPUT_FIELDS[:INPUT_FIELDS.index("language")]  # before issue 35: English
FILE_NAMES = {
    SnapshotFile.Format.JSON: "report.json",
    SnapshotFile.Format.CSV: "tables.csv",
    SnapshotFile.Format.PDF: "report.pdf",
    SnapshotFile.Format.RATINGS: "inputs.csv",
}
TABLE_FIELDS = ["model", "facet", "value", "board", "estimate", "lower", "upper", "n", "lam", "covered_weight",
                "status", "verdict", "looks", "more_labels", "lever", "words"]


def _cell(value: Any) -> Any:
    return "" if value is None else value


def inputs_csv(rows: list[InputRow]) -> bytes:
    """The input rows, one per judged response, in response order."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(INPUT_FIELDS)
    for row in sorted(rows, key=lambda r: r.response_id):
        writer.writerow(_cell(getattr(row, name)) for name in INPUT_FIELDS)
    return out.getvalue().encode("utf-8")


class InputsError(ValueError):
    """An inputs.csv that cannot be read back; the message names the line and the column."""


def inputs_csv_parse(data: bytes) -> list[InputRow]:
    """inputs.csv back into rows (to recompute a bundle)."""
    reader = csv.reader(io.StringIO(data.decode("utf-8")))
    header = next(reader, None)
    if header in (LEGACY_INPUT_FIELDS, SCHEMA2_INPUT_FIELDS, PRE_LANGUAGE_INPUT_FIELDS):  # schema 1: no arrival
        header = INPUT_FIELDS  # order, cases or panel noise; before issue 34: no severity-adjusted truth;
        # before issue 35: no language (every case English). Missing columns read as empty.
    if header != INPUT_FIELDS:
        raise InputsError(f"inputs.csv line 1: expected the columns {', '.join(INPUT_FIELDS)}; "
                          f"found {', '.join(header or []) or 'nothing'}")
    rows = []
    for line, raw in enumerate(reader, start=2):
        record = dict(zip(INPUT_FIELDS, csv_row_unprotect(raw), strict=False))

        def number(name: str, line: int = line, record: dict[str, str] = record) -> float | None:
            text = record.get(name, "")
            if text == "":
                return None
            try:
                return float(text)
            except ValueError:
                raise InputsError(f"inputs.csv line {line}, column {name}: not a number: {text[:30]!r}") from None

        try:
            rows.append(InputRow(
                response_id=int(record["response_id"]), model=record["model"], family=record["family"],
                dimension=record["dimension"], tradition=record["tradition"], difficulty=record["difficulty"],
                judge=number("judge"), expert=number("expert"), expert_gold=number("expert_gold"),
                inclusion_probability=number("inclusion_probability"), inclusion_basis=record["inclusion_basis"],
                n_raters=int(record["n_raters"] or 0),
                arrival=int(record["arrival"]) if record.get("arrival") else None,
                case=int(record["case"]) if record.get("case") else None,
                panel_var=number("panel_var"), expert_fair=number("expert_fair"),
                language=record.get("language") or "en",
            ))
        except (KeyError, ValueError) as exc:
            if isinstance(exc, InputsError):
                raise
            raise InputsError(f"inputs.csv line {line}: {exc}") from None
    return rows


def report_json(report: CalibratedReport) -> bytes:
    """report.json: the whole leaderboard, keys sorted, indented, UTF-8, no NaN."""
    return json.dumps(report.to_json(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"


TableCell = str | int | float | None


class BundleContext(TypedDict):
    """What the bundle's README names: the judge run and its judge, the cycle of the expert labels."""

    run: int
    judge: str
    cycle: str
    cycle_id: int


def _table_rows(report: CalibratedReport) -> list[list[TableCell]]:
    rows: list[list[TableCell]] = []
    for entry in report.models:
        cells: list[tuple[str, str, ModelEntry | Cell]] = [("overall", "all", entry)]
        cells += [("dimension", key, cell) for key, cell in entry.by_dimension.items()]
        cells += [("tradition", key, cell) for key, cell in entry.by_tradition.items()]
        cells += [("language", key, cell) for key, cell in (entry.by_language or {}).items()]
        for facet, value, cell in cells:
            judge = cell.judge_only
            rows.append([entry.model, facet, value, "judge_only", judge.estimate, judge.lower, judge.upper, judge.n,
                         None, None, None, None, None, None, None, "no verdict: the judge-only board claims none"])
            rows.append(_block_row(entry.model, facet, value, "calibrated", cell.calibrated))
            ev = cell.evidence
            rows.append(_block_row(entry.model, facet, value, "shift", cell.shift)[:11] + [
                _verdict_word(ev.verdict), None if ev.verdict is None else ev.verdict.looks, ev.more_labels,
                None if ev.advice is None else ev.advice.lever,
                "; ".join(w for w in (None if ev.verdict is None else ev.verdict.words,
                                      None if ev.advice is None else ev.advice.words) if w) or None])
    rows += severity_table_rows(report)
    for pair in report.pairs:
        v, a = pair.verdict, pair.advice
        rows.append([f"{pair.model_a} − {pair.model_b}", "pair", "adjacent" if pair.adjacent else "overall",
                     "difference_paired" if pair.paired else "difference", pair.estimate, pair.lower, pair.upper,
                     None if v is None else v.looks, None, None, None, _verdict_word(v), None if v is None else v.looks,
                     pair.more_labels_each, None if a is None else a.lever,
                     "; ".join(w for w in (None if v is None else v.words, None if a is None else a.words) if w) or None])
    return rows


SEVERITY_BOARDS = ("truth_panel_mean", "truth_severity_adjusted", "truth_severity_shift")


def severity_table_rows(report: CalibratedReport) -> list[list[TableCell]]:
    """tables.csv's truth-with-severity rows (issue 34 §6): per model, overall and per dimension, the mean truth under
    the panel-mean rule, under the severity-adjusted one and the shift, each with n; words where a number is
    missing. None for versions computed before it."""
    rows: list[list[TableCell]] = []
    for entry in report.models:
        blocks: list[tuple[str, str, TruthSensitivity]] = []
        if entry.severity_truth is not None:
            blocks.append(("overall", "all", entry.severity_truth))
        blocks += [("dimension", key, block) for key, block in (entry.severity_truth_by_dimension or {}).items()]
        for facet, value, block in blocks:
            for board, number in zip(SEVERITY_BOARDS, (block.panel_mean, block.severity_adjusted, block.shift),
                                     strict=True):
                rows.append([entry.model, facet, value, board, number, None, None, block.n, None, None, None,
                             None, None, None, None, block.words])
    return rows


def _verdict_word(verdict: Verdict | None) -> str | None:
    if verdict is None:
        return None
    if verdict.verdict == "separated" and verdict.leader:
        return f"separated ({verdict.leader} ahead)"
    if verdict.verdict == "equivalent":
        return f"equivalent within ±{verdict.margin:g}"
    return verdict.verdict


def _block_row(model: str, facet: str, value: str, board: str, block: Estimate) -> list[TableCell]:
    return [model, facet, value, board, block.estimate, block.lower, block.upper, block.n, block.lam,
            block.covered_weight, block.status, None, None, None, None, block.words]


def tables_csv(report: CalibratedReport) -> bytes:
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(TABLE_FIELDS)
    for row in _table_rows(report):
        writer.writerow(_cell(v) for v in row)
    return out.getvalue().encode("utf-8")


def _fmt(value: float | None, places: int = 3) -> str:
    return "—" if value is None else f"{value:.{places}f}"


def _ci(block: Span | Estimate | Pair) -> str:
    if block.lower is None or block.upper is None:
        return "—"
    return f"{block.lower:.3f}–{block.upper:.3f}"


def _pdf_verdict(verdict: Verdict | None, more: int | None) -> str:
    if verdict is None:
        return "—" if more is None else str(more)
    return f"{_verdict_word(verdict)} ({verdict.looks})"


def report_pdf(report: CalibratedReport, *, title: str, version: int, input_hash: str) -> bytes:
    """Both leaderboards side by side, the shifts in words, rank sets and the evidence meter."""
    fonts = report_fonts()
    styles = Styles(fonts)
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=PAGE, leftMargin=MARGIN_X, rightMargin=MARGIN_X, topMargin=MARGIN_TOP,
                            bottomMargin=MARGIN_BOTTOM, title="FaithBench calibrated leaderboard", subject=title,
                            invariant=1)
    p = styles.paragraph
    counts, meta = report.counts, report.meta
    story: list[Any] = [
        Paragraph(escape(fonts.text(f"Expert-calibrated leaderboard: {title}")), styles.title),
        p(f"{counts.used} expert-labelled responses correct the judge's scores on {counts.judged} judged "
          f"responses. Estimator: {meta.estimator}. Ranks: {meta.rank_method}.", styles.muted),
    ]
    if meta.trial:  # issue 32: listed for checking only
        story.append(p(f"Trial run: no model has {meta.min_cases} judged responses, so no model is ranked or compared "
                       "in pairs.", styles.muted))
    story += [p(f"• {w}", styles.muted) for w in report.warnings]
    story += [p(f"• {s}") for s in report.statements]
    rows: list[list[Any]] = [["Model", "Judge-only", "95 % interval", "Calibrated", "95 % interval", "λ", "Experts n", "Judged N",
             "Shift", "Shift interval", "Rank set", "Verdict (looks)"]]
    for entry in report.models:
        cal, judge, shift = entry.calibrated, entry.judge_only, entry.shift
        rank = entry.rank_set
        rows.append([entry.model, _fmt(judge.estimate), _ci(judge), _fmt(cal.estimate), _ci(cal),
                     _fmt(cal.lam, 2), cal.n, entry.judged, _fmt(shift.estimate), _ci(shift),
                     "—" if not rank else (str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}–{rank[1]}"),
                     _pdf_verdict(entry.evidence.verdict, entry.evidence.more_labels)])
    story.append(table(rows, [120, 55, 75, 55, 75, 30, 50, 50, 45, 75, 45, 55], fonts))
    for facet, heading in (("by_dimension", "By dimension"), ("by_tradition", "By tradition"),
                           ("by_language", "By case language")):
        if facet == "by_language" and not any(entry.by_language for entry in report.models):
            continue
        story.append(Paragraph(escape(fonts.text(heading)), styles.heading))
        rows = [["Model", "Cell", "Judge-only", "Calibrated", "95 % interval", "n", "Shift", "Shift interval"]]
        for entry in report.models:
            for key, cell in (getattr(entry, facet) or {}).items():
                rows.append([entry.model, FACET_LABELS[facet](key), _fmt(cell.judge_only.estimate),
                             _fmt(cell.calibrated.estimate), _ci(cell.calibrated), cell.calibrated.n,
                             _fmt(cell.shift.estimate), _ci(cell.shift)])
        story.append(table(rows, [140, 90, 60, 60, 80, 40, 60, 80], fonts, text_columns=(0, 1)))
    story.append(Paragraph(escape(fonts.text("Adjacent pairs: live verdicts")), styles.heading))
    story.append(p(f"Anytime-valid at {meta.confidence:.0%}, valid however often the board is looked at; "
                   f"equivalence margin ±{meta.margin if meta.margin is not None else 0.05:g}.", styles.muted))
    rows = [["Pair", "Difference", "Simultaneous interval", "Verdict (looks)", "More each", "What helps"]]
    for pair in report.pairs:
        if pair.adjacent:
            rows.append([f"{pair.model_a} vs {pair.model_b}" + (" (paired)" if pair.paired else ""),
                         _fmt(pair.estimate), _ci(pair), _pdf_verdict(pair.verdict, None),
                         "—" if pair.more_labels_each is None else pair.more_labels_each,
                         "" if pair.advice is None else pair.advice.words[:90]])
    story.append(table(rows, [140, 60, 90, 120, 50, 230], fonts, text_columns=(0, 3, 5)))
    story += _severity_pdf(report, styles, fonts)
    decorate = page_decoration(fonts, heading="FaithBench calibrated leaderboard: ", name=title,
                               line=f"version {version} · inputs sha256 {input_hash}")
    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
    return buffer.getvalue()


def _severity_pdf(report: CalibratedReport, styles: Styles, fonts: Any) -> list[Any]:
    """The PDF's truth-with-severity section: the panel notes and, per model, both mean truths and the shift."""
    meta = report.meta
    story: list[Any] = [Paragraph(escape(fonts.text("Truth with rater severity (a sensitivity)")), styles.heading)]
    if meta.severity_truth is None:
        return [*story, styles.paragraph("Not computed for this version (computed before the severity-adjusted "
                                         "truth existed): compute a new version to see it.", styles.muted)]
    story.append(styles.paragraph(meta.severity_truth + ".", styles.muted))
    story += [styles.paragraph(f"• {note}", styles.muted) for note in meta.severity_notes or []]
    rows: list[list[Any]] = [["Model", "Cell", "Panel-mean truth", "Severity-adjusted", "Shift", "n of labelled"]]
    words: list[str] = []
    for entry in report.models:
        blocks = [("overall", entry.severity_truth),
                  *((rubric_label(k), b) for k, b in (entry.severity_truth_by_dimension or {}).items())]
        for key, block in blocks:
            if block is not None:
                rows.append([entry.model, key, _fmt(block.panel_mean), _fmt(block.severity_adjusted),
                             _signed(block.shift), f"{block.n} of {block.labelled}"])
                if block.words:
                    words.append(f"{entry.model}, {key}: {block.words}.")
    story.append(table(rows, [140, 110, 80, 80, 60, 70], fonts, text_columns=(0, 1)))
    return story + [styles.paragraph(f"• {w}", styles.muted) for w in words]


# The PDF names cells as the page does (the page's template filters), never by their internal keys (issue 32).
FACET_LABELS = {"by_dimension": rubric_label, "by_tradition": tradition_label, "by_language": language_label}


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}".replace("-", "−")


BUNDLE_README = """FaithBench calibration — expert-calibrated leaderboard, citable bundle

Judge run:        #{run} ({judge})
Expert labels:    calibration cycle "{cycle}" (id {cycle_id})
Version:          {version}
Input hash:       sha256 {input_hash} (of inputs.csv: `sha256sum inputs.csv` prints it)
Options:          alpha {alpha}, {n_resamples} bootstrap resamples for the judge-only intervals, seed {seed}

Files
- report.json   The whole leaderboard: per model (overall, per dimension, per tradition and, when the
                cases are in two or more languages, per case language) the judge-only
                score with its bootstrap interval, the expert-calibrated score with its anytime-valid
                interval (a confidence sequence over the labels in arrival order: valid at any n and any
                look), λ, the expert-labelled n and judged N, the shift (calibrated − judge, exactly), rank
                sets, live verdicts (separated / equivalent within ±margin / continue, with their looks) and
                the lever that would bring one; pairs of models (paired per case where possible); the
                gold-only sensitivity; the truth with rater severity (per model and dimension, the mean
                panel-mean truth, the mean severity-adjusted truth and the shift; the panels whose rater
                model could not be fitted, in meta.severity_notes).
- tables.csv    The same numbers in long format.
- report.pdf    A printable summary; every page names the version and the input hash.
- inputs.csv    The exact input rows, one per judged response: model, facets, the judge's composite, the
                experts' truth composite (and gold-only), the item's inclusion probability and its basis,
                the label's arrival (the order the experts submitted), the test case, the panel noise,
                the severity-adjusted truth composite (expert_fair; empty where its panel was not fitted)
                and the case's language.
- variance_budget.csv         Per model, the variance budget over the run and its finished repeats: case
                sampling, provider route, generation and judge run-to-run, judge error (this version's shift);
                the total interval beside the cases-only one (docs/variance-budget.md).
- variance_budget_inputs.csv  Its input rows: model, case, difficulty weight, route (condition), repetition,
                judge run, decisive composite.
- conditions.csv  Per generation condition (reasoning, provider route, language…) the judge-only leaderboard of
                this run, then the paired deltas between conditions that differ in one setting, with their
                case-bootstrap intervals (docs/conditions.md); the same seed and resamples as report.json.
- SHA256SUMS    Checksums of the files above.

To reproduce: calibration.calibrated.build.calibrated_leaderboard_build(
    calibration.calibrated.files.inputs_csv_parse(inputs.csv), Options(<report.json meta>,
    severity_notes=tuple(<meta.severity_notes>), min_cases=<meta.min_cases, 1 when absent>)),
then calibration.calibrated.files.report_json(...) gives report.json byte for byte; and
calibration.calibrated.variance.variance_budget_csv(budget_compute(budget_inputs_parse(variance_budget_inputs.csv),
    shifts=report_shifts(report.json))) gives variance_budget.csv.
"""


def files_render(*, report: CalibratedReport, inputs: bytes, title: str, version: int, input_hash: str,
                 context: BundleContext, bundle_only: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """The stored files (one per format) and the bundle; `bundle_only`: file name → bytes, in the zip alone."""
    files: dict[str, bytes] = {
        SnapshotFile.Format.JSON: report_json(report),
        SnapshotFile.Format.CSV: tables_csv(report),
        SnapshotFile.Format.PDF: report_pdf(report, title=title, version=version, input_hash=input_hash),
        SnapshotFile.Format.RATINGS: inputs,
    }
    meta = report.meta
    readme = BUNDLE_README.format(version=version, input_hash=input_hash, alpha=meta.alpha,
                                  n_resamples=meta.n_resamples, seed=meta.seed, **context)
    extra = bundle_only or {}
    # bundle-only files are keyed by their name where stored files have their format (both are strings)
    names: dict[Any, str] = {**FILE_NAMES, **{name: name for name in extra}}
    files[SnapshotFile.Format.BUNDLE] = citable_bundle(
        files={**files, **extra}, names=names, readme=readme,
        folder=f"faithbench-calibrated-run-{context['run']}-v{version}")
    return files
