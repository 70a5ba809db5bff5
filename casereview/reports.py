"""Where the programme's frozen results are stored and read: case-review agreement reports and IRT difficulty fits,
both `evidence.Snapshot`s — a report of kind case_review (subject: the review cycle's id, versioned per cycle), a
fit of kind irt_fit (subject "DIMENSION/rotation", versioned per dimension and rotation). Nothing else in
`casereview` touches the snapshot model for them, so their storage can change here alone. A stored fit is never
edited: equating one stores a new version. Both record the software that computed them, as every snapshot does
(`evidence.services.snapshot_record`); their kinds are registered by CaseReviewConfig.ready."""
from __future__ import annotations

from typing import Any

from django.urls import reverse

from evidence.models import Snapshot, SnapshotQuerySet
from evidence.registry import KindSpec
from evidence.services import snapshot_record

from .checks import irt_fit_check, review_report_check
from .models import CaseReviewCycle

__all__ = ["difficulty_fit_find", "difficulty_fit_get", "difficulty_fit_store", "difficulty_fits",
           "difficulty_fits_exist", "difficulty_fits_list", "review_report_latest", "review_report_store"]


def _user(user: Any) -> Any:
    return user if getattr(user, "pk", None) else None


def review_report_store(*, cycle: CaseReviewCycle, payload: Any, input_hash: str, seed: int,
                        user: Any = None) -> Snapshot:
    """Store the next version of a cycle's agreement report (call with the cycle locked)."""
    return snapshot_record(kind=Snapshot.Kind.CASE_REVIEW, subject=str(cycle.pk), payload=payload,
                           input_hash=input_hash, seed=seed, requested_by=_user(user))


def review_report_latest(cycle: CaseReviewCycle) -> Snapshot | None:
    """The newest stored agreement report of a cycle."""
    return Snapshot.objects.of(Snapshot.Kind.CASE_REVIEW, cycle.pk).order_by("-version").first()


def difficulty_fits() -> SnapshotQuerySet:
    """Every stored IRT fit, newest first."""
    return Snapshot.objects.of(Snapshot.Kind.IRT_FIT).order_by("-requested_at", "-id")


def difficulty_fit_store(*, dimension: str, rotation: str, items: int, persons: int, payload: Any,
                         user: Any = None, equated_to: Snapshot | None = None) -> Snapshot:
    """Store an IRT fit: the next version of its dimension and rotation, with what its list shows."""
    return snapshot_record(
        kind=Snapshot.Kind.IRT_FIT, subject=f"{dimension}/{rotation}", payload=payload, requested_by=_user(user),
        summary={"dimension": dimension, "rotation": rotation, "items": items, "persons": persons,
                 "equated_to": equated_to.pk if equated_to is not None else None})


def difficulty_fits_list(limit: int = 50) -> list[Snapshot]:
    """The newest fits, without their payloads."""
    return list(difficulty_fits().defer("payload")[:limit])


def difficulty_fits_exist() -> bool:
    return difficulty_fits().exists()


def difficulty_fit_get(pk: int) -> Snapshot:
    return difficulty_fits().get(pk=pk)


def difficulty_fit_find(pk: int) -> Snapshot | None:
    return difficulty_fits().filter(pk=pk).first()


CASE_REVIEW_KIND = KindSpec(kind=Snapshot.Kind.CASE_REVIEW,
                            page_url=lambda s: reverse("review:cycle", kwargs={"pk": int(s.subject)}),
                            check=review_report_check)
IRT_FIT_KIND = KindSpec(kind=Snapshot.Kind.IRT_FIT, page_url=lambda s: f"{reverse('review:difficulty')}?fit={s.pk}",
                        check=irt_fit_check)
