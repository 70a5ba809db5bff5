"""Test-case review, the writes: opening a cycle, an expert's blind review, the flags the reviews raise, resolving a
flag by revising (versioned) or retiring the case, closing a cycle; assigning and submitting TheoBERT audits. Every
write is a keyword-only, atomic service; the rules they apply are in `rules.py`, the reads in `selectors.py`."""
from __future__ import annotations

import random
from typing import Any

from django.db import transaction
from django.utils import timezone

from access.policy import Action, require
from annotations.models import Panel
from evaluations.domain import Difficulty
from evaluations.models import TestCase, TestCaseRevision, TheoBertRun

from .models import CaseFlag, CaseReview, CaseReviewCycle, TheoBertAudit
from .rules import (
    MIN_REVIEWERS,
    REASON_TEXT,
    ReviewAnswers,
    ReviewError,
    answers_check,
    flag_reasons,
    stratified_sample,
)
from .selectors import review_cases_eligible

AUDIT_ANSWERS = ("no", "unsure", "yes")

# --- opening a cycle ---------------------------------------------------------------------------------------


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
    require(user, Action.REVIEW_CASE, review)  # its reviewer only (PermissionDenied for anyone else)
    if review.cycle.status != CaseReviewCycle.Status.OPEN:
        raise ReviewError("this review cycle is closed")
    if review.is_submitted:
        raise ReviewError("this review was already submitted")
    answers_check(answers)
    review.valid, review.reference_correct = answers.valid, answers.reference_correct
    review.difficulty, review.clarity, review.comment = answers.difficulty, answers.clarity, answers.comment.strip()
    review.submitted_at = timezone.now()
    review.save()
    case_judge(cycle=review.cycle, test_case=review.test_case)
    return review


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
    """Close a review cycle: no review is submitted in it any more."""
    cycle = CaseReviewCycle.objects.select_for_update().get(pk=cycle.pk)
    cycle.status = CaseReviewCycle.Status.CLOSED
    cycle.save(update_fields=["status"])
    return cycle


# --- TheoBERT audits ---------------------------------------------------------------------------------------


@transaction.atomic
def audits_assign(*, run: TheoBertRun, experts: list[Any], per_case: int = 2, cases: int | None = None,
                  seed: int = 0) -> int:
    """Give each of (a sample of) the run's results to `per_case` experts, load spread evenly; returns how many."""
    if per_case < 2:
        raise ReviewError("agreement needs at least two experts per case")
    if len(experts) < per_case:
        raise ReviewError(f"{per_case} experts per case need at least {per_case} experts")
    results = list(run.results.order_by("case__case_id"))
    rng = random.Random(seed)
    if cases is not None and cases < len(results):
        results = sorted(rng.sample(results, cases), key=lambda r: r.case_id)
    load = {e.pk: 0 for e in experts}
    created = 0
    for result in results:
        for expert in sorted(experts, key=lambda e: (load[e.pk], rng.random()))[:per_case]:
            _, new = TheoBertAudit.objects.get_or_create(result=result, expert=expert)
            load[expert.pk] += 1
            created += new
    return created


@transaction.atomic
def audits_assign_to_panel(*, run: TheoBertRun, panel: Panel, per_case: int) -> int:
    """Give the run's results to the panel's active experts (`audits_assign`)."""
    return audits_assign(run=run, experts=list(panel.members.filter(is_active=True)), per_case=per_case)


@transaction.atomic
def audit_submit(*, audit: TheoBertAudit, user: Any, case_sound: str, verdict_right: str, comment: str = "") -> TheoBertAudit:
    """Submit the expert's own audit (once)."""
    audit = TheoBertAudit.objects.select_for_update().get(pk=audit.pk)
    require(user, Action.REVIEW_CASE, audit)  # its expert only
    if audit.submitted_at is not None:
        raise ReviewError("this audit was already submitted")
    if case_sound not in AUDIT_ANSWERS or verdict_right not in AUDIT_ANSWERS:
        raise ReviewError("answer yes, no or unsure to both questions")
    audit.case_sound, audit.verdict_right, audit.comment = case_sound, verdict_right, comment.strip()
    audit.submitted_at = timezone.now()
    audit.save()
    return audit
