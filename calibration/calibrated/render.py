"""Rows and interval bars for the calibrated leaderboard page, from a stored snapshot's tree, and the variance budget
page's rows from its stored figures (no statistics here).

The bars are small inline SVGs (no style attributes: the CSP allows none); every number in them is also in the
table's text, so a screen reader or a phone loses nothing."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from evaluations.judge.guardrails import evidence_enough, thin_words
from stats.variance_budget import GROUP_LABELS, GROUPS, VarianceBudget

from .budget import BudgetPage, ModelBudget
from .charts import stacked_bar
from .schema import CalibratedReport, Estimate, Evidence, Pair, Skipped, Span, Verdict

BAR_WIDTH = 220
BAR_HEIGHT = 30
JUDGE_COLOUR = "#8a94a3"
CALIBRATED_COLOUR = "#1f5fa8"


def interval_axis(report: CalibratedReport) -> tuple[float, float]:
    """One shared axis for every model's bars: the smallest and largest bound shown, padded a little."""
    bounds = [v for entry in report.models for block in (entry.judge_only, entry.calibrated)
              for v in (block.lower, block.upper, block.estimate) if v is not None]
    if not bounds:
        return 0.0, 1.0
    low, high = min(bounds), max(bounds)
    pad = max((high - low) * 0.05, 0.01)
    return max(0.0, low - pad), min(1.0, high + pad)


def _x(value: float, axis: tuple[float, float]) -> float:
    low, high = axis
    return round(4 + (BAR_WIDTH - 8) * (value - low) / (high - low if high > low else 1.0), 1)


Bounded = Span | Estimate | Pair


def interval_bars(judge: Bounded, calibrated: Bounded, axis: tuple[float, float], label: str) -> SafeString:
    """Two interval bars on one axis: the judge-only (grey, top) and the calibrated (blue, below)."""
    parts = [f'<svg class="interval-bars" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" viewBox="0 0 {BAR_WIDTH} '
             f'{BAR_HEIGHT}" role="img" aria-label="{_attr(label)}">']
    for y, block, colour in ((9, judge, JUDGE_COLOUR), (22, calibrated, CALIBRATED_COLOUR)):
        low, high, point = block.lower, block.upper, block.estimate
        if low is not None and high is not None:
            parts.append(f'<line x1="{_x(low, axis)}" x2="{_x(high, axis)}" y1="{y}" y2="{y}" stroke="{colour}" '
                         'stroke-width="3"/>')
        if point is not None:
            parts.append(f'<circle cx="{_x(point, axis)}" cy="{y}" r="4" fill="{colour}"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and an escaped label only


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _fmt(value: float | None) -> str:
    return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.3f}"


def _ci(block: Bounded) -> str:
    """'0.412–0.530', or '−0.292 to −0.100' when a bound is negative (a dash between minus signs misreads)."""
    low, high = block.lower, block.upper
    if low is None or high is None:
        return ""
    if low < 0 or high < 0:
        return f"{low:.3f} to {high:.3f}".replace("-", "−")
    return f"{low:.3f}–{high:.3f}"


def _skipped_summary(skipped: list[Skipped]) -> str:
    """One line for a cell's left-out strata (the main table lists each; cells would repeat it dozens of times)."""
    if not skipped:
        return ""
    names = ", ".join(s.stratum for s in skipped)
    return f"left out (fewer than 2 expert labels): {names}"


def _rank(rank: list[int] | None) -> str:
    if not rank:
        return "—"
    return str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}–{rank[1]}"


@dataclass(frozen=True)
class BoardRow:
    """One model's line of the page's table: both boards, the shift, gold-only, the rank set and the meter."""

    model: str
    family: str
    self_preference: bool
    judge: str
    judge_ci: str
    judged: int
    calibrated: str
    calibrated_ci: str
    lam: float | None
    n: int
    covered: float | None
    skipped: list[Skipped]
    note: str
    shift: str
    shift_ci: str
    gold: str
    gold_ci: str
    gold_n: int
    rank: str
    more: int | None
    hours: float | None
    evidence_note: str
    bars: SafeString
    verdict: str = ""  # schema 2: the shift's live verdict, its looks and the lever, in words
    verdict_words: str = ""
    looks: int | None = None
    advice: str = ""
    words: str = ""  # why the interval is wide or missing
    rank_words: str = ""  # issue 32: why a model with a score has no rank set (too few judged responses)


def _rank_words(report: CalibratedReport, judged: int) -> str:
    """Words for a model the guardrail leaves unranked (versions stored before it: none)."""
    minimum = report.meta.min_cases
    if minimum is None or evidence_enough(judged, minimum=minimum):
        return ""
    return f"not ranked: {thin_words(judged, minimum=minimum, what='a rank')}"


def board_rows(report: CalibratedReport, axis: tuple[float, float]) -> list[BoardRow]:
    rows = []
    for entry in report.models:
        judge, cal, shift, gold = entry.judge_only, entry.calibrated, entry.shift, entry.gold_only
        label = (f"{entry.model}: judge-only {_fmt(judge.estimate)} ({_ci(judge) or 'no interval'}), "
                 f"calibrated {_fmt(cal.estimate)} ({_ci(cal) or 'no interval'})")
        rows.append(BoardRow(
            model=entry.model, family=entry.family, self_preference=entry.self_preference,
            judge=_fmt(judge.estimate), judge_ci=_ci(judge), judged=entry.judged,
            calibrated=_fmt(cal.estimate), calibrated_ci=_ci(cal), lam=cal.lam,
            n=cal.n, covered=cal.covered_weight, skipped=cal.skipped or [],
            note="" if cal.note is None else cal.note,
            shift=_fmt(shift.estimate).replace("-", "−"), shift_ci=_ci(shift),
            gold=_fmt(gold.estimate), gold_ci=_ci(gold), gold_n=gold.n,
            rank=_rank(entry.rank_set),
            more=entry.evidence.more_labels, hours=entry.evidence.expert_hours,
            evidence_note=entry.evidence.note,
            bars=interval_bars(judge, cal, axis, label),
            **_live(entry.evidence), words=cal.words or "", rank_words=_rank_words(report, entry.judged),
        ))
    return rows


@dataclass(frozen=True)
class CellRow:
    """One model in one dimension or tradition on the page."""

    model: str
    cell: str
    judge: str
    judge_ci: str
    calibrated: str
    calibrated_ci: str
    n: int
    judged: int
    skipped: str
    shift: str
    shift_ci: str
    more: int | None
    hours: float | None
    evidence_note: str
    verdict: str = ""
    verdict_words: str = ""
    looks: int | None = None
    advice: str = ""
    words: str = ""


VERDICT_LABELS = {"separated": "separated", "equivalent": "equivalent", "continue": "continue", "invalid": "no verdict"}


def verdict_label(verdict: Verdict | None) -> str:
    """A verdict in a few words: "separated: a ahead", "equivalent within ±0.05", "continue"."""
    if verdict is None:
        return ""
    if verdict.verdict == "separated" and verdict.leader:
        return f"separated: {verdict.leader} ahead"
    if verdict.verdict == "equivalent":
        return f"equivalent within ±{verdict.margin:g}"
    return VERDICT_LABELS.get(verdict.verdict, verdict.verdict)


def _live(evidence: Evidence) -> dict[str, Any]:
    """The meter's verdict, looks and lever for a row (empty for versions computed before schema 2)."""
    v, a = evidence.verdict, evidence.advice
    if v is None:
        return {}
    label = verdict_label(v)
    if v.verdict == "separated" and v.leader == "experts":
        label = "separated: the judge under-scores"
    elif v.verdict == "separated" and v.leader == "judge":
        label = "separated: the judge over-scores"
    return {"verdict": label, "verdict_words": v.words, "looks": v.looks, "advice": "" if a is None else a.words}


def cell_rows(report: CalibratedReport, facet: str) -> list[CellRow]:
    """Per model × dimension (or tradition): judge-only, calibrated with n, the shift, the labels still needed."""
    rows = []
    for entry in report.models:
        for key, cell in (getattr(entry, facet) or {}).items():  # by_dimension, by_tradition, by_language
            cal = cell.calibrated
            rows.append(CellRow(
                model=entry.model, cell=key, judge=_fmt(cell.judge_only.estimate),
                judge_ci=_ci(cell.judge_only), calibrated=_fmt(cal.estimate), calibrated_ci=_ci(cal),
                n=cal.n, judged=cell.judge_only.n,
                skipped=_skipped_summary(cal.skipped or []) if cal.estimate is not None else "",
                shift=_fmt(cell.shift.estimate).replace("-", "−"), shift_ci=_ci(cell.shift),
                more=cell.evidence.more_labels, hours=cell.evidence.expert_hours,
                evidence_note=cell.evidence.note, **_live(cell.evidence), words=cal.words or "",
            ))
    return rows


@dataclass(frozen=True)
class PairRow:
    a: str
    b: str
    difference: str
    ci: str
    separated: bool
    more: int | None
    hours: float | None
    verdict: str = ""
    verdict_words: str = ""
    looks: int | None = None
    advice: str = ""
    paired: bool = False


def pair_rows(report: CalibratedReport) -> list[PairRow]:
    """Adjacent pairs (in calibrated order) whose order the simultaneous interval does not settle, first."""
    rows = []
    for pair in report.pairs:
        if not pair.adjacent:
            continue
        rows.append(PairRow(a=pair.model_a, b=pair.model_b, difference=_fmt(pair.estimate).replace("-", "−"),
                            ci=_ci(pair), separated=pair.separated, more=pair.more_labels_each,
                            hours=pair.expert_hours, verdict=verdict_label(pair.verdict),
                            verdict_words="" if pair.verdict is None else pair.verdict.words,
                            looks=None if pair.verdict is None else pair.verdict.looks,
                            advice="" if pair.advice is None else pair.advice.words, paired=bool(pair.paired)))
    return rows


@dataclass(frozen=True)
class BudgetLine:
    """One source of variance on the budget page: its term of Var(score), its share in % and its SD."""

    key: str
    label: str
    term: float | None
    share: float | None
    sd: float | None


@dataclass(frozen=True)
class BudgetPageRow:
    """One model on the budget page: its budget (`m`, `b`), the lines per source and the stacked bar."""

    m: ModelBudget
    b: VarianceBudget | None
    lines: list[BudgetLine]
    bar: str


def budget_rows(page: BudgetPage) -> list[BudgetPageRow]:
    """Per model, what the page shows: the budget, its stacked bar and one line per source (share in %, SD)."""
    rows = []
    for m in page.models:
        b = m.budget
        lines = []
        if b is not None:
            for g in GROUPS:
                term, share = b.terms[g], b.shares[g]
                lines.append(BudgetLine(key=g, label=GROUP_LABELS[g], term=term,
                                        share=None if share is None else round(100 * share, 1),
                                        sd=None if term is None else term ** 0.5))
        rows.append(BudgetPageRow(m=m, b=b, lines=lines,
                                  bar=stacked_bar(b.shares, f"Variance shares of {m.model}") if b is not None else ""))
    return rows


# ---------------------------------------------------------------------------------------- truth with rater severity
@dataclass(frozen=True)
class SeverityRow:
    """One model (overall, or one dimension) in the truth-with-severity table: both mean truths and the shift."""

    model: str
    cell: str  # "" overall, else the dimension key
    panel_mean: str
    severity_adjusted: str
    shift: str
    n: int
    labelled: int
    words: str


@dataclass(frozen=True)
class SeverityView:
    """The page's truth-with-severity block; `computed` False for versions stored before it existed."""

    computed: bool
    method: str
    notes: list[str]
    rows: list[SeverityRow]


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}".replace("-", "−")


def severity_view(report: CalibratedReport) -> SeverityView:
    """The stored truth-with-severity figures as the page shows them (overall rows first, then per dimension)."""
    meta = report.meta
    if meta.severity_truth is None:
        return SeverityView(computed=False, method="", notes=[], rows=[])
    rows = []
    for entry in report.models:
        blocks = [("", entry.severity_truth), *(entry.severity_truth_by_dimension or {}).items()]
        for key, block in blocks:
            if block is None:
                continue
            rows.append(SeverityRow(model=entry.model, cell=key, panel_mean=_fmt(block.panel_mean),
                                    severity_adjusted=_fmt(block.severity_adjusted), shift=_signed(block.shift),
                                    n=block.n, labelled=block.labelled, words=block.words or ""))
    return SeverityView(computed=True, method=meta.severity_truth, notes=list(meta.severity_notes or []), rows=rows)
