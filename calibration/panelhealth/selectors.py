"""Panel health and each expert's own calibration: rows from the database → `stats.raters` → plain data for pages.

Ratings are the submitted, not-withdrawn sub-scores of a panel's assignments. The model's "item" is the model
response, so a response scored in two cycles (an anchor) links the cycles' scales. Gold is the current
adjudication's score. Every figure goes through :func:`fmt`, so a page never shows NaN: an undefined figure is a
dash with the reason beside it.
"""
from __future__ import annotations

import io
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from accounts.models import User
from annotations.models import (
    AdjudicationDecision,
    Annotation,
    CalibrationCycle,
    CycleItem,
    GoldScore,
    Panel,
)
from evaluations.models import EvaluatedModel, JudgeRun
from evaluations.spreadsheet import csv_writer
from stats.raters import (
    FLAG_RULES,
    MIN_RATINGS,
    ClassicalFigures,
    DriftResult,
    FacetsFit,
    RaterData,
    RaterDataError,
    RaterFlag,
    classical_figures,
    clustered_proportion,
    facets_fit,
    fatigue_profile,
    rater_data,
    rater_drift,
    rater_flags,
    sitting_positions,
)

from ..cycles.truth import submitted_sub_scores
from .format import fmt, fmt_interval
from .retest import RetestFigures, retest_figures

MIN_PANEL_RATERS = 2


@dataclass(frozen=True)
class Rating:
    response_id: int
    item_id: int
    expert_id: int
    key: str
    score: int
    cycle_id: int
    submitted_at: datetime | None
    seconds: int
    annotation_id: int


def _ratings(*, panel: Panel | None = None, cycles: list[CalibrationCycle] | None = None,
             expert_id: int | None = None) -> list[Rating]:
    qs = submitted_sub_scores()
    if panel is not None:
        qs = qs.filter(annotation__assignment__panel=panel)
    if cycles is not None:
        qs = qs.filter(annotation__assignment__cycle__in=cycles)
    if expert_id is not None:
        qs = qs.filter(annotation__assignment__expert_id=expert_id)
    rows = qs.values_list("annotation__assignment__item__response_id", "annotation__assignment__item_id",
                          "annotation__assignment__expert_id", "key", "score", "annotation__assignment__cycle_id",
                          "annotation__submitted_at", "annotation__seconds_spent", "annotation_id")
    return [Rating(*row) for row in rows.order_by("annotation__assignment__expert_id", "annotation__submitted_at",
                                                  "annotation_id", "key").iterator(chunk_size=5000)]


def _gold(item_ids: set[int]) -> dict[tuple[int, str], int]:
    rows = GoldScore.objects.filter(decision__is_current=True, decision__item_id__in=item_ids).values_list(
        "decision__item_id", "key", "score")
    return {(item, key): score for item, key, score in rows}


# ---------------------------------------------------------------------------------------------------- panel health
@dataclass
class ExpertRow:
    name: str
    n_ratings: int
    n_items: int
    severity: str = "—"
    severity_interval: str = ""
    infit: str = "—"
    outfit: str = "—"
    gold_agreement: str = "—"
    gold_interval: str = ""
    gold_n: int = 0
    panel_deviation: str = "—"
    panel_deviation_interval: str = ""
    alpha_without: str = "—"
    alpha_change: str = "—"
    drift: list[tuple[str, str, str]] = field(default_factory=list)  # (period, severity, interval)
    drift_p: str = "—"
    fatigue: list[tuple[str, int, str, str, str]] = field(default_factory=list)
    flags: list[RaterFlag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class PanelHealth:
    panel: Panel
    scope: str
    cycles: list[CalibrationCycle]
    selected: CalibrationCycle | None
    rows: list[ExpertRow]
    notes: list[str]
    alpha_all: str
    drift_basis: str
    n_ratings: int
    flag_rules: list[tuple[str, str, str]]
    retest_note: str
    actions: list[tuple[str, str]]
    retest: RetestFigures | None = None


def panels_readable(*, led: set[int] | None) -> list[Panel]:
    """The panels whose health a user may read: `led` from access.policy.panels_led (None: every panel)."""
    panels = Panel.objects.order_by("name")
    return list(panels if led is None else panels.filter(pk__in=led))


def panel_get(panel_id: int) -> Panel | None:
    return Panel.objects.filter(pk=panel_id).first()


def panel_cycle_get(*, panel: Panel, raw: str) -> CalibrationCycle | None:
    """The cycle named by a query parameter, if it is a cycle of the panel (None for anything else)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:  # past a 64-bit id: no such cycle, no overflow
        return None
    return CalibrationCycle.objects.filter(pk=int(raw), assignments__panel=panel).distinct().first()


def panel_cycles(*, panel: Panel) -> list[CalibrationCycle]:
    """The cycles in which the panel has assignments, newest first."""
    return list(CalibrationCycle.objects.filter(assignments__panel=panel).distinct().order_by("-created_at", "-id"))


def _expert_rows(panel: Panel, ratings: list[Rating]) -> tuple[list[int], dict[int, ExpertRow]]:
    """The experts who scored (sorted ids) and an empty row for each, named (a former member says so)."""
    names = {u.pk: str(u) for u in panel.members.all()}
    experts = sorted({r.expert_id for r in ratings})
    for user in User.objects.filter(pk__in=set(experts) - set(names)):
        names[user.pk] = f"{user} (no longer on the panel)"
    per_expert_items: dict[int, set[int]] = defaultdict(set)
    per_expert_ratings: Counter[int] = Counter()
    for r in ratings:
        per_expert_items[r.expert_id].add(r.response_id)
        per_expert_ratings[r.expert_id] += 1
    rows = {e: ExpertRow(name=names.get(e, "expert"), n_ratings=per_expert_ratings[e],
                         n_items=len(per_expert_items[e])) for e in experts}
    return experts, rows


def _scope_notes(cycle: CalibrationCycle | None, chosen: list[CalibrationCycle], ratings: list[Rating]) -> list[str]:
    """Why severities of this scope may not share one scale: no anchors in the cycle, or no response in common."""
    notes: list[str] = []
    if cycle is not None and not CycleItem.objects.filter(cycle=cycle, is_anchor=True).exists():
        notes.append("This cycle has no anchor items, so its severities are on its own scale: compare experts within "
                     "it, not with another cycle's figures.")
    if cycle is None and len(chosen) > 1:
        by_cycle: dict[int, set[int]] = defaultdict(set)
        for r in ratings:
            by_cycle[r.cycle_id].add(r.response_id)
        sets = list(by_cycle.values())
        shared = set.intersection(*sets) if len(sets) > 1 else set()
        if len(sets) > 1 and not shared:
            notes.append("These cycles share no anchor response, so severities of different cycles are not on one "
                         "scale: read one cycle at a time, or keep anchors in the next draw.")
    return notes


def _fill_classical(rows: dict[int, ExpertRow], data: RaterData, classical: ClassicalFigures) -> None:
    """The model-free figures of each row: agreement with gold, deviation from the panel, α without the expert."""
    for idx, label in enumerate(data.raters):
        row = rows[int(label)]  # type: ignore[call-overload]
        row.gold_n = int(classical.gold_n[idx])
        row.gold_agreement = fmt(classical.gold_agreement[idx])
        row.gold_interval = fmt_interval(classical.gold_interval[idx])
        row.panel_deviation = fmt(classical.panel_deviation[idx], signed=True)
        row.panel_deviation_interval = fmt_interval(classical.panel_deviation_interval[idx], signed=True)
        row.alpha_without = fmt(classical.alpha_without[idx], 3)
        row.alpha_change = fmt(classical.alpha_change[idx], 3, signed=True)


def _drift_periods(cycle: CalibrationCycle | None, chosen: list[CalibrationCycle],
                   ratings: list[Rating]) -> tuple[list[int], dict[int, str], str]:
    """Each rating's period for drift — by week inside one cycle (also when the panel has only one), by cycle
    across cycles — its labels and basis."""
    if cycle is not None or len(chosen) == 1:
        times = [r.submitted_at for r in ratings]
        first = min((t for t in times if t is not None), default=None)
        periods = [int((t - first).days // 7) if t is not None and first is not None else 0 for t in times]
        return periods, {p: f"week {p + 1}" for p in set(periods)}, "week of the cycle (from its first submission)"
    order = {c.pk: i for i, c in enumerate(reversed(chosen))}
    return [order[r.cycle_id] for r in ratings], {order[c.pk]: c.name for c in chosen}, "cycle"


def _fill_model(rows: dict[int, ExpertRow], data: RaterData, fit: FacetsFit, drift: list[DriftResult],
                flags: list[list[RaterFlag]], fatigue: dict[int, list[tuple[str, int, str, str, str]]],
                labels: dict[int, str]) -> None:
    """The model's figures of each row: severity with its interval, fit, drift by period, flags, fatigue."""
    low, high = fit.severity_interval()
    for idx, label in enumerate(data.raters):
        row = rows[int(label)]  # type: ignore[call-overload]
        if not fit.reported[idx]:
            row.notes.append(f"Too few ratings for a severity ({row.n_ratings}; at least {MIN_RATINGS}) or only one "
                             "category used.")
        else:
            row.severity = fmt(fit.severity[idx], signed=True)
            row.severity_interval = fmt_interval((float(low[idx]), float(high[idx])), signed=True)
            row.infit = fmt(fit.infit[idx])
            row.outfit = fmt(fit.outfit[idx])
            d = drift[idx]
            row.drift = [(labels.get(int(p), str(p)), fmt(s, signed=True),  # type: ignore[call-overload]
                          fmt_interval((s - 1.96 * se, s + 1.96 * se), signed=True) if math.isfinite(s) else "")
                         for p, s, se in zip(d.labels, d.severity, d.severity_se, strict=True)]
            row.drift_p = fmt(d.p_value, 3) if d.p_value is not None else "—"
            if d.p_value is None:
                row.notes.append("Drift not tested: fewer than two periods with at least 10 ratings.")
        row.flags = flags[idx]
        row.fatigue = fatigue.get(int(label), [])  # type: ignore[call-overload]


def panel_health(*, panel: Panel, cycle: CalibrationCycle | None = None) -> PanelHealth:
    """Every expert of the panel: severity and fit (many-facet model), classical figures, drift, fatigue, flags.

    One cycle (drift by week within it) or all the panel's cycles (drift by cycle, linked by shared anchors).
    """
    cycles = panel_cycles(panel=panel)
    chosen = [cycle] if cycle is not None else cycles
    ratings = _ratings(panel=panel, cycles=chosen)
    experts, rows = _expert_rows(panel, ratings)
    notes = _scope_notes(cycle, chosen, ratings)
    result = PanelHealth(panel=panel, scope=cycle.name if cycle is not None else "all cycles of this panel",
                         cycles=cycles, selected=cycle, rows=[], notes=notes,
                         alpha_all="—", drift_basis="", n_ratings=len(ratings),
                         flag_rules=[(code, rule, fp) for code, (rule, fp) in FLAG_RULES.items()],
                         retest_note="", actions=_lead_actions())
    result.retest = retest_figures(panel=panel, cycles=chosen, names={e: row.name for e, row in rows.items()})
    result.retest_note = result.retest.note
    if not ratings:
        notes.append("No submitted scores from this panel in this scope yet.")
        return result
    gold = _gold({r.item_id for r in ratings})
    data = rater_data([r.response_id for r in ratings], [r.expert_id for r in ratings], [r.key for r in ratings],
                      [r.score for r in ratings])
    gold_per_rating = np.array([gold.get((r.item_id, r.key), np.nan) for r in ratings], dtype=np.float64)
    if not gold:
        notes.append("No adjudicated (gold) scores in this scope: agreement with gold is not reported.")
    classical = classical_figures(data, gold_per_rating)  # the classical figures need no model
    result.alpha_all = fmt(classical.alpha_all, 3)
    _fill_classical(rows, data, classical)
    result.rows = [rows[e] for e in experts]
    if len(experts) < MIN_PANEL_RATERS:
        notes.append("Only one expert has scored here: severities compare experts, so there is none to report.")
        return result
    try:
        fit = facets_fit(data)
    except RaterDataError as exc:
        notes.append(f"The rater model cannot be fitted: {exc}.")
        return result
    if not fit.converged:
        notes.append("The rater model did not converge; severities are shown but should be read with care.")
    periods, labels, result.drift_basis = _drift_periods(cycle, chosen, ratings)
    drift: list[DriftResult] = rater_drift(data, fit, periods, simulations=2000)
    _fill_model(rows, data, fit, drift, rater_flags(fit, drift), _fatigue(ratings, gold), labels)
    return result


def _fatigue(ratings: list[Rating], gold: dict[tuple[int, str], int]) -> dict[int, list[tuple[str, int, str, str, str]]]:
    """Per expert: agreement with gold (else with the panel's rounded mean) and seconds per item by minutes into a
    sitting."""
    cell_scores: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
    for r in ratings:
        cell_scores[(r.item_id, r.key)].append((r.expert_id, r.score))
    out: dict[int, list[tuple[str, int, str, str, str]]] = {}
    by_expert: dict[int, dict[int, list[Rating]]] = defaultdict(lambda: defaultdict(list))
    for r in ratings:
        by_expert[r.expert_id][r.annotation_id].append(r)
    for expert, sheets in by_expert.items():
        items = sorted((rs for rs in sheets.values() if rs[0].submitted_at is not None),
                       key=lambda rs: (rs[0].submitted_at, rs[0].annotation_id))
        if not items:
            continue
        times = [rs[0].submitted_at.timestamp() for rs in items]  # type: ignore[union-attr]
        seconds = [rs[0].seconds for rs in items]
        minutes = sitting_positions(times, seconds)
        agree = []
        for rs in items:
            hits = []
            for r in rs:
                truth = gold.get((r.item_id, r.key))
                if truth is None:
                    others = [s for e, s in cell_scores[(r.item_id, r.key)] if e != expert]
                    truth = round(sum(others) / len(others)) if others else None
                if truth is not None:
                    hits.append(r.score == truth)
            agree.append(float(np.mean(hits)) if hits else float("nan"))
        bins = fatigue_profile(minutes, agree, seconds)
        out[expert] = [(b.label, b.n, fmt(b.agreement), fmt_interval(b.interval), fmt(b.median_seconds, 0))
                       for b in bins if b.n]
    return out


def _lead_actions() -> list[tuple[str, str]]:
    return [
        ("Severe or lenient", "A calibration session on anchor items: score three or four anchors together, compare "
                              "with their gold scores and rationales sub-dimension by sub-dimension."),
        ("Erratic", "Read a sample of the expert's recent scores and rationales with them; fewer items per sitting; "
                    "check that they are scoring inside their expertise (the skip reason exists for that)."),
        ("Muted", "Remind the panel of the whole 0–3 range with anchor examples at 0 and 3; check for halo (the same "
                  "score on every sub-dimension)."),
        ("Drift", "A short calibration session on anchors now, and anchors spread through the rest of the cycle."),
        ("Fatigue", "Fewer items per sitting: if agreement falls after some minutes, suggest breaks at that point."),
    ]


# ---------------------------------------------------------------------------------------------------- my calibration
@dataclass
class SubComparison:
    key: str
    n: int
    mine: str
    gold_n: int
    gold_agreement: str
    gold_interval: str
    gold_deviation: str
    panel_deviation: str


@dataclass
class WorkedExample:
    question: str
    scores: list[tuple[str, int, str]]  # key, mine, gold
    my_rationale: str
    gold_note: str
    other_rationales: list[str]


@dataclass
class CycleFeedback:
    cycle_name: str
    n_items: int
    subs: list[SubComparison]
    examples: list[WorkedExample]
    notes: list[str]


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every name in `secrets` (people, models, providers, judges) replaced by '[hidden]'."""
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = re.sub(re.escape(secret), "[hidden]", text, flags=re.IGNORECASE)
    return text


def _secrets(expert_id: int) -> list[str]:
    """Names that must never reach an expert's page: other people, evaluated models, providers, judges."""
    secrets: list[str] = []
    for name, email, first, last in User.objects.exclude(pk=expert_id).values_list("display_name", "email",
                                                                                      "first_name", "last_name"):
        secrets += [name, email, email.split("@")[0], first, last]
    for values in EvaluatedModel.objects.values_list("name", "provider", "family"):
        secrets += [v for v in values if v]
        secrets += [str(values[0]).split("/")[-1]]
    for primary, fallback in JudgeRun.objects.values_list("primary_model", "fallback_model"):
        secrets += [primary or "", fallback or ""]
    return secrets


def my_calibration(*, expert: Any) -> list[CycleFeedback]:
    """The expert's own scores against gold and the panel, per closed cycle and sub-dimension, with worked examples.

    Only CLOSED cycles; the panel appears only as an aggregate (no other expert's identity or scores row by row);
    texts shown are redacted of every other person's and every model's name.
    """
    closed = list(CalibrationCycle.objects.filter(status=CalibrationCycle.Status.CLOSED,
                                                  assignments__expert=expert).distinct().order_by("-created_at"))
    if not closed:
        return []
    mine = _ratings(cycles=closed, expert_id=expert.pk)
    item_ids = {r.item_id for r in mine}
    gold = _gold(item_ids)
    others: dict[tuple[int, str], list[int]] = defaultdict(list)
    for item_id, key, score in submitted_sub_scores().filter(annotation__assignment__item_id__in=item_ids).exclude(
        annotation__assignment__expert=expert).values_list("annotation__assignment__item_id", "key", "score"):
        others[(item_id, key)].append(score)
    secrets = _secrets(expert.pk)
    out: list[CycleFeedback] = []
    for cycle in closed:
        rows = [r for r in mine if r.cycle_id == cycle.pk]
        notes: list[str] = []
        if not rows:
            notes.append("You submitted no scores in this cycle.")
        subs: list[SubComparison] = []
        for key in sorted({r.key for r in rows}):
            rs = [r for r in rows if r.key == key]
            with_gold = [(r.score, gold[(r.item_id, key)]) for r in rs if (r.item_id, key) in gold]
            dev_panel = [r.score - float(np.mean(others[(r.item_id, key)])) for r in rs if others[(r.item_id, key)]]
            if with_gold:
                p, _, ci = clustered_proportion([a == b for a, b in with_gold],
                                                [r.item_id for r in rs if (r.item_id, key) in gold])
            else:
                p, ci = None, None
            subs.append(SubComparison(
                key=key, n=len(rs), mine=fmt(float(np.mean([r.score for r in rs]))), gold_n=len(with_gold),
                gold_agreement=fmt(p), gold_interval=fmt_interval(ci),
                gold_deviation=fmt(float(np.mean([a - b for a, b in with_gold])) if with_gold else None, signed=True),
                panel_deviation=fmt(float(np.mean(dev_panel)) if dev_panel else None, signed=True)))
        if rows and not any(s.gold_n for s in subs):
            notes.append("None of your items in this cycle was adjudicated, so there is no gold to compare with.")
        out.append(CycleFeedback(cycle_name=cycle.name, n_items=len({r.item_id for r in rows}), subs=subs,
                                 examples=_examples(rows, gold, expert, secrets), notes=notes))
    return out


def _examples(rows: list[Rating], gold: dict[tuple[int, str], int], expert: Any,
              secrets: list[str], limit: int = 3) -> list[WorkedExample]:
    """Up to `limit` adjudicated items where the expert differed most from gold, texts redacted."""
    gap: dict[int, int] = defaultdict(int)
    for r in rows:
        if (r.item_id, r.key) in gold:
            gap[r.item_id] += abs(r.score - gold[(r.item_id, r.key)])
    chosen = [i for i, g in sorted(gap.items(), key=lambda kv: (-kv[1], kv[0]))][:limit]
    examples: list[WorkedExample] = []
    items = CycleItem.objects.select_related("response__test_case").in_bulk(chosen)
    decisions = {d.item_id: d for d in AdjudicationDecision.objects.filter(item_id__in=chosen, is_current=True)}
    notes_by_item: dict[int, dict[int, str]] = defaultdict(dict)
    for item_id, expert_id, rationale in Annotation.objects.counted().filter(
        assignment__item_id__in=chosen, status=Annotation.Status.SUBMITTED,
    ).values_list("assignment__item_id", "assignment__expert_id", "rationale"):
        notes_by_item[item_id][expert_id] = rationale
    for item_id in chosen:
        item = items.get(item_id)
        if item is None:
            continue
        case = item.response.test_case
        question = ("(a held-out case: its text is not repeated here)" if getattr(case, "is_held_out", False)
                    else redact(str(case.prompt)[:300], secrets))
        mine = sorted((r.key, r.score, str(gold.get((item_id, r.key), "—"))) for r in rows if r.item_id == item_id)
        decision = decisions.get(item_id)
        others = [redact(t, secrets) for e, t in sorted(notes_by_item[item_id].items()) if e != expert.pk and t]
        examples.append(WorkedExample(
            question=question, scores=mine, my_rationale=notes_by_item[item_id].get(expert.pk, ""),
            gold_note=redact(decision.note, secrets) if decision is not None else "", other_rationales=others))
    return examples


PANEL_HEALTH_COLUMNS = (
    "expert", "responses", "sub_scores", "severity_logits", "severity_95ci", "infit", "outfit", "gold_agreement",
    "gold_agreement_95ci", "gold_n", "deviation_from_panel", "deviation_from_panel_95ci", "alpha_without",
    "alpha_change", "drift_p", "flags", "notes",
)


RETEST_COLUMNS = ("expert", "re_served_responses", "re_scored_sub_scores", "exact_agreement", "exact_agreement_95ci",
                  "quadratic_kappa", "quadratic_kappa_95ci", "note")


def panel_health_csv(health: PanelHealth) -> str:
    """The page's table as CSV: the same formatted figures ('—' where undefined, with the reason in `notes`)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(["# scope", health.scope, "panel alpha", health.alpha_all, "drift by", health.drift_basis or "—"])
    for note in health.notes:
        writer.writerow(["# note", note])
    writer.writerow(["# test-retest", health.retest_note])
    if health.retest is not None and health.retest.panel is not None:
        writer.writerow(["# test-retest", *RETEST_COLUMNS])
        for t in [*health.retest.rows, health.retest.panel]:
            writer.writerow(["# test-retest", t.name, t.n_items, t.n_pairs, t.exact, t.exact_interval, t.kappa,
                             t.kappa_interval, t.note])
    writer.writerow(PANEL_HEALTH_COLUMNS)
    for r in health.rows:
        writer.writerow([r.name, r.n_items, r.n_ratings, r.severity, r.severity_interval, r.infit, r.outfit,
                         r.gold_agreement, r.gold_interval, r.gold_n, r.panel_deviation, r.panel_deviation_interval,
                         r.alpha_without, r.alpha_change, r.drift_p,
                         "; ".join(f"{f.code}: {f.reason}" for f in r.flags), "; ".join(r.notes)])
    return out.getvalue()
