"""Test-case review: opening a cycle, blind reviews, the flags they raise, and resolving a flag by revising
(versioned) or retiring the case. Every write is a keyword-only, atomic service; the reads for pages follow.

Flag rules (a case is judged once all its reviews are in):
- `majority_invalid`: more than half the reviewers answer "no" to "valid test of its dimension";
- `reference_wrong`: more than half answer "no" to "reference answer correct for this tradition";
- `low_agreement`: no answer to either question has a majority, or the difficulty ratings span three or more
  of the four levels apart (easy vs hard/expert, medium vs expert) — i.e. their range is ≥ 2 levels.
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotations.models import CaseFlag, CaseReview, CaseReviewCycle, Panel
from evaluations.domain import Difficulty
from evaluations.models import TestCase, TestCaseRevision
from stats.apportion import largest_remainder

DIFFICULTY_ORDER = list(Difficulty)  # declared easy → expert
DIFFICULTY_RANK: dict[str, int] = {str(value): index for index, value in enumerate(DIFFICULTY_ORDER)}
MIN_REVIEWERS = 3


class ReviewError(ValidationError):
    """A review action that breaks a rule; the message says which."""


# --- opening a cycle ---------------------------------------------------------------------------------------


def review_cases_eligible(panel: Panel) -> QuerySet[TestCase]:
    """The active cases a panel reviews: those of its tradition (a neutral panel: the tradition-neutral cases)."""
    cases = TestCase.objects.active()
    return cases.filter(tradition=panel.tradition) if panel.tradition_id else cases.filter(tradition__isnull=True)


def stratified_sample(cases: Sequence[TestCase], size: int, seed: int) -> list[TestCase]:
    """`size` cases spread over dimension × difficulty strata in proportion to their sizes (largest remainders,
    `stats.apportion.largest_remainder`: equal remainders are a seeded draw), each stratum's draw seeded; the whole
    list when size ≥ len(cases)."""
    if size >= len(cases):
        return list(cases)
    strata: dict[tuple[str, str], list[TestCase]] = defaultdict(list)
    for case in sorted(cases, key=lambda c: c.external_id):
        strata[(case.dimension, case.difficulty)].append(case)
    # ties get their own stream, so the cases drawn inside the strata stay those of the seed whenever no tie decides
    counts = largest_remainder({key: len(members) for key, members in strata.items()}, size,
                               random.Random(f"apportion:{seed}"))
    rng = random.Random(seed)
    chosen: list[TestCase] = []
    for key in sorted(strata):
        chosen.extend(rng.sample(strata[key], counts[key]))
    return sorted(chosen, key=lambda c: c.external_id)


@transaction.atomic
def review_cycle_open(*, panel: Panel, name: str, user: Any, reviewers: int = MIN_REVIEWERS,
                      sample_size: int | None = None, seed: int = 0) -> CaseReviewCycle:
    """Open a review cycle over all (or a stratified sample of) the panel's cases; each case goes to `reviewers`
    distinct panel members, the load spread evenly (a seeded shuffle breaks ties)."""
    if reviewers < MIN_REVIEWERS:
        raise ReviewError(f"each case needs at least {MIN_REVIEWERS} reviewers")
    members = list(panel.members.filter(is_active=True).order_by("pk"))
    if len(members) < reviewers:
        raise ReviewError(f"panel {panel.name} has {len(members)} active members; {reviewers} reviewers per case "
                          "need at least that many")
    eligible = list(review_cases_eligible(panel).order_by("external_id"))
    if not eligible:
        raise ReviewError(f"panel {panel.name} has no active cases to review")
    if sample_size is not None and sample_size < 1:
        raise ReviewError("the sample size must be at least 1")
    cases = stratified_sample(eligible, sample_size, seed) if sample_size else eligible
    cycle = CaseReviewCycle.objects.create(
        name=name.strip() or f"Case review of {panel.name}", panel=panel, reviewers_per_case=reviewers,
        created_by=user if getattr(user, "pk", None) else None,
        sample={"mode": "stratified" if sample_size and sample_size < len(eligible) else "all",
                "size": len(cases), "of": len(eligible), "seed": seed, "strata": ["dimension", "difficulty"]},
    )
    rng = random.Random(seed)
    load = {member.pk: 0 for member in members}
    rows = []
    for case in cases:
        order = sorted(members, key=lambda m: (load[m.pk], rng.random()))
        for member in order[:reviewers]:
            load[member.pk] += 1
            rows.append(CaseReview(cycle=cycle, test_case=case, case_version=case.version, expert=member))
    CaseReview.objects.bulk_create(rows)
    return cycle


# --- an expert's review ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewAnswers:
    valid: str
    reference_correct: str
    difficulty: str
    clarity: int
    comment: str = ""


def _check_answers(answers: ReviewAnswers) -> None:
    problems = {}
    if answers.valid not in CaseReview.Valid.values:
        problems["valid"] = "choose yes, no or unsure"
    if answers.reference_correct not in CaseReview.Reference.values:
        problems["reference_correct"] = "choose yes, partly or no"
    if answers.difficulty not in Difficulty.values:
        problems["difficulty"] = "choose easy, medium, hard or expert"
    if not isinstance(answers.clarity, int) or not 0 <= answers.clarity <= 3:
        problems["clarity"] = "a whole number from 0 to 3"
    if problems:
        raise ReviewError(problems)


@transaction.atomic
def case_review_submit(*, review: CaseReview, user: Any, answers: ReviewAnswers) -> CaseReview:
    """Submit the expert's own review (once: a submitted review is locked); judge the case when it was the last."""
    # Lock order: the cycle (a close waits for submissions in flight), then every review of this case in it, so
    # that the last two reviewers submitting at once are serialised and the second one sees the first's answers
    # when it judges the case (otherwise each would see the other's review unsubmitted and no flag be raised).
    CaseReviewCycle.objects.select_for_update().filter(pk=review.cycle_id).first()
    list(CaseReview.objects.select_for_update().filter(cycle_id=review.cycle_id, test_case_id=review.test_case_id)
         .order_by("pk").values_list("pk", flat=True))
    review = CaseReview.objects.select_related("cycle", "test_case").get(pk=review.pk)
    if review.expert_id != getattr(user, "pk", None):
        raise PermissionDenied
    if review.cycle.status != CaseReviewCycle.Status.OPEN:
        raise ReviewError("this review cycle is closed")
    if review.is_submitted:
        raise ReviewError("this review was already submitted")
    _check_answers(answers)
    review.valid, review.reference_correct = answers.valid, answers.reference_correct
    review.difficulty, review.clarity, review.comment = answers.difficulty, answers.clarity, answers.comment.strip()
    review.submitted_at = timezone.now()
    review.save()
    case_judge(cycle=review.cycle, test_case=review.test_case)
    return review


def flag_reasons(reviews: Sequence[CaseReview]) -> list[str]:
    """The flag rules of the module docstring applied to one case's submitted reviews."""
    n = len(reviews)
    reasons = []
    valid = Counter(r.valid for r in reviews)
    reference = Counter(r.reference_correct for r in reviews)
    if valid["no"] * 2 > n:
        reasons.append("majority_invalid")
    if reference["no"] * 2 > n:
        reasons.append("reference_wrong")
    no_majority = valid.most_common(1)[0][1] * 2 <= n or reference.most_common(1)[0][1] * 2 <= n
    ranks = [DIFFICULTY_RANK[r.difficulty] for r in reviews if r.difficulty in DIFFICULTY_RANK]
    spread = bool(ranks) and max(ranks) - min(ranks) >= 2
    if no_majority or spread:
        reasons.append("low_agreement")
    return reasons


REASON_TEXT = {
    "majority_invalid": "most reviewers say it is not a valid test of its dimension",
    "reference_wrong": "most reviewers say the reference answer is wrong for this tradition",
    "low_agreement": "the reviewers disagree (no majority, or difficulty ratings two or more levels apart)",
}


def flag_reason_texts(flag: CaseFlag) -> list[str]:
    return [REASON_TEXT[reason] for reason in flag.reasons]


def case_judge(*, cycle: CaseReviewCycle, test_case: TestCase) -> CaseFlag | None:
    """Once every review of the case in this cycle is in, raise a flag if the rules say so (idempotent)."""
    reviews = list(CaseReview.objects.filter(cycle=cycle, test_case=test_case))
    if not reviews or any(not r.is_submitted for r in reviews):
        return None
    reasons = flag_reasons(reviews)
    if not reasons:
        return None
    flag, _ = CaseFlag.objects.get_or_create(
        cycle=cycle, test_case=test_case,
        defaults={"case_version": reviews[0].case_version, "reasons": reasons},
    )
    return flag


# --- resolving a flag --------------------------------------------------------------------------------------


def _snapshot(case: TestCase, *, reason: str = "", user: Any = None) -> TestCaseRevision:
    revision, _ = TestCaseRevision.objects.get_or_create(
        test_case=case, version=case.version,
        defaults={"prompt": case.prompt, "reference_answer": case.reference_answer, "difficulty": case.difficulty,
                  "reason": reason, "changed_by": user if getattr(user, "pk", None) else None},
    )
    return revision


@transaction.atomic
def case_flag_resolve(*, flag: CaseFlag, user: Any, action: str, note: str = "", prompt: str | None = None,
                      reference_answer: str | None = None, difficulty: str | None = None) -> CaseFlag:
    """Resolve an open flag: `revise` (a new version of the case; the old one is kept with the reviews given to it),
    `retire` (the case becomes inactive, with the reason) or `keep` (no change; the note says why)."""
    flag = CaseFlag.objects.select_for_update().select_related("test_case", "cycle").get(pk=flag.pk)
    if flag.status != CaseFlag.Status.OPEN:
        raise ReviewError(f"this flag was already resolved ({flag.get_status_display().lower()})")
    case = TestCase.objects.select_for_update().get(pk=flag.test_case_id)
    note = note.strip()
    if action == "revise":
        new_prompt = (prompt if prompt is not None else case.prompt).strip()
        new_reference = (reference_answer if reference_answer is not None else case.reference_answer).strip()
        new_difficulty = difficulty or case.difficulty
        if not new_prompt:
            raise ReviewError({"prompt": "the revised case needs a prompt"})
        if new_difficulty not in Difficulty.values:
            raise ReviewError({"difficulty": "choose easy, medium, hard or expert"})
        if (new_prompt, new_reference, new_difficulty) == (case.prompt, case.reference_answer, case.difficulty):
            raise ReviewError("a revision must change the prompt, the reference answer or the difficulty")
        _snapshot(case, user=None)
        case.prompt, case.reference_answer, case.difficulty = new_prompt, new_reference, new_difficulty
        case.version += 1
        case.save(update_fields=["prompt", "reference_answer", "difficulty", "version", "updated_at"])
        _snapshot(case, reason=note or "; ".join(REASON_TEXT[r] for r in flag.reasons), user=user)
        flag.status, flag.new_version = CaseFlag.Status.REVISED, case.version
    elif action == "retire":
        if not note:
            raise ReviewError({"note": "say why the case is retired"})
        _snapshot(case)
        case.is_active = False
        case.retired_reason = note
        case.save(update_fields=["is_active", "retired_reason", "updated_at"])
        flag.status = CaseFlag.Status.RETIRED
    elif action == "keep":
        if not note:
            raise ReviewError({"note": "say why the case is kept as it is"})
        flag.status = CaseFlag.Status.KEPT
    else:
        raise ReviewError(f"unknown action {action!r}: revise, retire or keep")
    flag.note, flag.resolved_by, flag.resolved_at = note, user, timezone.now()
    flag.save()
    return flag


@transaction.atomic
def review_cycle_close(*, cycle: CaseReviewCycle, user: Any) -> CaseReviewCycle:
    cycle = CaseReviewCycle.objects.select_for_update().get(pk=cycle.pk)
    cycle.status = CaseReviewCycle.Status.CLOSED
    cycle.save(update_fields=["status"])
    return cycle


# --- reads -------------------------------------------------------------------------------------------------


def reviews_for_expert(user: Any) -> QuerySet[CaseReview]:
    return (CaseReview.objects.filter(expert=user, cycle__status=CaseReviewCycle.Status.OPEN)
            .select_related("cycle", "test_case").order_by("submitted_at", "cycle_id", "test_case__external_id"))


def review_cycle_progress(cycle: CaseReviewCycle) -> dict[str, Any]:
    counts = cycle.reviews.aggregate(total=Count("id"), done=Count("id", filter=Q(submitted_at__isnull=False)))
    cases = cycle.reviews.values("test_case").distinct().count()
    flags = Counter(cycle.flags.values_list("status", flat=True))
    return {"reviews": counts["total"], "submitted": counts["done"], "cases": cases,
            "flags_open": flags.get(CaseFlag.Status.OPEN, 0), "flags": sum(flags.values())}


def case_history(case: TestCase) -> list[dict[str, Any]]:
    """Every version of the case, oldest first, with the reviews given to that version and the flags on it."""
    revisions = {r.version: r for r in case.revisions.all()}
    reviews: dict[int, list[CaseReview]] = defaultdict(list)
    for review in case.reviews.filter(submitted_at__isnull=False).select_related("cycle").order_by("submitted_at"):
        reviews[review.case_version].append(review)
    flags: dict[int, list[CaseFlag]] = defaultdict(list)
    for flag in case.flags.select_related("cycle"):
        flags[flag.case_version].append(flag)
    history = []
    for version in range(1, case.version + 1):
        revision = revisions.get(version)
        current = version == case.version
        history.append({
            "version": version, "current": current,
            "prompt": case.prompt if current else (revision.prompt if revision else None),
            "reference_answer": case.reference_answer if current else (revision.reference_answer if revision else None),
            "difficulty": case.difficulty if current else (revision.difficulty if revision else None),
            "reason": revision.reason if revision else "", "changed_at": revision.created_at if revision else None,
            "reviews": reviews.get(version, []), "flags": flags.get(version, []),
        })
    return history


def validated_cases() -> set[int]:
    """Ids of cases that are human-validated: active, reviewed in full (≥ 3 submitted reviews of their current
    version in one cycle), no open flag on that version, and a majority of those reviewers saying "valid"."""
    reviews = (CaseReview.objects.filter(submitted_at__isnull=False, test_case__is_active=True)
               .values_list("cycle_id", "test_case_id", "case_version", "valid", "test_case__version"))
    groups: dict[tuple[int, int], list[str]] = defaultdict(list)
    for cycle_id, case_id, version, valid, current in reviews:
        if version == current:
            groups[(cycle_id, case_id)].append(valid)
    pending = set(CaseReview.objects.filter(submitted_at__isnull=True).values_list("cycle_id", "test_case_id"))
    open_flags = set(CaseFlag.objects.filter(status=CaseFlag.Status.OPEN).values_list("test_case_id", flat=True))
    validated = set()
    for (cycle_id, case_id), answers in groups.items():
        if (cycle_id, case_id) in pending or len(answers) < MIN_REVIEWERS or case_id in open_flags:
            continue
        if answers.count("yes") * 2 > len(answers):
            validated.add(case_id)
    return validated
