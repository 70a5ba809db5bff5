"""The personal-data sections of the apps above `accounts` (`accounts.privacy` keeps the registry): what a person's
own data export contains from each, and what pseudonymisation erases there.

Registered from `OperationsConfig.ready` because `config` may import every app and `accounts` may import none of
them. The export holds the person's own work only — never an evaluated model's name, a judge's score or another
person's identity, which blind scoring keeps from them on every page too.
"""
from __future__ import annotations

from typing import Any

from accounts.models import User
from accounts.privacy import PSEUDONYM_DOMAIN, PersonalDataSection, personal_data_register
from annotations.models import AdjudicationDecision, Annotation, AnnotationEvent, Panel
from casereview.models import CaseReview, TheoBertAudit
from delphi.models import DelphiResponse
from evidence.models import Snapshot


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _panels(user: User) -> list[dict[str, Any]]:
    rows = Panel.objects.filter(members=user).select_related("tradition") | Panel.objects.filter(lead=user) \
        .select_related("tradition")
    return [{"id": panel.pk, "name": panel.name, "tradition": panel.tradition.key if panel.tradition else None,
             "member": panel.members.filter(pk=user.pk).exists(), "lead": panel.lead_id == user.pk}
            for panel in rows.distinct().order_by("pk")]


def _scores(user: User) -> list[dict[str, Any]]:
    annotations = (Annotation.objects.filter(assignment__expert=user)
                   .select_related("assignment", "assignment__panel").prefetch_related("scores")
                   .order_by("assignment_id"))
    return [{
        "item": annotation.assignment.public_id, "cycle_id": annotation.assignment.cycle_id,
        "panel": annotation.assignment.panel.name, "assignment_status": annotation.assignment.status,
        "status": annotation.status, "scores": {score.key: score.score for score in annotation.scores.all()},
        "rationale": annotation.rationale, "flagged_broken": annotation.flagged_broken,
        "broken_note": annotation.broken_note, "skip_reason": annotation.skip_reason,
        "seconds_spent": annotation.seconds_spent, "submitted_at": _iso(annotation.submitted_at),
        "created_at": _iso(annotation.created_at), "updated_at": _iso(annotation.updated_at),
    } for annotation in annotations]


def _scoring_events(user: User) -> list[dict[str, Any]]:
    return [{"item": event.annotation.assignment.public_id, "kind": event.kind, "at": _iso(event.at),
             "changes": event.changes, "note": event.note}
            for event in AnnotationEvent.objects.filter(actor=user).select_related("annotation__assignment")
            .order_by("at", "id")]


def _decisions(user: User) -> list[dict[str, Any]]:
    return [{"item_id": decision.item_id, "reason": decision.reason, "note": decision.note,
             "is_current": decision.is_current, "created_at": _iso(decision.created_at),
             "scores": {score.key: score.score for score in decision.scores.all()}}
            for decision in AdjudicationDecision.objects.filter(adjudicator=user).prefetch_related("scores")
            .order_by("created_at", "id")]


def _reviews(user: User) -> dict[str, list[dict[str, Any]]]:
    reviews = [{"review": review.public_id, "test_case_id": review.test_case_id, "case_version": review.case_version,
                "valid": review.valid, "reference_correct": review.reference_correct,
                "difficulty": review.difficulty, "clarity": review.clarity, "comment": review.comment,
                "submitted_at": _iso(review.submitted_at)}
               for review in CaseReview.objects.filter(expert=user).order_by("id")]
    audits = [{"audit": audit.public_id, "case_sound": audit.case_sound, "verdict_right": audit.verdict_right,
               "comment": audit.comment, "submitted_at": _iso(audit.submitted_at)}
              for audit in TheoBertAudit.objects.filter(expert=user).order_by("id")]
    return {"case_reviews": reviews, "theobert_audits": audits}


def _delphi(user: User) -> list[dict[str, Any]]:
    return [{"round_id": response.round_id, "submitted_at": _iso(response.submitted_at),
             "updated_at": _iso(response.updated_at),
             "allocations": [{"key": a.key, "points": str(a.points), "rationale": a.rationale}
                             for a in response.allocations.all()]}
            for response in DelphiResponse.objects.filter(expert=user).prefetch_related("allocations").order_by("id")]


def _rater_keys_erase(user: User, pseudonym: str) -> None:
    """Stored reports keep a key from rater code to e-mail for admins (never in their files or hashes): the
    person's address there becomes their pseudonymous one, so the key still tells the codes apart."""
    address = f"{pseudonym}@{PSEUDONYM_DOMAIN}"
    for snapshot in Snapshot.objects.filter(rater_key__isnull=False).exclude(rater_key={}).only("pk", "rater_key"):
        key = snapshot.rater_key or {}
        if user.email in key.values():
            Snapshot.objects.filter(pk=snapshot.pk).update(
                rater_key={code: (address if value == user.email else value) for code, value in key.items()})


def personal_data_sections_register() -> None:
    """Register the sections of annotations, calibration's adjudication, case review, Delphi and evidence."""
    for section in (
        PersonalDataSection("panels", _panels),
        PersonalDataSection("scores", _scores),
        PersonalDataSection("scoring_history", _scoring_events),
        PersonalDataSection("adjudication_decisions", _decisions),
        PersonalDataSection("case_review", _reviews),
        PersonalDataSection("delphi", _delphi),
        PersonalDataSection("report_rater_keys", lambda user: [], _rater_keys_erase),
    ):
        personal_data_register(section)
