"""Judge results for tests without an endpoint: random verdicts stored through the pipeline's own writer."""
from __future__ import annotations

import random

from evaluations.judge.leaderboard import case_composite
from evaluations.judge.outcomes import ItemOutcome, ResultRecord, ScoreRecord
from evaluations.judge.pipeline import SIX_PLACES, work_items
from evaluations.judge.services import judge_results_store


def store_random_results(run, seed: int) -> None:  # type: ignore[no-untyped-def]
    """Results for every item of `run` through the pipeline's writer: scored, failed, filtered, fallback, secondary."""
    rng = random.Random(seed)

    def scored(item, model: str, role: str) -> ResultRecord:  # type: ignore[no-untyped-def]
        raw = {key: rng.randint(0, 3) for key in item.sub_keys}
        return ResultRecord(role=role, judge_model=model, status="scored", attempts=1,
                            composite=case_composite(raw_scores=raw, sub_weights=item.sub_weights).quantize(SIX_PLACES),
                            scores=[ScoreRecord(key, value, "because") for key, value in raw.items()])

    def failed(model: str, status: str, error_class: str) -> ResultRecord:
        return ResultRecord(role="primary", judge_model=model, status=status, error_class=error_class, attempts=3)

    outcomes = []
    for item in work_items(run=run):
        outcome = ItemOutcome(response_id=item.response_id)
        draw = rng.random()
        if draw < 0.1:
            outcome.results.append(failed(run.primary_model, "failed", "server_error"))
        elif draw < 0.15:
            outcome.results.append(failed(run.primary_model, "filtered", "filtered"))
        elif draw < 0.25:
            outcome.results += [failed(run.primary_model, "failed", "timeout"), scored(item, run.fallback_model, "fallback")]
        else:
            outcome.results.append(scored(item, run.primary_model, "primary"))
            if item.needs_secondary:
                outcome.results.append(scored(item, run.secondary_model, "secondary") if rng.random() > 0.2
                                       else ResultRecord(role="secondary", judge_model=run.secondary_model,
                                                         status="parse_error", error_class="parse_error"))
        outcomes.append(outcome)
    judge_results_store(run=run, outcomes=outcomes)
