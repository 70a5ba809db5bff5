"""Writes for Delphi studies: create, submit an allocation, close a round, close the study, approve.

Statistics come from `stats.delphi` (round_summary, renormalise, kendall_tau, weight_sensitivity); this
module only gathers the allocations, calls them and stores the results.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Notification
from accounts.notifications import notify
from annotations.models import Panel
from evaluations.methodology import DimensionSpec, SubDimensionSpec
from evaluations.models import RubricVersion, Tradition
from evaluations.selectors import rubric_weights
from evaluations.services import rubric_version_create
from stats.delphi import RoundSummary, WeightSummary, renormalise, round_summary

from .allocation import AllocationInput, allocation_errors
from .models import DelphiAllocation, DelphiResponse, DelphiRound, DelphiStudy
from .rescoring import rescoring_report
from .schema import Empty, Proposal, ProposalLevel, Rescoring, RoundSummaryJSON, WeightStats
from .selectors import DIMENSION_GROUP, study_warnings, weight_structure


@dataclass
class StudyCreateResult:
    study: DelphiStudy
    warnings: list[str]


@transaction.atomic
def delphi_study_create(
    *, name: str, rubric: RubricVersion, tradition: Tradition | None = None, panel: Panel | None = None,
    panelists: Iterable[Any] = (), planned_rounds: int = 3, convergence_threshold: Decimal = Decimal("10"),
    created_by: Any = None,
) -> StudyCreateResult:
    """Create a study with its panelists (a panel's members and/or explicit users) and open round 1.

    Warns (never blocks) below the methodology's 5 theologians per tradition.
    """
    if panel is not None and tradition is None:
        tradition = panel.tradition
    if panel is not None and panel.tradition_id and tradition is not None and panel.tradition_id != tradition.pk:
        raise ValidationError(gettext("The panel %(panel)s belongs to another tradition than %(tradition)s.")
                              % {"panel": panel, "tradition": tradition}, code="tradition")
    if DelphiStudy.objects.filter(name=name).exists():
        raise ValidationError(gettext("A Delphi study with this name exists."), code="name_taken")
    if not 1 <= planned_rounds <= 10:
        raise ValidationError(gettext("Plan between 1 and 10 rounds."), code="planned_rounds")
    if not Decimal("0") < Decimal(convergence_threshold) <= Decimal("100"):
        raise ValidationError(gettext("The convergence threshold must be above 0 and at most 100 points."),
                              code="threshold")
    people = {u.pk: u for u in panelists}
    if panel is not None:
        people.update({u.pk: u for u in panel.members.filter(is_active=True)})
    if not people:
        raise ValidationError(gettext("Choose a panel with members or at least one panelist."), code="no_panelists")
    study = DelphiStudy.objects.create(
        name=name, rubric=rubric, tradition=tradition, panel=panel, planned_rounds=planned_rounds,
        convergence_threshold=Decimal(convergence_threshold), created_by=created_by,
    )
    study.panelists.set(list(people.values()))
    _notify_round_open(DelphiRound.objects.create(study=study, number=1))
    return StudyCreateResult(study=study, warnings=study_warnings(study=study))


def _notify_round_open(round: DelphiRound) -> None:
    study = round.study
    notify(users=study.panelists.filter(is_active=True), kind=Notification.Kind.DELPHI_OPEN,
           text=f"Round {round.number} of the Delphi study “{study.name}” is open: your weights are asked for.",
           link=reverse("delphi:respond", kwargs={"pk": study.pk}), key=f"delphi_round:{round.pk}")


def delphi_round_reminders_send(*, older_than: timedelta, now: datetime | None = None) -> int:
    """Remind panelists who have not answered a round open for longer than `older_than` (once per round)."""
    now = now or timezone.now()
    sent = 0
    for round in DelphiRound.objects.open().filter(opened_at__lte=now - older_than).select_related("study"):
        answered = DelphiResponse.objects.filter(round=round).values("expert_id")
        waiting = round.study.panelists.filter(is_active=True).exclude(pk__in=answered)
        sent += len(notify(users=waiting, kind=Notification.Kind.DELPHI_REMINDER,
                           text=f"Round {round.number} of the Delphi study “{round.study.name}” still waits for "
                                f"your answer.",
                           link=reverse("delphi:respond", kwargs={"pk": round.study_id}),
                           key=f"delphi_reminder:{round.pk}", once=True))
    return sent


def _locked_round(round: DelphiRound) -> DelphiRound:
    return DelphiRound.objects.select_for_update().select_related("study").get(pk=round.pk)


@transaction.atomic
def delphi_response_submit(*, round: DelphiRound, expert: Any, allocation: AllocationInput) -> DelphiResponse:
    """Store (or replace, while the round is open) an expert's allocation; every rule is checked here."""
    locked = _locked_round(round)  # a submission cannot slip in while the round is being closed
    study = locked.study
    if not study.panelists.filter(pk=expert.pk).exists():
        raise ValidationError(gettext("You are not a panelist of this study."), code="not_panelist")
    if not locked.is_open:
        raise ValidationError(gettext("Round %(number)s is closed; answers can no longer be changed.")
                              % {"number": locked.number}, code="closed")
    structure = weight_structure(rubric=study.rubric)
    errors = allocation_errors(allocation.points, structure.groups)
    unknown = set(allocation.rationales) - set(structure.names)
    if unknown:
        errors.setdefault("__all__", []).append(f"Rationale for unknown weight(s): {', '.join(sorted(unknown))}.")
    if errors:
        raise ValidationError(errors, code="invalid_allocation")
    response, created = DelphiResponse.objects.get_or_create(round=locked, expert=expert)
    if not created:
        response.allocations.all().delete()
        response.save(update_fields=["updated_at"])
    DelphiAllocation.objects.bulk_create(
        DelphiAllocation(response=response, key=key, points=allocation.points[key],
                         rationale=allocation.rationales.get(key, ""))
        for key in (f.key for f in structure.fields)
    )
    return response


def summary_from_json(data: RoundSummaryJSON | Empty) -> RoundSummary | None:
    """Rebuild a stored round summary (for the next round's stability figures)."""
    if not data or "weights" not in data:
        return None
    return RoundSummary(
        weights={k: WeightSummary(**v) for k, v in data["weights"].items()},
        invited=data["invited"], responded=data["responded"], converged=data["converged"],
        not_converged=list(data.get("not_converged", [])),
    )


def weight_stats(summary: WeightSummary) -> WeightStats:
    """One weight's statistics as stored (the fields of `WeightSummary`, in their order)."""
    return WeightStats(
        n=summary.n, median=summary.median, q1=summary.q1, q3=summary.q3, iqr=summary.iqr, mean=summary.mean,
        share_within_5=summary.share_within_5, converged=summary.converged, median_change=summary.median_change,
        iqr_change=summary.iqr_change,
    )


def summary_to_json(summary: RoundSummary, *, threshold: Decimal) -> RoundSummaryJSON:
    """A closed round's statistics as stored on the round."""
    return {
        "threshold": float(threshold),
        "invited": summary.invited,
        "responded": summary.responded,
        "non_responders": summary.invited - summary.responded,
        "attrition": round(summary.attrition, 6),
        "converged": summary.converged,
        "not_converged": summary.not_converged,
        "weights": {k: weight_stats(v) for k, v in summary.weights.items()},
    }


@dataclass
class RoundCloseResult:
    round: DelphiRound
    converged: list[str]
    not_converged: list[str]
    non_responders: int
    next_round: DelphiRound | None
    study_finished: bool
    messages: list[str] = field(default_factory=list)


@transaction.atomic
def delphi_round_close(*, round: DelphiRound, actor: Any = None) -> RoundCloseResult:
    """Close a round: per-weight statistics (stats.delphi.round_summary), attrition, convergence; open the next one."""
    locked = _locked_round(round)
    study = locked.study
    if not locked.is_open:
        raise ValidationError(gettext("Round %(number)s is already closed.") % {"number": locked.number}, code="closed")
    structure = weight_structure(rubric=study.rubric)
    keys = [f.key for f in structure.fields]
    allocations: dict[int, dict[str, float]] = {}
    for response_id, key, points in DelphiAllocation.objects.filter(response__round=locked).values_list(
        "response_id", "key", "points"
    ):
        allocations.setdefault(response_id, {})[key] = float(points)  # statistics are numpy floats; inputs are Decimal
    if not allocations:
        raise ValidationError(gettext("Nobody has answered round %(number)s yet; there is nothing to summarise.")
                              % {"number": locked.number},
                              code="no_responses")
    previous_round = study.rounds.filter(number=locked.number - 1).first()
    previous = summary_from_json(previous_round.summary) if previous_round else None
    invited = study.panelists.count()
    summary = round_summary(
        [{k: a[k] for k in keys if k in a} for a in allocations.values()],
        invited=max(invited, len(allocations)), previous=previous, threshold=float(study.convergence_threshold),
    )
    locked.summary = summary_to_json(summary, threshold=study.convergence_threshold)
    locked.status = DelphiRound.Status.CLOSED
    locked.closed_at = timezone.now()
    locked.closed_by = actor
    locked.invited = summary.invited
    locked.responded = summary.responded
    locked.converged = summary.converged
    locked.save()

    converged = [k for k in keys if k in summary.weights and summary.weights[k].converged]
    not_converged = [k for k in keys if k in summary.weights and not summary.weights[k].converged]
    names = structure.names
    messages = [f"Round {locked.number} closed: {summary.responded} of {summary.invited} panelists answered"
                f" ({summary.invited - summary.responded} did not; attrition {summary.attrition:.0%})."]
    if summary.converged:
        messages.append(f"Every weight converged (IQR < {float(study.convergence_threshold):g} points).")
    else:
        messages.append(f"{len(converged)} of {len(keys)} weights converged; not yet: "
                        + ", ".join(names[k] for k in not_converged) + ".")
    next_round = None
    if summary.converged or locked.number >= study.planned_rounds:
        study.status = DelphiStudy.Status.ROUNDS_DONE
        study.converged = summary.converged
        study.save(update_fields=["status", "converged"])
        messages.append("The study converged: close it to propose the new weights." if summary.converged else
                        f"All {study.planned_rounds} planned rounds are done without full convergence: close the "
                        f"study to propose weights from round {locked.number}'s medians.")
    else:
        next_round = DelphiRound.objects.create(study=study, number=locked.number + 1)
        _notify_round_open(next_round)
        messages.append(f"Round {next_round.number} is open.")
    return RoundCloseResult(round=locked, converged=converged, not_converged=not_converged,
                            non_responders=summary.invited - summary.responded, next_round=next_round,
                            study_finished=next_round is None, messages=messages)


def _level(name: str, label: str, medians: dict[str, float], current: dict[str, Decimal]) -> ProposalLevel:
    try:
        result = renormalise(medians)
    except ValueError as exc:
        raise ValidationError(f"{label}: {exc}", code="renormalise") from exc
    return {
        "level": name,
        "label": label,
        "raw_sum": str(result.raw_sum),
        "scale": str(result.scale.quantize(Decimal("0.000001"))),
        "adjusted": {k: str(v) for k, v in result.adjusted.items()},
        # A list, not an object: PostgreSQL's jsonb does not keep the order of object keys.
        "weights": [{"key": k, "median": medians[k], "weight": str(result.weights[k]), "current": str(current[k])}
                    for k in medians],
    }


def proposal_compute(*, study: DelphiStudy, round: DelphiRound) -> Proposal:
    """New weights from a closed round's medians, renormalised to 100 at each level (stats.delphi.renormalise)."""
    structure = weight_structure(rubric=study.rubric)
    weights = round.summary["weights"]
    levels = [_level(DIMENSION_GROUP, "Dimensions", {d.key: weights[d.key]["median"] for d in structure.dimensions},
                     {d.key: d.current for d in structure.dimensions})]
    for d in structure.dimensions:
        subs = structure.subs[d.key]
        levels.append(_level(d.key, d.name, {s.key.split(".", 1)[1]: weights[s.key]["median"] for s in subs},
                             {s.key.split(".", 1)[1]: s.current for s in subs}))
    return {"round": round.number, "converged": round.converged, "levels": levels}


@transaction.atomic
def delphi_study_close(*, study: DelphiStudy, actor: Any = None) -> DelphiStudy:
    """Stop the rounds and propose weights from the last closed round's medians (renormalised, recorded)."""
    study = DelphiStudy.objects.select_for_update().get(pk=study.pk)
    if study.status in (DelphiStudy.Status.PROPOSED, DelphiStudy.Status.APPROVED):
        raise ValidationError(gettext("The study is already closed."), code="closed")
    open_round = study.rounds.open().first()
    if open_round is not None:
        if open_round.responses.exists():
            raise ValidationError(gettext("Round %(number)s has answers: close the round first.")
                                  % {"number": open_round.number}, code="round_open")
        open_round.delete()  # an untouched round is dropped, so the study can stop early
    last = study.rounds.closed().order_by("-number").first()
    if last is None:
        raise ValidationError(gettext("No round has been closed yet; there are no medians to propose."), code="no_round")
    proposal = proposal_compute(study=study, round=last)
    proposal["stopped_early"] = not last.converged and last.number < study.planned_rounds
    study.proposal = proposal
    study.converged = last.converged
    study.status = DelphiStudy.Status.PROPOSED
    study.closed_at = timezone.now()
    study.closed_by = actor
    study.save()
    return study


def proposal_weights(proposal: Proposal) -> tuple[dict[str, Decimal], dict[str, dict[str, Decimal]]]:
    """({dimension: weight}, {dimension: {sub-dimension: weight}}) of a stored proposal."""
    levels = {level["level"]: level for level in proposal["levels"]}
    dimensions = {row["key"]: Decimal(row["weight"]) for row in levels[DIMENSION_GROUP]["weights"]}
    subs = {d: {row["key"]: Decimal(row["weight"]) for row in levels[d]["weights"]} for d in dimensions}
    return dimensions, subs


def proposal_rescoring(*, study: DelphiStudy) -> Rescoring:
    """Re-score the judge's stored scores under the proposal (old: the study's rubric) — a preview or the record."""
    old = rubric_weights(rubric=study.rubric)
    new_dimensions, new_subs = proposal_weights(study.proposal)
    return rescoring_report(
        old_dimension_weights={k: v[0] for k, v in old.items()}, old_sub_weights={k: v[1] for k, v in old.items()},
        new_dimension_weights=new_dimensions, new_sub_weights=new_subs,
    )


def default_version(study: DelphiStudy) -> str:
    base = f"{study.rubric.version}-delphi{study.pk}"[:20]
    candidate, n = base, 1
    while RubricVersion.objects.filter(version=candidate).exists():
        n += 1
        suffix = f".{n}"
        candidate = base[: 20 - len(suffix)] + suffix
    return candidate


@transaction.atomic
def delphi_proposal_approve(*, study: DelphiStudy, actor: Any = None, version: str = "") -> DelphiStudy:
    """Create the proposed rubric version (draft, based on the study's rubric) and store the re-scoring report."""
    study = DelphiStudy.objects.select_for_update().select_related("rubric").get(pk=study.pk)
    if study.status != DelphiStudy.Status.PROPOSED:
        raise ValidationError(gettext("Only a closed study with a proposal can be approved."), code="not_proposed")
    version = (version or "").strip() or default_version(study)
    if len(version) > 20:
        raise ValidationError(gettext("A version name has at most 20 characters."), code="version_length")
    if RubricVersion.objects.filter(version=version).exists():
        raise ValidationError(gettext("Rubric version %(version)s exists already.") % {"version": version},
                              code="version_taken")
    structure = weight_structure(rubric=study.rubric)
    dimensions, subs = proposal_weights(study.proposal)
    specs = tuple(
        DimensionSpec(d.key, d.name, dimensions[d.key], d.description, tuple(
            SubDimensionSpec(s.key.split(".", 1)[1], s.name, subs[d.key][s.key.split(".", 1)[1]], s.description)
            for s in structure.subs[d.key]
        ))
        for d in structure.dimensions
    )
    rubric = rubric_version_create(
        version=version, dimensions=specs, status=RubricVersion.Status.DRAFT, based_on=study.rubric,
        notes=f"Proposed by the Delphi study “{study.name}” from round {study.proposal['round']}'s medians, "
              f"renormalised to 100 at each level.",
    )
    study.proposed_rubric = rubric
    study.status = DelphiStudy.Status.APPROVED
    study.approved_at = timezone.now()
    study.approved_by = actor
    study.rescoring = proposal_rescoring(study=study)
    study.save()
    return study


def delphi_rescoring_refresh(*, study: DelphiStudy) -> DelphiStudy:
    """Recompute the stored re-scoring report (e.g. after a judge run finished)."""
    if study.status != DelphiStudy.Status.APPROVED:
        raise ValidationError(gettext("Only an approved study has a stored re-scoring report."), code="not_approved")
    study.rescoring = proposal_rescoring(study=study)
    study.save(update_fields=["rescoring"])
    return study

