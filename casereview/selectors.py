"""Test-case review, the reads: what each page shows, as frozen values. The expert-facing ones are blind: they carry
no reviewer's identity, no other reviewer's answer and no count of reviews; the lead-facing ones name no reviewer
either ("Reviewer 1", "Reviewer 2"). Agreement figures come from stored reports and stored audit figures."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.db.models import Count, Q, QuerySet
from django.utils.safestring import SafeString

from access.policy import panels_led
from annotations.models import Panel
from annotations.rendering import markdown_to_safe_html
from evaluations.models import TestCase, TheoBertCase, TheoBertResult, TheoBertRun, Tradition
from evidence.models import Snapshot

from .difficulty import Ability, FitItem, FitPayload, fit_abilities
from .models import CaseFlag, CaseReview, CaseReviewCycle, TheoBertAudit
from .reports import (
    difficulty_fit_get,
    difficulty_fits_list,
    review_report_latest,
)
from .rules import MIN_REVIEWERS, flag_reason_texts
from .theobert import AuditAgreement, SideBySideRow, audit_figures_read, side_by_side

# --- shared ------------------------------------------------------------------------------------------------


def review_cases_eligible(panel: Panel) -> QuerySet[TestCase]:
    """The active cases a panel reviews: those of its tradition (a neutral panel: the tradition-neutral cases)."""
    cases = TestCase.objects.active()
    return cases.filter(tradition=panel.tradition) if panel.tradition_id else cases.filter(tradition__isnull=True)


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


# --- experts (blind) ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueReview:
    """One of the expert's own reviews in their list: the case and the cycle, nothing about other reviewers."""

    public_id: str
    case_external_id: str
    dimension_label: str
    cycle_name: str
    is_submitted: bool


@dataclass(frozen=True)
class QueueAudit:
    public_id: str
    case_id: str
    is_submitted: bool


@dataclass(frozen=True)
class ReviewQueue:
    reviews: tuple[QueueReview, ...]
    audits: tuple[QueueAudit, ...]

    @property
    def open_reviews(self) -> int:
        return sum(not r.is_submitted for r in self.reviews)

    @property
    def open_audits(self) -> int:
        return sum(not a.is_submitted for a in self.audits)


def reviews_for_expert(user: Any) -> QuerySet[CaseReview]:
    """The expert's reviews in open cycles, those still to do first."""
    return (CaseReview.objects.filter(expert=user, cycle__status=CaseReviewCycle.Status.OPEN)
            .select_related("cycle", "test_case").order_by("submitted_at", "cycle_id", "test_case__external_id"))


def review_queue(user: Any) -> ReviewQueue:
    """The expert's own reviews (open cycles) and TheoBERT audits."""
    reviews = tuple(QueueReview(public_id=r.public_id, case_external_id=r.test_case.external_id,
                                dimension_label=r.test_case.get_dimension_display(), cycle_name=r.cycle.name,
                                is_submitted=r.is_submitted) for r in reviews_for_expert(user))
    audits = tuple(QueueAudit(public_id=a.public_id, case_id=a.result.case.case_id,
                              is_submitted=a.submitted_at is not None)
                   for a in TheoBertAudit.objects.filter(expert=user).select_related("result__case")
                   .order_by("submitted_at", "result__case__case_id"))
    return ReviewQueue(reviews=reviews, audits=audits)


def review_next_open(user: Any) -> str | None:
    """The public id of the expert's next review to do, if any."""
    following = reviews_for_expert(user).filter(submitted_at__isnull=True).first()
    return following.public_id if following else None


def audit_next_open(user: Any) -> str | None:
    """The public id of the expert's next TheoBERT audit to do, if any."""
    following = TheoBertAudit.objects.filter(expert=user, submitted_at__isnull=True).first()
    return following.public_id if following else None


def review_get(public_id: str) -> CaseReview | None:
    """A review by its public id, with its cycle and case (the policy decides who may open it)."""
    return (CaseReview.objects.select_related("cycle", "test_case", "test_case__tradition")
            .filter(public_id=public_id).first())


@dataclass(frozen=True)
class ReviewPage:
    """The expert's own review of one case: the case as assigned and their answers once submitted. Nothing about
    the other reviewers, the corpus's assigned difficulty or any model's answer."""

    public_id: str
    case_version: int
    is_submitted: bool
    valid_label: str
    reference_label: str
    difficulty: str
    clarity: int | None
    comment: str
    case_external_id: str
    dimension_label: str
    tradition: Tradition | None
    question_type_label: str
    is_held_out: bool
    stale: bool  # the case was revised after it was assigned: its new text is not shown
    prompt_html: SafeString
    reference_html: SafeString


def review_page(review: CaseReview) -> ReviewPage:
    """What the reviewer's page shows of their own review (`review_get`'s result, after the policy allowed it)."""
    case = review.test_case
    return ReviewPage(
        public_id=review.public_id, case_version=review.case_version, is_submitted=review.is_submitted,
        valid_label=review.get_valid_display(), reference_label=review.get_reference_correct_display(),
        difficulty=review.difficulty, clarity=review.clarity, comment=review.comment,
        case_external_id=case.external_id, dimension_label=case.get_dimension_display(), tradition=case.tradition,
        question_type_label=case.get_question_type_display(), is_held_out=case.is_held_out,
        stale=case.version != review.case_version, prompt_html=markdown_to_safe_html(case.prompt),
        reference_html=markdown_to_safe_html(case.reference_answer))


@dataclass(frozen=True)
class AuditPage:
    """The expert's own audit of one scored TheoBERT case: the case, the scorer's verdict, their answers."""

    public_id: str
    is_submitted: bool
    case_sound_label: str
    verdict_right_label: str
    case: TheoBertCase
    result: TheoBertResult
    top: tuple[Any, ...]


def audit_page(audit: TheoBertAudit) -> AuditPage:
    """What the auditor's page shows (`audit_get`'s result, after the policy allowed it)."""
    result = audit.result
    return AuditPage(public_id=audit.public_id, is_submitted=audit.submitted_at is not None,
                     case_sound_label=audit.get_case_sound_display(),
                     verdict_right_label=audit.get_verdict_right_display(), case=result.case, result=result,
                     top=tuple(result.ranked[: max(result.k, 10)]))


def audit_get(public_id: str) -> TheoBertAudit | None:
    """A TheoBERT audit by its public id, with its result and case (the policy decides who may open it)."""
    return TheoBertAudit.objects.select_related("result", "result__case").filter(public_id=public_id).first()


# --- leads -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CycleProgress:
    reviews: int
    submitted: int
    cases: int
    flags_open: int
    flags: int


@dataclass(frozen=True)
class CycleRow:
    pk: int
    name: str
    panel: str
    status_label: str
    n_reviews: int
    n_done: int
    n_open_flags: int


@dataclass(frozen=True)
class FlagRow:
    pk: int
    test_case_id: int
    case_external_id: str
    case_version: int
    reason_text: tuple[str, ...]
    status: str
    status_label: str
    new_version: int | None


@dataclass(frozen=True)
class CyclePage:
    progress: CycleProgress
    flags: tuple[FlagRow, ...]
    report: Snapshot | None


@dataclass(frozen=True)
class FlagReview:
    """One submitted review of a flagged case, for its lead: the answers, never the reviewer."""

    valid_label: str
    reference_label: str
    difficulty: str
    clarity: int | None
    comment: str


@dataclass(frozen=True)
class HistoryReview:
    cycle_name: str
    valid_label: str
    reference_label: str
    difficulty: str
    clarity: int | None


@dataclass(frozen=True)
class HistoryFlag:
    cycle_name: str
    status_label: str
    note: str


@dataclass(frozen=True)
class CaseVersion:
    """One version of a case: its text (None when no copy was kept), why it changed, its reviews and flags."""

    version: int
    current: bool
    prompt: str | None
    reference_answer: str | None
    difficulty: str | None
    reason: str
    changed_at: datetime | None
    reviews: tuple[HistoryReview, ...]
    flags: tuple[HistoryFlag, ...]


def panels_for(user: Any) -> QuerySet[Panel]:
    """The panels whose review cycles `user` runs (admins: every panel)."""
    led = panels_led(user)
    panels = Panel.objects.select_related("tradition")
    return panels if led is None else panels.filter(pk__in=led)


def review_cycles_for(user: Any) -> list[CycleRow]:
    """The review cycles of the panels `user` runs, with their counts of reviews and open flags."""
    rows = (CaseReviewCycle.objects.filter(panel__in=panels_for(user)).select_related("panel")
            # distinct: the join to flags repeats each review once per flag of the cycle
            .annotate(n_reviews=Count("reviews", distinct=True),
                      n_done=Count("reviews", filter=Q(reviews__submitted_at__isnull=False), distinct=True),
                      n_open_flags=Count("flags", filter=Q(flags__status=CaseFlag.Status.OPEN), distinct=True)))
    return [CycleRow(pk=c.pk, name=c.name, panel=str(c.panel), status_label=c.get_status_display(),
                     n_reviews=c.n_reviews, n_done=c.n_done, n_open_flags=c.n_open_flags)
            for c in rows]


def review_cycle_get(pk: int) -> CaseReviewCycle | None:
    """A review cycle with its panel (the policy decides who may manage it)."""
    return CaseReviewCycle.objects.select_related("panel", "panel__tradition").filter(pk=pk).first()


def review_cycle_progress(cycle: CaseReviewCycle) -> CycleProgress:
    """How many reviews are assigned and submitted, over how many cases; open and all flags."""
    counts = cycle.reviews.aggregate(total=Count("id"), done=Count("id", filter=Q(submitted_at__isnull=False)))
    cases = cycle.reviews.values("test_case").distinct().count()
    flags = Counter(cycle.flags.values_list("status", flat=True))
    return CycleProgress(reviews=counts["total"], submitted=counts["done"], cases=cases,
                         flags_open=flags.get(CaseFlag.Status.OPEN, 0), flags=sum(flags.values()))


def review_cycle_page(cycle: CaseReviewCycle) -> CyclePage:
    """A cycle's progress, its flags (open first) and its latest stored agreement report."""
    flags = tuple(FlagRow(pk=f.pk, test_case_id=f.test_case_id, case_external_id=f.test_case.external_id,
                          case_version=f.case_version, reason_text=tuple(flag_reason_texts(f.reasons)),
                          status=f.status, status_label=f.get_status_display(), new_version=f.new_version)
                  for f in cycle.flags.select_related("test_case").order_by("status", "test_case__external_id"))
    return CyclePage(progress=review_cycle_progress(cycle), flags=flags, report=review_report_latest(cycle))


def flag_get(pk: int) -> CaseFlag | None:
    """A flag with its cycle's panel and its case (the policy decides who may resolve it)."""
    return CaseFlag.objects.select_related("cycle__panel", "test_case").filter(pk=pk).first()


def flag_reviews(flag: CaseFlag) -> tuple[FlagReview, ...]:
    """The submitted reviews of the flagged case in its cycle, in the order they came in, without reviewers."""
    return tuple(FlagReview(valid_label=r.get_valid_display(), reference_label=r.get_reference_correct_display(),
                            difficulty=r.difficulty, clarity=r.clarity, comment=r.comment)
                 for r in CaseReview.objects.filter(cycle_id=flag.cycle_id, test_case_id=flag.test_case_id,
                                                    submitted_at__isnull=False).order_by("submitted_at"))


def case_get(pk: int) -> TestCase | None:
    """A test case with its tradition."""
    return TestCase.objects.select_related("tradition").filter(pk=pk).first()


def case_history(case: TestCase) -> list[CaseVersion]:
    """Every version of the case, oldest first, with the reviews given to that version and the flags on it."""
    revisions = {r.version: r for r in case.revisions.all()}
    reviews: dict[int, list[HistoryReview]] = defaultdict(list)
    for review in case.reviews.filter(submitted_at__isnull=False).select_related("cycle").order_by("submitted_at"):
        reviews[review.case_version].append(HistoryReview(
            cycle_name=review.cycle.name, valid_label=review.get_valid_display(),
            reference_label=review.get_reference_correct_display(), difficulty=review.difficulty,
            clarity=review.clarity))
    flags: dict[int, list[HistoryFlag]] = defaultdict(list)
    for flag in case.flags.select_related("cycle"):
        flags[flag.case_version].append(HistoryFlag(cycle_name=flag.cycle.name, status_label=flag.get_status_display(),
                                                    note=flag.note))
    history = []
    for version in range(1, case.version + 1):
        revision = revisions.get(version)
        current = version == case.version
        history.append(CaseVersion(
            version=version, current=current,
            prompt=case.prompt if current else (revision.prompt if revision else None),
            reference_answer=case.reference_answer if current else (revision.reference_answer if revision else None),
            difficulty=case.difficulty if current else (revision.difficulty if revision else None),
            reason=revision.reason if revision else "", changed_at=revision.created_at if revision else None,
            reviews=tuple(reviews.get(version, [])), flags=tuple(flags.get(version, [])),
        ))
    return history


# --- admins: the TheoBERT audit and IRT difficulty ---------------------------------------------------------


@dataclass(frozen=True)
class TheoBertPage:
    runs: tuple[TheoBertRun, ...]
    run: TheoBertRun | None
    panels: tuple[Panel, ...]
    agreement: AuditAgreement | None = None
    rescored: TheoBertRun | None = None
    rows: tuple[SideBySideRow, ...] = ()


def theobert_runs() -> list[TheoBertRun]:
    """The newest scoring runs that are not re-scorings (20)."""
    return list(TheoBertRun.objects.filter(rescored_from__isnull=True)[:20])


def theobert_run_chosen(chosen: str | None) -> TheoBertRun | None:
    """The run named by `chosen` (its id) among the newest, else the newest; None when there is none."""
    runs = theobert_runs()
    return next((r for r in runs if str(r.pk) == chosen), runs[0]) if runs else None


def theobert_page(chosen: str | None) -> TheoBertPage:
    """The audit page: the runs, the chosen one's stored audit figures and its stored summary beside the newest
    re-scoring's (figures recomputed only when the audits changed since they were stored)."""
    runs = tuple(theobert_runs())
    run = next((r for r in runs if str(r.pk) == chosen), runs[0]) if runs else None
    panels = tuple(Panel.objects.all())
    if run is None:
        return TheoBertPage(runs=runs, run=None, panels=panels)
    rescored = run.rescorings.order_by("-created_at").first()
    return TheoBertPage(runs=runs, run=run, panels=panels, agreement=audit_figures_read(run), rescored=rescored,
                        rows=tuple(side_by_side(run, rescored)))


@dataclass(frozen=True)
class DifficultyPage:
    fits: tuple[Snapshot, ...]
    fit: Snapshot | None = None
    payload: FitPayload | None = None
    models: tuple[Ability, ...] = ()
    items: tuple[FitItem, ...] = ()

    @property
    def equating(self) -> Any:
        return self.payload.get("equating") if self.payload else None


def difficulty_page(chosen: str | None) -> DifficultyPage:
    """Stored IRT fits (50 newest) and the chosen one (else the newest): abilities, items by difficulty."""
    fits = tuple(difficulty_fits_list())
    if not fits:
        return DifficultyPage(fits=fits)
    wanted = next((f for f in fits if str(f.pk) == chosen), fits[0])
    fit = difficulty_fit_get(wanted.pk)
    payload = cast(FitPayload, fit.document)
    return DifficultyPage(fits=fits, fit=fit, payload=payload, models=tuple(fit_abilities(fit)),
                          items=tuple(sorted(payload["items"], key=lambda i: -i["difficulty"])))
