"""Reads for adjudication: which items disagree, who may decide them, and the blinded decision page."""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypedDict

from django.core.paginator import Page, Paginator
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import Http404
from django.utils.safestring import SafeString
from django.utils.translation import gettext, gettext_noop

from access.policy import Action, adjudicates_item, allowed, panels_adjudicated
from accounts.models import User
from annotations.models import (
    AdjudicationDecision,
    Annotation,
    Assignment,
    CalibrationCycle,
    CycleItem,
    SubScore,
)
from annotations.rendering import markdown_to_safe_html
from evaluations.labels import rubric_label
from evaluations.methodology import SCALE, ScaleLevel
from evaluations.models import Dimension, RubricSubDimension

from .rules import item_disagreements

DONE = {Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED}


@dataclass
class ItemState:
    """Where one cycle item stands: its raters, their scores, and whether it needs a decision."""

    item_id: int
    cycle_id: int
    panel_id: int
    rule: str
    cycle_closed: bool
    rater_ids: set[int] = field(default_factory=set)
    unfinished: int = 0
    scores: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))  # per key, in no given order
    decided: bool = False

    @property
    def complete(self) -> bool:
        return self.unfinished == 0 or self.cycle_closed

    @cached_property
    def disagreements(self) -> dict[str, str]:
        """Read once all scores are in (item_states fills `scores` before anyone asks)."""
        return item_disagreements(self.scores, self.rule) if self.complete else {}

    @property
    def needs_adjudication(self) -> bool:
        return bool(self.disagreements)


_REASONS = (  # the rules' reasons (rules.sub_dimension_disagreement, English and cached) as messages
    (re.compile(r"scores span (?P<span>\d+) points \((?P<scores>[\d, ]*)\)"),
     gettext_noop("scores span %(span)s points (%(scores)s)")),
    (re.compile(r"no majority \((?P<scores>[\d, ]*)\)"), gettext_noop("no majority (%(scores)s)")),
    (re.compile(r"scores differ \((?P<scores>[\d, ]*)\)"), gettext_noop("scores differ (%(scores)s)")),
)


def disagreement_text(reason: str) -> str:
    """A rule's reason in the interface language (an unknown one as it is)."""
    for pattern, message in _REASONS:
        match = pattern.fullmatch(reason)
        if match:
            return gettext(message) % match.groupdict()
    return reason


def item_states(
    *, cycle_ids: list[int] | None = None, item_ids: list[int] | QuerySet[CycleItem, Any] | None = None
) -> dict[int, ItemState]:
    """Every item's state, from three queries however many items there are (`item_ids` may be a subquery)."""
    # No ordering: the models' default orderings would join users and cycles only to sort.
    # Re-served (test–retest) assignments never count: not as a rater, an unfinished item or a second score.
    assignments = Assignment.objects.counted().order_by()
    scores = SubScore.objects.counted().filter(annotation__status=Annotation.Status.SUBMITTED).order_by()
    decisions = AdjudicationDecision.objects.filter(is_current=True).order_by()
    if cycle_ids is not None:
        assignments = assignments.filter(cycle_id__in=cycle_ids)
        scores = scores.filter(annotation__assignment__cycle_id__in=cycle_ids)
        decisions = decisions.filter(item__cycle_id__in=cycle_ids)
    if item_ids is not None:
        assignments = assignments.filter(item_id__in=item_ids)
        scores = scores.filter(annotation__assignment__item_id__in=item_ids)
        decisions = decisions.filter(item_id__in=item_ids)
    states: dict[int, ItemState] = {}
    rows = assignments.values_list("item_id", "cycle_id", "panel_id", "expert_id", "status",
                                   "cycle__disagreement_rule", "cycle__status")
    for item_id, cycle_id, panel_id, expert_id, status, rule, cycle_status in rows:
        state = states.get(item_id)
        if state is None:
            state = states[item_id] = ItemState(item_id, cycle_id, panel_id, rule,
                                                cycle_status == CalibrationCycle.Status.CLOSED)
        state.rater_ids.add(expert_id)  # withdrawn raters too: they saw the item, so they may not decide it
        if status not in DONE and status != Assignment.Status.WITHDRAWN:
            state.unfinished += 1
    # Counted per score value in the database: about half the rows of one per expert's score.
    counted = scores.values_list("annotation__assignment__item_id", "key", "score").annotate(n=Count("id"))
    for item_id, key, score, n in counted:
        if item_id in states:
            states[item_id].scores[key].extend([score] * n)
    for item_id in decisions.values_list("item_id", flat=True):
        if item_id in states:
            states[item_id].decided = True
    return states


def may_adjudicate(*, user: User, state: ItemState) -> bool:
    """Panel leads, adjudicators of the item's panel, and admins — never one of the item's own raters (the policy's
    ADJUDICATE_ITEM rule)."""
    return allowed(user, Action.ADJUDICATE_ITEM, state)


@dataclass(frozen=True)
class QueueEntry:
    item_id: int
    cycle: str
    dimension: str
    tradition: str
    disagreements: dict[str, str]
    decided: bool


QUEUE_PAGE_SIZE = 50


def _queue_candidates(*, user: User, panels: set[int] | None, include_decided: bool) -> QuerySet[CycleItem, Any]:
    """Ids of the items that can be in the user's queue, whatever their scores: finished (or in a closed cycle),
    of the user's panels, not rated by the user, and (unless asked) without a decision. `adjudication_queue`
    applies the full rule to these only, so items settled long ago are not read again on every visit.
    """
    # Uncorrelated subqueries: the database evaluates each once (SQLite ran a correlated one per item).
    assignments = Assignment.objects.counted().order_by()  # a re-served item open never holds the queue back
    unfinished = assignments.exclude(status__in=DONE).values("item_id")
    items = CycleItem.objects.filter(Q(cycle__status=CalibrationCycle.Status.CLOSED) | ~Q(pk__in=unfinished))
    items = items.exclude(pk__in=assignments.filter(expert_id=user.pk).values("item_id"))
    if panels is not None:
        items = items.filter(pk__in=assignments.filter(panel_id__in=panels).values("item_id"))
    if not include_decided:
        items = items.exclude(pk__in=AdjudicationDecision.objects.filter(is_current=True).order_by().values("item_id"))
    return items.order_by().values("pk")


def _queue_states(*, user: User, include_decided: bool) -> list[ItemState]:
    """The states of the items in the user's queue, by cycle and item (four queries)."""
    panels = panels_adjudicated(user)
    if panels is not None and not panels:
        return []
    states = item_states(item_ids=_queue_candidates(user=user, panels=panels, include_decided=include_decided))
    wanted = [s for s in states.values()
              if s.needs_adjudication and (include_decided or not s.decided) and adjudicates_item(user, s, panels=panels)]
    return sorted(wanted, key=lambda s: (s.cycle_id, s.item_id))


def _queue_entries(states: list[ItemState]) -> list[QueueEntry]:
    """What the queue shows of these items (one query)."""
    rows = {pk: rest for pk, *rest in CycleItem.objects.filter(pk__in=[s.item_id for s in states]).order_by().values_list(
        "pk", "cycle__name", "response__test_case__dimension", "response__test_case__tradition__name")}
    dimensions = dict(Dimension.choices)
    return [QueueEntry(s.item_id, rows[s.item_id][0], dimensions.get(rows[s.item_id][1], rows[s.item_id][1]),
                       rows[s.item_id][2] or "", {key: disagreement_text(why) for key, why in s.disagreements.items()},
                       s.decided) for s in states]


def adjudication_queue(*, user: User, include_decided: bool = False) -> list[QueueEntry]:
    """Items of the user's panels that need a decision (and, if asked, those already decided)."""
    return _queue_entries(_queue_states(user=user, include_decided=include_decided))


def adjudication_waiting(*, user: User) -> int:
    """How many items wait for the user's decision (0 for someone who adjudicates nothing)."""
    return len(_queue_states(user=user, include_decided=False))


@dataclass(frozen=True)
class QueuePage:
    entries: list[QueueEntry]
    page: Page


def adjudication_queue_page(
    *, user: User, include_decided: bool = False, page: int | str = 1, per_page: int | None = None
) -> QueuePage:
    """One page of `adjudication_queue` (the same order; QUEUE_PAGE_SIZE items); out-of-range pages give the last."""
    states = _queue_states(user=user, include_decided=include_decided)
    found = Paginator(states, per_page or QUEUE_PAGE_SIZE).get_page(page)
    return QueuePage(entries=_queue_entries(list(found.object_list)), page=found)


@dataclass(frozen=True)
class ExpertView:
    label: str
    public_id: str
    status: str
    scores: dict[str, int]
    rationale: str
    flagged_broken: bool
    broken_note: str
    ordered_scores: list[int | None]  # aligned with AdjudicationView.sub_dimensions


@dataclass(frozen=True)
class DecisionView:
    adjudicator: str
    reason: str
    note: str
    created_at: Any
    is_current: bool
    scores: dict[str, int]


@dataclass(frozen=True)
class AdjudicationView:
    item_id: int
    cycle: str
    dimension: str
    tradition: str
    prompt_html: SafeString
    response_html: SafeString
    reference_html: SafeString | None
    sub_dimensions: list[RubricSubDimension]
    scale: tuple[ScaleLevel, ...]
    experts: list[ExpertView]
    disagreements: dict[str, str]
    history: list[DecisionView]
    current: dict[str, int]


def key_label(key: str, names: dict[str, str]) -> str:
    """A sub-dimension's name for people: the cycle's rubric's, else the one place's (evaluations.labels)."""
    return names.get(key) or rubric_label(key)


def adjudication_state_for(*, user: User, item_id: int) -> ItemState:
    """The item's state if `user` may adjudicate it; 404 otherwise (existence is not confirmed)."""
    state = item_states(item_ids=[item_id]).get(item_id)
    if state is None or not may_adjudicate(user=user, state=state):
        raise Http404("No such item.")
    return state


def adjudication_view(*, state: ItemState) -> AdjudicationView:
    """Everything the decision page shows; experts appear as Expert A, B, C (stable per item)."""
    item = CycleItem.objects.select_related("cycle", "response__test_case__tradition").get(pk=state.item_id)
    case = item.response.test_case
    subs = list(RubricSubDimension.objects.filter(
        dimension__rubric_id=item.cycle.rubric_id, dimension__key=case.dimension).order_by("order"))
    assignments = (Assignment.objects.counted().filter(item=item).order_by("public_id")
                   .prefetch_related(Prefetch("annotations", queryset=Annotation.objects.prefetch_related("scores"))))
    experts = []
    for index, assignment in enumerate(assignments):
        annotation = next(iter(assignment.annotations.all()), None)
        submitted = annotation is not None and annotation.status == Annotation.Status.SUBMITTED
        scores = {s.key: s.score for s in annotation.scores.all()} if submitted and annotation else {}
        experts.append(ExpertView(
            label=gettext("Expert %(letter)s") % {"letter": chr(ord("A") + index)},
            public_id=assignment.public_id,
            status=assignment.get_status_display(),
            scores=scores,
            rationale=annotation.rationale if annotation and annotation.is_locked else "",
            flagged_broken=bool(annotation and annotation.flagged_broken),
            broken_note=annotation.broken_note if annotation else "",
            ordered_scores=[scores.get(sub.key) for sub in subs],
        ))
    decisions = list(AdjudicationDecision.objects.filter(item=item).select_related("adjudicator")
                     .prefetch_related("scores"))
    names = {sub.key: sub.name for sub in subs}
    history = [DecisionView(str(d.adjudicator), d.get_reason_display(), d.note, d.created_at, d.is_current,
                            {key_label(s.key, names): s.score for s in d.scores.all()}) for d in decisions]
    current = next(({s.key: s.score for s in d.scores.all()} for d in decisions if d.is_current), {})
    return AdjudicationView(
        item_id=item.pk, cycle=item.cycle.name, dimension=case.get_dimension_display(),
        tradition=case.tradition.name if case.tradition else "",
        prompt_html=markdown_to_safe_html(case.prompt), response_html=markdown_to_safe_html(item.response.text),
        reference_html=markdown_to_safe_html(case.reference_answer) if case.reference_answer else None,
        sub_dimensions=subs, scale=SCALE, experts=experts,
        disagreements={key_label(key, names): disagreement_text(why) for key, why in state.disagreements.items()}, history=history,
        current=current,
    )


class GoldLabelRow(TypedDict):
    """One current gold score of an item's sub-dimension, as the export and the API give it."""

    cycle: str
    case: str  # the test case's external id
    model: str
    run_label: str
    dimension: str
    sub_dimension: str
    gold_score: int
    reason: str
    decision_id: int
    adjudicated_at: str  # ISO 8601


def gold_labels(*, cycle: CalibrationCycle | None = None) -> list[GoldLabelRow]:
    """Current gold scores, one row per item × sub-dimension, for exports and the API."""
    decisions = AdjudicationDecision.objects.filter(is_current=True).select_related(
        "item__cycle", "item__response__test_case", "item__response__model", "adjudicator").prefetch_related("scores")
    if cycle is not None:
        decisions = decisions.filter(item__cycle=cycle)
    rows: list[GoldLabelRow] = []
    for decision in decisions.order_by("item__cycle_id", "item__response__test_case__external_id", "item_id"):
        response = decision.item.response
        for score in sorted(decision.scores.all(), key=lambda s: s.key):
            rows.append(GoldLabelRow(
                cycle=decision.item.cycle.name,
                case=response.test_case.external_id,
                model=response.model.name,
                run_label=response.run_label,
                dimension=response.test_case.dimension,
                sub_dimension=score.key,
                gold_score=score.score,
                reason=decision.reason,
                decision_id=decision.pk,
                adjudicated_at=decision.created_at.isoformat(),
            ))
    return rows
