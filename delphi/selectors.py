"""Reads for Delphi pages. Expert-facing selectors return plain dataclasses without identities.

Blinding: nothing built for an expert carries another expert's id, name, email or response id; the
group feedback is statistics, a histogram of values and rationale texts in a seeded shuffled order.
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from access.policy import Action, allowed
from evaluations.models import RubricVersion

from .allocation import WeightGroup, points_str
from .models import METHODOLOGY_MIN_PANELISTS, DelphiAllocation, DelphiResponse, DelphiRound, DelphiStudy
from .schema import NamedAllocation, Proposal, WeightStats
from .svg import histogram_svg

DIMENSION_GROUP = "dimensions"


# --- weights of a rubric ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightField:
    """One weight to allocate: key, form field names, names, the rubric's current weight."""

    key: str  # "textual" or "textual.lexicalAccuracy"
    name: str
    description: str
    current: Decimal

    @property
    def field(self) -> str:
        return "w__" + self.key.replace(".", "__")

    @property
    def rationale_field(self) -> str:
        return "r__" + self.key.replace(".", "__")

    @property
    def dom_id(self) -> str:
        return "w-" + self.key.replace(".", "-")


@dataclass(frozen=True)
class WeightStructure:
    """The two levels of a rubric: dimensions, and each dimension's sub-dimensions."""

    dimensions: tuple[WeightField, ...]
    subs: dict[str, tuple[WeightField, ...]]  # dimension key → its sub-dimensions

    @property
    def groups(self) -> list[WeightGroup]:
        groups = [WeightGroup(DIMENSION_GROUP, gettext("The six dimensions"), tuple(d.key for d in self.dimensions))]
        for d in self.dimensions:
            label = gettext("The sub-dimensions of %(dimension)s") % {"dimension": gettext(d.name)}
            groups.append(WeightGroup(d.key, label, tuple(s.key for s in self.subs[d.key])))
        return groups

    @property
    def fields(self) -> list[WeightField]:
        return list(self.dimensions) + [s for d in self.dimensions for s in self.subs[d.key]]

    @property
    def names(self) -> dict[str, str]:
        return {f.key: f.name for f in self.fields}


def weight_structure(*, rubric: RubricVersion) -> WeightStructure:
    """The weights a Delphi round allocates for one rubric version (two queries)."""
    dimensions, subs = [], {}
    for d in rubric.dimensions.prefetch_related("sub_dimensions").order_by("order"):
        dimensions.append(WeightField(d.key, d.name, d.description, d.weight))
        subs[d.key] = tuple(
            WeightField(f"{d.key}.{s.key}", s.name, s.description, s.weight) for s in d.sub_dimensions.all()
        )
    return WeightStructure(tuple(dimensions), subs)


# --- who sees which study ---------------------------------------------------------------------------------


def studies_visible_to(user: Any) -> QuerySet[DelphiStudy]:
    """Staff: every study. Everyone else: the studies they are a panelist of."""
    qs = DelphiStudy.objects.select_related("tradition", "rubric")
    if allowed(user, Action.RUN_DELPHI):
        return qs
    return qs.for_panelist(user).distinct()


def study_for(*, user: Any, pk: int) -> DelphiStudy:
    """The study if the user may see it; 404 otherwise (a non-panelist learns nothing of its existence)."""
    study = studies_visible_to(user).filter(pk=pk).first()
    if study is None:
        raise Http404("No such Delphi study.")
    return study


def is_panelist(*, study: DelphiStudy, user: Any) -> bool:
    return study.panelists.filter(pk=getattr(user, "pk", None)).exists()


def round_open(*, study: DelphiStudy) -> DelphiRound | None:
    return study.rounds.open().first()


def rounds_awaiting_answer(*, expert: Any) -> list[DelphiRound]:
    """The open rounds of the expert's studies that they have not answered yet, oldest first (one query)."""
    answered = DelphiResponse.objects.filter(expert=expert).values("round_id")
    return list(DelphiRound.objects.open().filter(study__panelists=expert).exclude(pk__in=answered)
                .select_related("study").order_by("opened_at"))


def round_last_closed(*, study: DelphiStudy) -> DelphiRound | None:
    return study.rounds.closed().order_by("-number").first()


# --- warnings ---------------------------------------------------------------------------------------------


def study_warnings(*, study: DelphiStudy) -> list[str]:
    """Panel-size warnings: the methodology asks for at least 5 theologians per tradition (§4.3)."""
    panelists = list(study.panelists.select_related("expert_profile__tradition"))
    return panelist_warnings(tradition_name=study.tradition.name if study.tradition else None, panelists=panelists)


def panelist_warnings(*, tradition_name: str | None, panelists: list[Any]) -> list[str]:
    """Warnings for a (prospective) set of panelists; a small panel is allowed, never blocked."""
    n = len(panelists)
    warnings = []
    if tradition_name:
        if n < METHODOLOGY_MIN_PANELISTS:
            warnings.append(f"Only {n} panelist{'s' if n != 1 else ''} for {tradition_name}: the methodology asks "
                            f"for at least {METHODOLOGY_MIN_PANELISTS} theologians per tradition (§4.3).")
        return warnings
    counts: Counter[str] = Counter()
    for user in panelists:
        profile = getattr(user, "expert_profile", None)
        tradition = getattr(profile, "tradition", None) if profile else None
        counts[tradition.name if tradition else "no tradition recorded"] += 1
    for name, count in sorted(counts.items()):
        if count < METHODOLOGY_MIN_PANELISTS:
            warnings.append(f"Only {count} panelist{'s' if count != 1 else ''} from {name}: the methodology asks for "
                            f"at least {METHODOLOGY_MIN_PANELISTS} theologians per tradition (§4.3).")
    if n == 0:
        warnings.append("The study has no panelists.")
    return warnings


# --- the expert's form and feedback -----------------------------------------------------------------------


@dataclass
class Feedback:
    """The previous round's group result for one weight, as an expert may see it (no identities)."""

    round_number: int
    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    converged: bool
    own_previous: str | None  # the expert's own value in that round, or None if they did not answer
    histogram: SafeString
    rationales: list[str]


def own_allocations(*, round: DelphiRound, expert: Any) -> dict[str, DelphiAllocation]:
    """The expert's own allocations in a round, by weight key (one query)."""
    return {a.key: a for a in DelphiAllocation.objects.filter(response__round=round, response__expert=expert)}


def feedback_for(*, round: DelphiRound, expert: Any, structure: WeightStructure) -> dict[str, Feedback]:
    """Group statistics of a closed round per weight, the expert's own value and shuffled anonymous rationales."""
    weights = (round.summary or {}).get("weights", {})
    values: dict[str, list[Decimal]] = defaultdict(list)
    rationales: dict[str, list[str]] = defaultdict(list)
    own: dict[str, Decimal] = {}
    rows = DelphiAllocation.objects.filter(response__round=round).values_list(
        "key", "points", "rationale", "response__expert_id"
    ).order_by("key", "points")  # never by response or expert: the order must not reveal who answered what
    expert_id = getattr(expert, "pk", None)
    for key, points, rationale, owner in rows:
        values[key].append(points)
        if rationale:
            rationales[key].append(rationale)
        if owner == expert_id:
            own[key] = points
    result = {}
    for f in structure.fields:
        stats = weights.get(f.key)
        if not stats:
            continue
        texts = sorted(rationales.get(f.key, []))
        # Stable for this page (study, round, weight, viewer), different between weights and viewers.
        random.Random(f"delphi:{round.study_id}:{round.number}:{f.key}:{expert_id}").shuffle(texts)
        result[f.key] = Feedback(
            round_number=round.number, n=stats["n"], median=stats["median"], q1=stats["q1"], q3=stats["q3"],
            iqr=stats["iqr"], converged=stats["converged"],
            own_previous=points_str(own[f.key]) if f.key in own else None,
            histogram=histogram_svg(values.get(f.key, []), median=stats["median"], own=own.get(f.key), label=f.name),
            rationales=texts,
        )
    return result


@dataclass
class AllocationPrefill:
    """Where the allocation form starts: its initial values (by field name) and last round's feedback (by key)."""

    initial: dict[str, str]
    feedback: dict[str, Feedback]


def allocation_prefill(
    *, study: DelphiStudy, round: DelphiRound, expert: Any, structure: WeightStructure
) -> AllocationPrefill:
    """The expert's answer in this round, else their previous round's points; the previous round's feedback."""
    previous = study.rounds.filter(number=round.number - 1, status=DelphiRound.Status.CLOSED).first()
    feedback = feedback_for(round=previous, expert=expert, structure=structure) if previous else {}
    current = own_allocations(round=round, expert=expert)
    prefill = current or (own_allocations(round=previous, expert=expert) if previous else {})
    initial: dict[str, str] = {}
    for f in structure.fields:
        allocation = prefill.get(f.key)
        if allocation is not None:
            initial[f.field] = points_str(allocation.points)
            if current:  # rationales are the round's own; last round's are not carried over
                initial[f.rationale_field] = allocation.rationale
    return AllocationPrefill(initial=initial, feedback=feedback)


@dataclass(frozen=True)
class OwnRoundRow:
    """One weight of a round on the expert's study page: their own points, the group's median and IQR."""

    key: str
    name: str
    is_sub: bool
    own: str
    median: float | None  # None while the round is open
    iqr: float | None


@dataclass
class OwnRound:
    """A round as the expert sees it on the study page: its state, their answer, the group medians."""

    number: int
    is_open: bool
    answered: bool
    answered_at: Any
    converged: bool
    rows: list[OwnRoundRow]


def expert_rounds(*, study: DelphiStudy, expert: Any, structure: WeightStructure) -> list[OwnRound]:
    """Every round of the study with the expert's own values and (closed rounds) the group median and IQR."""
    responses = {r.round_id: r for r in DelphiResponse.objects.filter(round__study=study, expert=expert)}
    mine: dict[int, dict[str, Decimal]] = defaultdict(dict)
    for round_id, key, points in DelphiAllocation.objects.filter(
        response__round__study=study, response__expert=expert
    ).values_list("response__round_id", "key", "points"):
        mine[round_id][key] = points
    result = []
    for r in study.rounds.order_by("number"):
        weights = (r.summary or {}).get("weights", {})
        rows = [
            OwnRoundRow(key=f.key, name=f.name, is_sub="." in f.key, own=points_str(mine[r.pk].get(f.key)),
                        median=weights.get(f.key, {}).get("median"), iqr=weights.get(f.key, {}).get("iqr"))
            for f in structure.fields
        ]
        response = responses.get(r.pk)
        result.append(OwnRound(number=r.number, is_open=r.is_open, answered=response is not None,
                               answered_at=response.updated_at if response else None, converged=r.converged, rows=rows))
    return result


# --- admin views ------------------------------------------------------------------------------------------


@dataclass
class PanelistStatus:
    name: str
    email: str
    tradition: str
    answered: bool
    answered_at: Any
    rounds_answered: int


def panelist_status(*, study: DelphiStudy, round: DelphiRound | None) -> list[PanelistStatus]:
    """Admins only: every panelist, whether they answered the given round, and in how many rounds overall."""
    answered = {}
    if round is not None:
        answered = dict(DelphiResponse.objects.filter(round=round).values_list("expert_id", "updated_at"))
    panelists = study.panelists.select_related("expert_profile__tradition").annotate(
        n_rounds=Count("delphi_responses", filter=Q(delphi_responses__round__study=study))
    ).order_by("display_name", "email")
    result = []
    for user in panelists:
        profile = getattr(user, "expert_profile", None)
        tradition = profile.tradition.name if profile and profile.tradition else "—"
        result.append(PanelistStatus(name=user.display_name or user.email, email=user.email, tradition=tradition,
                                     answered=user.pk in answered, answered_at=answered.get(user.pk),
                                     rounds_answered=user.n_rounds))
    return result


@dataclass
class SummaryRow:
    key: str
    name: str
    is_sub: bool
    stats: WeightStats


def round_rows(*, round: DelphiRound, structure: WeightStructure) -> list[SummaryRow]:
    """The stored statistics of a closed round in the rubric's order."""
    weights = (round.summary or {}).get("weights", {})
    return [SummaryRow(f.key, f.name, "." in f.key, weights[f.key]) for f in structure.fields if f.key in weights]


@dataclass
class ClosedRound:
    """A closed round on the staff's study page: the round and its statistics in the rubric's order."""

    round: DelphiRound
    rows: list[SummaryRow]


def rounds_closed(*, study: DelphiStudy, structure: WeightStructure) -> list[ClosedRound]:
    """Every closed round of the study, by number, with its stored statistics."""
    return [ClosedRound(round=r, rows=round_rows(round=r, structure=structure))
            for r in study.rounds.order_by("number") if not r.is_open]


@dataclass(frozen=True)
class ProposalRow:
    """One weight of a proposed level with its readable name and its rounding adjustment (if any)."""

    key: str
    name: str
    median: float
    weight: str
    current: str
    adjusted: str | None


@dataclass(frozen=True)
class ProposalLevelView:
    """One level of the stored proposal as the staff's study page shows it."""

    level: str
    label: str
    raw_sum: str
    scale: str
    adjusted: dict[str, str]
    rows: list[ProposalRow]


def proposal_levels(*, proposal: Proposal, structure: WeightStructure) -> list[ProposalLevelView]:
    """A closed study's stored proposal with readable names, in the rubric's order."""
    names = {d.key: d.name for d in structure.dimensions}
    names.update({s.key.split(".", 1)[1]: s.name for d in structure.dimensions for s in structure.subs[d.key]})
    return [
        ProposalLevelView(
            level=level["level"], label=level["label"], raw_sum=level["raw_sum"], scale=level["scale"],
            adjusted=level["adjusted"],
            rows=[ProposalRow(key=row["key"], name=names.get(row["key"], row["key"]), median=row["median"],
                              weight=row["weight"], current=row["current"], adjusted=level["adjusted"].get(row["key"]))
                  for row in level["weights"]],
        )
        for level in proposal["levels"]
    ]


def named_allocations(*, round: DelphiRound, structure: WeightStructure) -> list[NamedAllocation]:
    """Admins only: every panelist's allocation in a round, by name (for audit and the JSON report)."""
    result: list[NamedAllocation] = []
    responses = DelphiResponse.objects.filter(round=round).select_related("expert").prefetch_related("allocations")
    for response in responses.order_by("expert__email"):
        points = {a.key: a for a in response.allocations.all()}
        result.append({
            "expert": response.expert.display_name or response.expert.email, "email": response.expert.email,
            "submitted_at": response.updated_at.isoformat(),
            "points": {f.key: points_str(points[f.key].points) for f in structure.fields if f.key in points},
            "rationales": {k: a.rationale for k, a in points.items() if a.rationale},
        })
    return result


@dataclass
class StudyListRow:
    pk: int
    name: str
    tradition: str
    rubric: str
    status: str
    status_label: str
    open_round: int | None
    rounds_closed: int
    panelists: int | None  # staff only
    answered_open_round: bool | None  # panelists only


def study_list(*, user: Any) -> list[StudyListRow]:
    """The studies the user may see, with the open round and (for a panelist) whether they answered it."""
    admin = allowed(user, Action.RUN_DELPHI)
    studies = list(studies_visible_to(user).annotate(
        n_panelists=Count("panelists", distinct=True),
        n_closed=Count("rounds", filter=Q(rounds__status=DelphiRound.Status.CLOSED), distinct=True),
    ))
    open_rounds = dict(DelphiRound.objects.open().filter(study__in=studies).values_list("study_id", "number"))
    answered: set[int] = set()
    if not admin:
        answered = set(DelphiResponse.objects.filter(
            round__status=DelphiRound.Status.OPEN, round__study__in=studies, expert=user,
        ).values_list("round__study_id", flat=True))
    return [
        StudyListRow(
            pk=s.pk, name=s.name, tradition=s.tradition.name if s.tradition else "Across traditions",
            rubric=s.rubric.version, status=s.status, status_label=s.get_status_display(),
            open_round=open_rounds.get(s.pk), rounds_closed=s.n_closed,
            panelists=s.n_panelists if admin else None,
            answered_open_round=None if admin else s.pk in answered,
        )
        for s in studies
    ]


def study_name_taken(*, name: str) -> bool:
    """Whether a Delphi study already has this name."""
    return DelphiStudy.objects.filter(name=name).exists()
