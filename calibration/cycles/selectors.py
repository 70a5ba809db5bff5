"""Reads for panels, cycles and scoring progress."""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from annotations.models import Annotation, Assignment, CalibrationCycle, CycleItem, Panel
from evaluations.judge.selectors import (
    DecisiveResult,
    judge_decisive_scored,
    judge_run_latest_finished,
    judge_run_series,
)
from evaluations.models import Dimension, JudgeResult, JudgeRun, ModelResponse, RubricVersion, Tradition

from .active import ActiveDesign, Labelled, residual_sd_table
from .sampling import PoolItem, PreviousItem


def panel_warnings(*, panel: Panel, n_members: int | None = None) -> list[str]:
    """What is wrong with one panel: fewer experts than its tradition's minimum, or no lead."""
    n = panel.members.count() if n_members is None else n_members
    warnings = []
    if n < panel.min_size:
        where = f" for {panel.tradition.name}" if panel.tradition else ""
        warnings.append(
            f"{panel.name} has {n} expert(s), below the minimum of {panel.min_size}{where} (methodology §6.1.1)."
        )
    if panel.lead_id is None:
        warnings.append(f"{panel.name} has no lead (adjudicator).")
    return warnings


def panel_size_warnings() -> list[str]:
    """Every tradition without a panel, every panel below its minimum size, and panels without a lead."""
    warnings: list[str] = []
    panels = list(panels_with_sizes())
    with_panel = {p.tradition_id for p in panels}
    for tradition in Tradition.objects.all():
        if tradition.pk not in with_panel:
            warnings.append(f"{tradition.name} has no panel (minimum {tradition.min_panel_size} experts).")
    for panel in panels:
        warnings += panel_warnings(panel=panel, n_members=getattr(panel, "n_members", None))
    return warnings


def panels_with_sizes() -> QuerySet[Panel]:
    """Panels with `n_members` annotated, for the panel overview."""
    return Panel.objects.select_related("tradition", "lead").annotate(n_members=Count("members"))


def draw_pool() -> list[PoolItem]:
    """Every response to an active test case, with the facets the draw is stratified by."""
    rows = ModelResponse.objects.filter(test_case__is_active=True).values_list(
        "id", "test_case__dimension", "test_case__difficulty", "test_case__tradition__key", "model__name", "text"
    )
    return [
        PoolItem(response_id=rid, dimension=dim, difficulty=diff, tradition=trad or "", model=model,
                 word_count=len(text.split()))
        for rid, dim, diff, trad, model, text in rows.iterator(chunk_size=2000)
    ]


def previous_items(*, cycle: CalibrationCycle | None) -> list[PreviousItem]:
    """The items of a cycle as the next draw sees them."""
    if cycle is None:
        return []
    return [PreviousItem(rid, anchor) for rid, anchor in cycle.items.values_list("response_id", "is_anchor")]


def judge_extreme_composite_response_ids(
    *, response_ids: Iterable[int], share: float = 0.05, dimensions: Mapping[int, str] | None = None,
    decisive: Mapping[int, DecisiveResult] | None = None,
) -> frozenset[int]:
    """Responses whose judge composite is extreme — the lowest and highest `share` (at least one each) per
    dimension — as edge cases for the draw. Uses the newest finished judge run and its decisive result per
    response; with no judge run, there are no judge-based edge cases. `dimensions` ({response id: its case's
    dimension}), when the caller has them, spares a query over every judged response; so does `decisive` (the newest
    finished run's `judge_decisive_scored` over the pool, {} when there is no run), which spares the run's queries.
    """
    import math

    wanted = set(response_ids)
    if decisive is None:
        run = judge_run_latest_finished()
        if run is None or not wanted:
            return frozenset()
        decisive = judge_decisive_scored(run=run, response_ids=wanted)
    else:
        decisive = {rid: result for rid, result in decisive.items() if rid in wanted}
    dimension_of = dimensions if dimensions is not None else dict(
        ModelResponse.objects.filter(pk__in=list(decisive)).values_list("pk", "test_case__dimension"))
    per_dimension: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for response_id, result in decisive.items():
        if result.composite is not None:
            per_dimension[dimension_of[response_id]].append((float(result.composite), response_id))
    extremes: set[int] = set()
    for values in per_dimension.values():
        values.sort()
        k = max(1, math.ceil(share * len(values)))
        extremes.update(rid for _, rid in values[:k])
        extremes.update(rid for _, rid in values[-k:])
    return frozenset(extremes)


def dimension_order() -> list[str]:
    return [choice.value for choice in Dimension]


def cycle_latest() -> CalibrationCycle | None:
    return CalibrationCycle.objects.order_by("-created_at", "-id").first()


def cycle_item_counts(*, cycle: CalibrationCycle) -> dict[str, int]:
    """Items per source and anchors in a cycle."""
    counts = dict(cycle.items.values_list("source").annotate(n=Count("id")).values_list("source", "n"))
    counts["anchors"] = cycle.items.filter(is_anchor=True).count()
    counts["total"] = cycle.items.count()
    counts["unassigned"] = CycleItem.objects.filter(cycle=cycle, assignments__isnull=True).count()
    return counts


def cycle_inclusion_counts(*, cycle: CalibrationCycle) -> dict[str, int]:
    """Items per inclusion basis (drawn, carried, recomputed, edge_case, cross, unknown), every basis present."""
    counts = dict.fromkeys(CycleItem.InclusionBasis.values, 0)
    counts.update(cycle.items.values_list("inclusion_basis").annotate(n=Count("id")).values_list("inclusion_basis", "n"))
    return counts


@dataclass
class ProgressRow:
    label: str
    done: int
    total: int
    median_seconds: float | None
    withdrawn: int = 0  # kept as records, left out of done / total

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


@dataclass
class PanelProgress:
    panel: ProgressRow
    experts: list[ProgressRow]


def cycle_progress(*, cycle: CalibrationCycle) -> list[PanelProgress]:
    """Per panel and per expert: done / total (withdrawn counted apart) and the median active seconds per submitted
    item, over the items with a recorded duration (None when there is none: the page shows "—")."""
    done = Q(status__in=[Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED])
    withdrawn = Q(status=Assignment.Status.WITHDRAWN)
    counts = (
        Assignment.objects.counted().filter(cycle=cycle)  # re-served (test–retest) items are not work to count
        .values("panel_id", "panel__name", "expert_id", "expert__email", "expert__display_name")
        .annotate(total=Count("id", filter=~withdrawn), done=Count("id", filter=done),
                  withdrawn=Count("id", filter=withdrawn))
        .order_by("panel__name", "expert__email")
    )
    seconds: dict[tuple[int, int], list[int]] = defaultdict(list)
    # Only recorded durations: an item submitted without a heartbeat (imported, scripted, the demo) has 0 s,
    # which is "unknown", not "instant" — counted, it pulled medians to "0 s".
    for panel_id, expert_id, spent in Annotation.objects.counted().filter(
        assignment__cycle=cycle, status=Annotation.Status.SUBMITTED, seconds_spent__gt=0
    ).values_list("assignment__panel_id", "assignment__expert_id", "seconds_spent"):
        seconds[(panel_id, expert_id)].append(spent)

    def median(values: list[int]) -> float | None:
        return float(statistics.median(values)) if values else None

    panels: dict[int, PanelProgress] = {}
    for row in counts:
        entry = panels.setdefault(
            row["panel_id"], PanelProgress(ProgressRow(row["panel__name"], 0, 0, None), [])
        )
        label = row["expert__display_name"] or row["expert__email"]
        if row["expert__display_name"]:
            label = f"{row['expert__display_name']} <{row['expert__email']}>"
        entry.experts.append(
            ProgressRow(label, row["done"], row["total"], median(seconds[(row["panel_id"], row["expert_id"])]),
                        row["withdrawn"])
        )
        entry.panel.done += row["done"]
        entry.panel.total += row["total"]
        entry.panel.withdrawn += row["withdrawn"]
    for panel_id, entry in panels.items():
        entry.panel.median_seconds = median(
            [s for (p, _e), values in seconds.items() if p == panel_id for s in values]
        )
    return list(panels.values())


class AssignmentCompleteness(TypedDict):
    """A cycle's assignments by status (withdrawn ones also by reason), as a report snapshot records them."""

    assignments: int
    submitted: int
    skipped: int
    open: int  # pending or draft
    withdrawn: int
    withdrawn_by_reason: dict[str, int]


def cycle_assignment_completeness(*, cycle: CalibrationCycle) -> AssignmentCompleteness:
    """A cycle's assignments by status, withdrawn ones by reason (kept as records, never scored): one query."""
    rows = (Assignment.objects.counted().filter(cycle=cycle).values_list("status", "withdrawn_reason")
            .annotate(n=Count("id")).order_by())
    by_status = dict.fromkeys(Assignment.Status.values, 0)
    by_reason = dict.fromkeys(Assignment.WithdrawnReason.values, 0)
    for status, reason, n in rows:
        by_status[status] += n
        if status == Assignment.Status.WITHDRAWN:
            by_reason[reason] += n
    return AssignmentCompleteness(
        assignments=sum(by_status.values()),
        submitted=by_status[Assignment.Status.SUBMITTED],
        skipped=by_status[Assignment.Status.SKIPPED],
        open=by_status[Assignment.Status.PENDING] + by_status[Assignment.Status.DRAFT],
        withdrawn=by_status[Assignment.Status.WITHDRAWN],
        withdrawn_by_reason=by_reason,
    )


def expert_truth_composites(*, rubric: RubricVersion | None = None) -> dict[int, float]:
    """{response id: the experts' composite in [0, 1]} over every standard cycle (four queries): the truth rule of
    `calibration.cycles.truth` with `rubric`'s weights (by default the active rubric); a newer cycle's truth for a
    response replaces an older one."""
    from evaluations.selectors import rubric_active

    from .truth import response_truths_over

    truths = response_truths_over(cycles=CalibrationCycle.objects.filter(kind=CalibrationCycle.Kind.STANDARD),
                                  rubric=rubric or rubric_active())
    return {response_id: truth.composite for response_id, truth in truths.items()}


def active_design(*, pool: list[PoolItem], run: JudgeRun | None, decisive: Mapping[int, DecisiveResult],
                  with_uncertainty: bool = True) -> ActiveDesign:
    """What the active draw strategy learns from: the residual SDs of the judge run (`decisive`: its
    `judge_decisive_scored` over the pool) against the expert truths (per stratum, with fallbacks), and — with
    `with_uncertainty` — the judge's own uncertainty per response: the run-to-run spread (SD of the decisive
    composite) over its repeat series when the run is a repeat with ≥ 2 finished runs in its series, else the
    disagreement |primary − secondary| of its two judges, else none."""
    if run is None:
        return ActiveDesign()
    facets = {p.response_id: p for p in pool}
    truths = expert_truth_composites(rubric=run.rubric)
    labelled = [Labelled(p.dimension, p.difficulty, p.tradition, p.model, truths[rid], float(result.composite))
                for rid, result in decisive.items() if result.composite is not None and rid in truths
                for p in [facets[rid]] if rid in facets]
    residuals = residual_sd_table(labelled)
    if not with_uncertainty:
        return ActiveDesign(residuals=residuals)
    series = judge_run_series(run=run) if run.repeat_of_id else [run]
    uncertainty: dict[int, float] = {}
    source = ""
    if len(series) >= 2:
        values: dict[int, list[float]] = defaultdict(list)
        for member in series:
            for rid, result in judge_decisive_scored(run=member, response_ids=list(facets)).items():
                if result.composite is not None:
                    values[rid].append(float(result.composite))
        uncertainty = {rid: statistics.stdev(v) for rid, v in values.items() if len(v) >= 2}
        source = f"run-to-run spread over its {len(series)}-run repeat series"
    else:
        pairs: dict[int, dict[str, float]] = defaultdict(dict)
        for rid, role, composite in JudgeResult.objects.filter(
                run=run, status=JudgeResult.Status.SCORED, composite__isnull=False,
                role__in=[JudgeResult.Role.PRIMARY, JudgeResult.Role.SECONDARY]).values_list(
                "response_id", "role", "composite").iterator(chunk_size=5000):
            pairs[rid][role] = float(composite or 0)  # never None: filtered above
        uncertainty = {rid: abs(p["primary"] - p["secondary"]) for rid, p in pairs.items()
                       if "primary" in p and "secondary" in p}
        if uncertainty:
            source = "disagreement between its primary and secondary judges"
    if not any(v > 0 for v in uncertainty.values()):
        uncertainty, source = {}, ""
    return ActiveDesign(residuals=residuals, uncertainty=uncertainty, uncertainty_source=source)


def tradition_names() -> dict[str, str]:
    """Tradition key → display name, for the stratification tables."""
    return dict(Tradition.objects.values_list("key", "name"))


def cycles_overview() -> QuerySet[CalibrationCycle]:
    """Cycles newest first with their previous cycle, without the (large) draw reports."""
    return CalibrationCycle.objects.select_related("previous").defer("draw_report", "previous__draw_report")


def cycle_count() -> int:
    """How many calibration cycles exist (the next default name counts on it)."""
    return CalibrationCycle.objects.count()


def cycle_detail(*, pk: int) -> CalibrationCycle:
    """A cycle with its previous cycle, neutral panel and rubric (one query); 404 when there is none."""
    found = CalibrationCycle.objects.select_related("previous", "neutral_panel", "rubric").filter(pk=pk).first()
    if found is None:
        raise Http404("No such calibration cycle.")
    return found


def cycles_recent(*, limit: int = 100) -> list[CalibrationCycle]:
    """The newest `limit` cycles, without their draw reports."""
    return list(CalibrationCycle.objects.defer("draw_report")[:limit])


def cycle_name_taken(*, name: str) -> bool:
    """Whether a calibration cycle already has this name."""
    return CalibrationCycle.objects.filter(name=name).exists()
