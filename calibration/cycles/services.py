"""Writes for panels and calibration cycles: committing a draw and assigning its items to panel members."""
from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, replace
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.urls import reverse

from accounts.models import Notification, User
from accounts.notifications import notify
from annotations.models import (
    Assignment,
    CalibrationCycle,
    CycleItem,
    Panel,
    retest_min_days_default,
    retest_settings_errors,
    retest_share_default,
)
from evaluations.domain import language_name, scores_language
from evaluations.judge.selectors import judge_decisive_scored, judge_run_latest_finished
from evaluations.models import RubricVersion, Tradition
from evaluations.selectors import rubric_active
from stats.ppi import expected_half_width

from .active import ActiveDesign
from .sampling import (
    STRATEGIES,
    STRATEGY_ACTIVE,
    STRATEGY_PROPORTIONAL,
    DrawParams,
    DrawResult,
    PoolItem,
    draw,
)
from .selectors import (
    active_design,
    dimension_order,
    draw_pool,
    judge_extreme_composite_response_ids,
    panel_warnings,
    previous_items,
)


@dataclass(frozen=True)
class RetestSettings:
    """A cycle's test–retest settings (annotations/retests.py): off is said with `enabled`, never with a 0 share."""

    enabled: bool = True
    share: Decimal | None = None  # None: settings.RETEST_SHARE
    min_days: int | None = None  # None: settings.RETEST_MIN_DAYS


@dataclass
class AssignmentReport:
    assignments: int
    experts: int
    unassigned_items: int
    notes: list[str]


def cycle_draw_compute(*, params: DrawParams, previous: CalibrationCycle | None = None) -> DrawResult:
    """Compute (without storing) the draw for these parameters: what the preview page shows."""
    return cycle_draw_preview(params=params, previous=previous).result


@dataclass
class HalfWidthRow:
    """One model's expected half-width of its calibrated score after the cycle, under each strategy, over the share
    of its responses the allocation covers (strata with at least one label)."""

    model: str
    proportional: float
    active: float
    coverage_proportional: float  # share of the model's responses in strata with a label, 0–1
    coverage_active: float
    strata: int  # the model's (dimension × difficulty × tradition) strata

    @property
    def proportional_label(self) -> str:
        return _half_width_label(self.proportional)

    @property
    def active_label(self) -> str:
        return _half_width_label(self.active)

    @property
    def coverage_proportional_label(self) -> str:
        return f"{self.coverage_proportional:.0%}"

    @property
    def coverage_active_label(self) -> str:
        return f"{self.coverage_active:.0%}"


def _half_width_label(value: float) -> str:
    return "—" if math.isinf(value) else f"±{value:.3f}"


@dataclass
class DrawPreview:
    result: DrawResult  # the draw of the chosen strategy
    half_widths: list[HalfWidthRow]


def cycle_draw_preview(*, params: DrawParams, previous: CalibrationCycle | None = None) -> DrawPreview:
    """The draw for these parameters and, per model, the expected half-width of its calibrated score after the cycle
    under proportional and active allocation (`stats.ppi.expected_half_width`, residual SDs of `active_design`)."""
    pool = draw_pool()
    run = judge_run_latest_finished()
    decisive = judge_decisive_scored(run=run, response_ids=[p.response_id for p in pool]) if run else {}
    judge_edges = judge_extreme_composite_response_ids(response_ids=[p.response_id for p in pool],
                                                       dimensions={p.response_id: p.dimension for p in pool},
                                                       decisive=decisive)
    # The half-widths need the residual SDs only; the judge's own uncertainty matters to the active draw itself.
    design = active_design(pool=pool, run=run, decisive=decisive, with_uncertainty=params.strategy == STRATEGY_ACTIVE)
    prior = previous_items(cycle=previous)
    results = {
        strategy: draw(pool, replace(params, strategy=strategy), previous=prior, judge_edge_ids=judge_edges,
                       dimensions=dimension_order(), design=design)
        for strategy in STRATEGIES
    }
    return DrawPreview(result=results[params.strategy], half_widths=draw_half_widths(
        pool=pool, design=design, proportional=results[STRATEGY_PROPORTIONAL], active=results[STRATEGY_ACTIVE]))


def draw_half_widths(*, pool: list[PoolItem], design: ActiveDesign, proportional: DrawResult, active: DrawResult
                     ) -> list[HalfWidthRow]:
    """Per model: z·√(Σ_h W_h² S_h²/n_h) (`stats.ppi.expected_half_width`) over its dimension × difficulty × tradition
    strata that get at least one label, n_h the items with a known inclusion probability the draw gives the stratum
    (edge cases left out, as the leaderboard leaves them), and the share of the model's responses those strata hold.
    A stratum without a label cannot be estimated from this cycle (its π is 0): it is left out of the width and
    counted against the coverage instead of making every width infinite (the norm with ~100 strata per dimension and
    50 places). "—" when nothing of the model is covered."""
    facets = {p.response_id: p for p in pool}
    sizes: dict[str, dict[tuple[str, str, str], int]] = defaultdict(lambda: defaultdict(int))
    for p in pool:
        sizes[p.model][(p.dimension, p.difficulty, p.tradition)] += 1

    def labels(result: DrawResult) -> dict[str, dict[tuple[str, str, str], int]]:
        counts: dict[str, dict[tuple[str, str, str], int]] = defaultdict(lambda: defaultdict(int))
        for item in result.items:
            if item.inclusion_probability is not None and item.response_id in facets:
                p = facets[item.response_id]
                counts[p.model][(p.dimension, p.difficulty, p.tradition)] += 1
        return counts

    by_strategy = {STRATEGY_PROPORTIONAL: labels(proportional), STRATEGY_ACTIVE: labels(active)}
    rows = []
    for model in sorted(sizes):
        strata = sizes[model]
        sds = {key: design.residuals.sd(key[0], (key[1], key[2], model))[0] for key in strata}
        widths, coverage = {}, {}
        for strategy, counts in by_strategy.items():
            alloc = {key: n for key, n in counts.get(model, {}).items() if n > 0}
            covered = {key: strata[key] for key in alloc}
            widths[strategy] = expected_half_width(covered, sds, alloc) if covered else math.inf
            coverage[strategy] = sum(covered.values()) / sum(strata.values())
        rows.append(HalfWidthRow(model, widths[STRATEGY_PROPORTIONAL], widths[STRATEGY_ACTIVE],
                                 coverage[STRATEGY_PROPORTIONAL], coverage[STRATEGY_ACTIVE], len(strata)))
    return rows


@transaction.atomic
def panel_create(
    *, name: str, tradition: Tradition | None, members: list[User], lead: User | None = None
) -> tuple[Panel, list[str]]:
    """Create a panel; returns it with the size warnings that now apply (a panel below minimum is allowed)."""
    panel = Panel.objects.create(name=name, tradition=tradition, lead=lead)
    panel.members.set(members)
    return panel, panel_warnings(panel=panel)


@transaction.atomic
def cycle_commit(
    *,
    name: str,
    params: DrawParams,
    previous: CalibrationCycle | None = None,
    neutral_panel: Panel | None = None,
    show_reference_answers: bool = False,
    rubric: RubricVersion | None = None,
    created_by: User | None = None,
    expected_fingerprint: str | None = None,
    retest: RetestSettings | None = None,
) -> tuple[CalibrationCycle, AssignmentReport]:
    """Store the draw as a new cycle (recomputed from the seed) and assign its items to panel members."""
    if CalibrationCycle.objects.filter(name=name).exists():
        raise ValidationError(f"a cycle named {name!r} already exists", code="duplicate_name")
    retest = retest or RetestSettings()
    share = retest.share if retest.share is not None else retest_share_default()
    min_days = retest.min_days if retest.min_days is not None else retest_min_days_default()
    retest_errors = retest_settings_errors(enabled=retest.enabled, share=share, min_days=min_days)
    if retest_errors:
        raise ValidationError(retest_errors, code="retest_settings")
    result = cycle_draw_compute(params=params, previous=previous)
    if expected_fingerprint and result.fingerprint != expected_fingerprint:
        raise ValidationError(
            "the pool of responses changed since the preview; preview the draw again before committing",
            code="pool_changed",
        )
    if not result.items:
        raise ValidationError("the pool is empty: import test cases and model responses first", code="empty_pool")
    cycle = CalibrationCycle.objects.create(
        name=name,
        rubric=rubric or rubric_active(),
        previous=previous,
        seed=params.seed,
        min_per_dimension=params.min_per_dimension,
        refresh_fraction=Decimal(str(params.refresh_fraction)),
        edge_fraction=Decimal(str(params.edge_fraction)),
        draw_strategy=params.strategy,
        show_reference_answers=show_reference_answers,
        neutral_panel=neutral_panel,
        retest_enabled=retest.enabled,
        retest_share=Decimal(str(share)),
        retest_min_days=min_days,
        draw_report=result.as_report(),
        created_by=created_by,
    )
    CycleItem.objects.bulk_create(
        CycleItem(cycle=cycle, response_id=item.response_id, source=item.source, is_anchor=item.is_anchor,
                  inclusion_probability=item.inclusion_probability, inclusion_basis=item.inclusion_basis,
                  stratum=list(item.stratum))
        for item in result.items
    )
    report = cycle_assignments_create(cycle=cycle)
    return cycle, report


def _panel_for(panels: dict[tuple[int | None, str], Panel], tradition_id: int, language: str) -> Panel | None:
    """The panel that scores a tradition's case in `language`: the tradition × language panel, else the tradition's
    panel for every language (issue 35)."""
    primary = (language or "en").split("-")[0].lower()
    return panels.get((tradition_id, primary)) or panels.get((tradition_id, ""))


def _scoring_languages(user: User) -> list[str]:
    profile = getattr(user, "expert_profile", None)
    return profile.scores_in if profile is not None else ["en"]


@transaction.atomic
def cycle_assignments_create(*, cycle: CalibrationCycle) -> AssignmentReport:
    """Give each item to every member of its tradition's panel (neutral items: the cycle's neutral panel).

    Each expert's queue order is shuffled with `random.Random(f"{cycle.seed}:{expert id}")`, so it is
    reproducible but differs between experts (no shared order effects).
    """
    # Issue 35: a tradition may have a panel per language beside its panel for every other language ("").
    panels = {(p.tradition_id, p.language): p for p in Panel.objects.filter(tradition__isnull=False)
              .select_related("tradition").prefetch_related("members__expert_profile")}
    # A cross-tradition cycle (§6.2.3) also gives each scored tradition's items to the scoring traditions' panels
    # (their panel for every language).
    by_key = {p.tradition.key: p for (_, language), p in panels.items() if p.tradition is not None and not language}
    out_group: dict[str, list[Panel]] = defaultdict(list)
    if cycle.kind == CalibrationCycle.Kind.CROSS_TRADITION:
        for scoring, scored in sorted((cycle.cross_pairs or {}).items()):
            if scoring in by_key:
                out_group[scored].append(by_key[scoring])
    neutral = None
    if cycle.neutral_panel_id:
        neutral = Panel.objects.prefetch_related("members__expert_profile").get(pk=cycle.neutral_panel_id)
    items = list(
        CycleItem.objects.filter(cycle=cycle).select_related("response__test_case").order_by("id")
    )
    existing = set(Assignment.objects.filter(cycle=cycle).values_list("item_id", "expert_id"))
    per_expert: dict[int, list[tuple[CycleItem, Panel]]] = defaultdict(list)
    unassigned: dict[str, int] = defaultdict(int)
    keys = dict(Tradition.objects.values_list("id", "key"))
    for item in items:
        tradition_id = item.response.test_case.tradition_id
        language = item.response.test_case.language
        panel = _panel_for(panels, tradition_id, language) if tradition_id else neutral
        if panel is not None and not panel.takes_language(language):  # a neutral panel of another language
            unassigned[f"{panel.name} scores only {language_name(panel.language)} ({panel.language})"] += 1
            continue
        if panel is None or not panel.members.all():
            unassigned["no panel" if panel is None else f"{panel.name} has no members"] += 1
            continue
        given = set()
        scored_key = keys.get(tradition_id, "") if tradition_id is not None else ""
        readers = 0
        for scoring_panel in [panel, *out_group.get(scored_key, [])]:
            for member in scoring_panel.members.all():
                # Issue 35: only experts who score the case's language (none listed: English only).
                if not scores_language(_scoring_languages(member), language):
                    continue
                readers += 1
                if (item.pk, member.pk) not in existing and member.pk not in given:
                    given.add(member.pk)  # an expert on both panels scores the item once, for the first panel
                    per_expert[member.pk].append((item, scoring_panel))
        if not readers:
            unassigned[f"no member of {panel.name} scores {language_name(language)} ({language})"] += 1
    # Re-running after a panel gained members appends to the existing queues.
    start = dict(
        Assignment.objects.filter(cycle=cycle).values("expert_id").annotate(top=Max("position"))
        .values_list("expert_id", "top")
    )
    to_create: list[Assignment] = []
    for expert_id in sorted(per_expert):
        entries = sorted(per_expert[expert_id], key=lambda e: e[0].pk)
        random.Random(f"{cycle.seed}:{expert_id}").shuffle(entries)
        offset = start.get(expert_id, 0)
        for position, (item, panel) in enumerate(entries, start=offset + 1):
            to_create.append(Assignment(expert_id=expert_id, cycle=cycle, item=item, panel=panel, position=position))
    Assignment.objects.bulk_create(to_create, batch_size=1000)
    _notify_new_assignments(cycle=cycle, counts={e: len(entries) for e, entries in per_expert.items()})
    notes = [f"{n} item(s) not assigned: {reason}" for reason, n in sorted(unassigned.items())]
    return AssignmentReport(
        assignments=len(to_create), experts=len(per_expert), unassigned_items=sum(unassigned.values()), notes=notes
    )


def _notify_new_assignments(*, cycle: CalibrationCycle, counts: dict[int, int]) -> None:
    """One notification per expert and cycle (not per item), with how many items they were given."""
    experts = User.objects.in_bulk([e for e, n in counts.items() if n])
    for expert_id, n in sorted(counts.items()):
        if expert_id in experts:
            notify(users=[experts[expert_id]], kind=Notification.Kind.ASSIGNMENTS,
                   text=f"{n} new item{'s' if n != 1 else ''} to score in “{cycle.name}”.",
                   link=reverse("annotations:queue"), key=f"assignments:{cycle.pk}")


def cycle_items_mark_anchor(*, cycle: CalibrationCycle, response_ids: list[int], anchor: bool = True) -> int:
    """Mark (or unmark) items as anchors, kept in every following cycle."""
    return CycleItem.objects.filter(cycle=cycle, response_id__in=response_ids).update(is_anchor=anchor)
