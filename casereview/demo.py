"""The demo's test-validity data: a case review cycle with reviews, a flag and a report; a TheoBERT scoring run from
synthetic predictions with audits assigned; an IRT fit of one dimension. Idempotent (created once)."""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import transaction

from accounts.models import User
from annotations.models import Panel
from evaluations.models import TheoBertCase, TheoBertRun
from evaluations.theobert.scoring import CaseSpec, Prediction
from evaluations.theobert.services import theobert_run_score

from .agreement import review_report_snapshot
from .difficulty import DifficultyError, difficulty_fit
from .models import CaseReview, CaseReviewCycle, TheoBertAudit
from .reports import difficulty_fits_exist
from .rules import ReviewAnswers
from .services import audit_submit, audits_assign, case_review_submit, review_cycle_open
from .theobert import audit_figures_refresh

DEMO_REVIEW_NAME = "Demo case review"
DEMO_THEOBERT_LABEL = "demo predictions (synthetic)"
FEATURED = "catholic1@faithbench.test"
GENERIC = ["power", "love", "will", "god", "world", "life", "people", "plan"]


class _DemoPredictions:
    """Synthetic predictions: about four cases in five rank a target first; the rest put generic words on top."""

    label = DEMO_THEOBERT_LABEL

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def predict(self, cases: Sequence[CaseSpec], *, top: int, progress: Any = None) -> Iterator[Prediction]:
        for case in cases:
            good = self.rng.random() < 0.8
            words = list(case.targets[:1]) + GENERIC if good else GENERIC[:3] + list(case.targets[:1]) + GENERIC[3:]
            ranked = tuple((w, round(0.5 / (i + 1), 4)) for i, w in enumerate(dict.fromkeys(words)))
            probabilities = {}
            if case.foils:
                p_target = 0.4 if good else 0.05
                probabilities = {case.targets[0]: p_target, case.foils[0]: 0.1}
            yield Prediction(case_id=case.case_id, ranked=ranked, probabilities=probabilities)


@transaction.atomic
def demo_validity_create(*, seed: int = 20251122) -> list[str]:
    lines: list[str] = []
    panel = Panel.objects.filter(tradition__key="catholic").first()
    if panel is not None and not CaseReviewCycle.objects.filter(name=DEMO_REVIEW_NAME).exists() \
            and panel.members.count() >= 3:
        lead = panel.lead or User.objects.get(email="admin@faithbench.test")
        cycle = review_cycle_open(panel=panel, name=DEMO_REVIEW_NAME, user=lead, sample_size=6, seed=seed)
        rng = random.Random(seed)
        doubtful = CaseReview.objects.filter(cycle=cycle).order_by("test_case__external_id").first()
        for review in CaseReview.objects.filter(cycle=cycle).select_related("expert", "test_case").order_by("pk"):
            if review.expert.email == FEATURED and rng.random() < 0.5:
                continue  # the featured expert keeps some reviews open for the tour
            flagged = doubtful is not None and review.test_case_id == doubtful.test_case_id
            answers = ReviewAnswers(
                valid="no" if flagged and review.expert.email != FEATURED else "yes",
                reference_correct="partly" if flagged else rng.choice(["yes", "yes", "partly"]),
                difficulty=review.test_case.difficulty if rng.random() < 0.6 else rng.choice(["easy", "medium", "hard"]),
                clarity=rng.choice([2, 3, 3]),
                comment="Demo: the question tests recall rather than its dimension." if flagged else "")
            case_review_submit(review=review, user=review.expert, answers=answers)
        report = review_report_snapshot(cycle=cycle, user=lead, n_resamples=200, seed=seed)
        lines.append(f"case review cycle #{cycle.pk}: {cycle.sample['size']} cases × 3 reviewers, "
                     f"{cycle.flags.count()} flag(s), agreement report v{report.version}")
    if TheoBertCase.objects.exists() and not TheoBertRun.objects.filter(label=DEMO_THEOBERT_LABEL).exists():
        run = theobert_run_score(source=_DemoPredictions(seed), kind=TheoBertRun.Source.FILE,
                                 source_name="(synthetic demo predictions)")
        if panel is not None and panel.members.count() >= 2:
            experts = list(panel.members.order_by("email"))
            audits_assign(run=run, experts=experts, per_case=2, cases=min(10, run.results.count()), seed=seed)
            for audit in TheoBertAudit.objects.filter(result__run=run).exclude(expert__email=FEATURED):
                audit_submit(audit=audit, user=audit.expert, case_sound="yes",
                             verdict_right="yes" if audit.result.passed or audit.pk % 3 else "no")
            audit_figures_refresh(run=run)  # once, after every demo audit (the page reads stored figures)
        lines.append(f"TheoBERT run #{run.pk}: {run.results.filter(passed=True).count()} of {run.results.count()} "
                     "cases pass (synthetic predictions), audits assigned to the Catholic panel")
    if not difficulty_fits_exist():
        try:
            fit = difficulty_fit(dimension="doctrinal")
        except DifficultyError as exc:
            lines.append(f"IRT fit skipped: {exc}")
        else:
            lines.append(f"IRT fit #{fit.pk}: doctrinal, {fit.items} cases × {fit.persons} models")
    return lines
