"""Pairwise judging (methodology §6.2.1 position bias): the judge compares two responses to the same case, and
every pair is asked in both orders, (X, Y) and (Y, X). The prompt is ours (the methodology gives none for this
mode; the single-response prompts of §5.3.3–5.3.4 are untouched):

    system: evaluations.judge.prompts.pairwise_system_prompt (the dimension named)
    user:   evaluations.judge.prompts.pairwise_user_message (QUESTION / (REFERENCE ANSWER) / ANSWER A / ANSWER B)

and the reply is ``{"preferred": "A" | "B" | "tie", "reasoning": …}``. Calls go through the pipeline's LLMClient
(retries, Retry-After, timeouts, cost); the calling thread stores verdicts in batches while an event loop in a
background thread sends the calls. Resumable: a run sends only the ordered pairs it has no verdict for.
"""
from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from evaluations.domain import Dimension

from ..models import ModelResponse, PairwiseJudgment, PairwiseRun
from .client import CallResult, ChatThread, ClientOptions, json_chat_payload
from .config import PipelineConfig
from .prompts import pairwise_system_prompt, pairwise_user_message
from .selectors import RunSelection, case_filter_parse, responses_for_selection

logger = logging.getLogger(__name__)

BATCH = 50


@dataclass(frozen=True)
class PairCall:
    first: int
    second: int
    system: str
    user: str


def parse_preference(content: str) -> tuple[str, str]:
    """("A" | "B" | "tie", reasoning) from a reply; ValueError when there is no such verdict."""
    text = content.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {content[:80]!r}") from exc
    preferred = str(body.get("preferred", "")).strip() if isinstance(body, dict) else ""
    normal = {"a": "A", "b": "B", "tie": "tie"}.get(preferred.lower())
    if normal is None:
        raise ValueError(f"no verdict A, B or tie: {preferred[:40]!r}")
    return normal, str(body.get("reasoning", ""))[:2000]


def pairwise_run_create(*, model: str, cases: str | None = None, limit: int | None = None, base_url: str = "",
                        created_by: Any = None) -> PairwiseRun:
    """A queued run over the pairs of responses (different models, same case) of the selected cases; `limit` caps
    the pairs (lowest ids first). Each pair is asked in both orders: total = 2 × pairs."""
    try:
        selection: RunSelection = {"models": [], "cases": case_filter_parse(cases), "run_label": "", "limit": None}
    except ValueError as exc:
        raise ValidationError(str(exc), code="bad_case_filter") from exc
    if limit is not None and limit < 1:
        raise ValidationError("limit must be at least 1", code="bad_limit")
    pairs = _pairs(selection, limit)
    if not pairs:
        raise ValidationError("no case has responses from two models in this selection", code="empty_selection")
    return PairwiseRun.objects.create(
        model=model, base_url=base_url or PipelineConfig.from_settings().base_url,
        selection={"cases": selection["cases"], "limit": limit}, total=2 * len(pairs), created_by=created_by)


def _pairs(selection: RunSelection, limit: int | None) -> list[tuple[int, int]]:
    by_case: dict[int, list[int]] = {}
    for response_id, case_id in responses_for_selection(selection=selection).order_by("id").values_list(
            "id", "test_case_id"):
        by_case.setdefault(case_id, []).append(response_id)
    pairs = [pair for case_id in sorted(by_case) for pair in itertools.combinations(sorted(by_case[case_id]), 2)]
    return pairs[:limit] if limit else pairs


def pending_pair_calls(*, run: PairwiseRun) -> list[PairCall]:
    selection: RunSelection = {"models": [], "cases": run.selection.get("cases") or {}, "run_label": "",
                               "limit": None}
    pairs = _pairs(selection, run.selection.get("limit"))
    done = set(PairwiseJudgment.objects.filter(run=run).values_list("first_id", "second_id"))
    wanted = {r for pair in pairs for r in pair}
    responses = {r.pk: r for r in ModelResponse.objects.filter(pk__in=wanted).select_related("test_case")}
    labels = dict(Dimension.choices)
    calls = []
    for x, y in pairs:
        case = responses[x].test_case
        system = pairwise_system_prompt(dimension=labels.get(case.dimension, case.dimension))
        for first, second in ((x, y), (y, x)):
            if (first, second) not in done:
                calls.append(PairCall(first, second, system, pairwise_user_message(
                    question=case.prompt, reference=case.reference_answer, first=responses[first].text,
                    second=responses[second].text)))
    return calls


def pairwise_run_execute(*, run: PairwiseRun, client_options: ClientOptions | None = None,
                         on_progress: Callable[[int, int], None] | None = None, batch: int = BATCH,
                         after_store: Callable[[int], None] | None = None) -> PairwiseRun:
    """Send the run's pending ordered pairs and store the verdicts; safe to call again (resumes). `after_store(n)`
    is called after each committed batch (tests simulate a crash there)."""
    PairwiseRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=timezone.now())
    PairwiseRun.objects.filter(pk=run.pk).update(status=PairwiseRun.Status.RUNNING, error="")
    calls = pending_pair_calls(run=run)
    config = PipelineConfig.from_settings(base_url=run.base_url)
    chat = ChatThread(calls, config=config, base_url=run.base_url, client_options=client_options,
                      name=f"pairwise-{run.pk}",
                      payload=lambda call: json_chat_payload(model=run.model, system=call.system, user=call.user,
                                                             max_tokens=600))

    def store(batch: list[tuple[PairCall, CallResult]]) -> None:
        rows, failed = [], 0
        for call, result in batch:
            preferred, reasoning, error = "", "", ""
            if not result.ok:
                error = result.error_class or "error"
            else:
                try:
                    preferred, reasoning = parse_preference(result.content)
                except ValueError as exc:
                    error = f"parse_error: {exc}"[:200]
            failed += bool(error)
            rows.append(PairwiseJudgment(run=run, first_id=call.first, second_id=call.second, preferred=preferred,
                                         reasoning=reasoning, error=error[:200], prompt_tokens=result.prompt_tokens,
                                         completion_tokens=result.completion_tokens, cost=result.cost))
        with transaction.atomic():
            PairwiseJudgment.objects.bulk_create(rows, ignore_conflicts=True)
            PairwiseRun.objects.filter(pk=run.pk).update(
                done=F("done") + len(rows), failed=F("failed") + failed,
                prompt_tokens=F("prompt_tokens") + sum(r.prompt_tokens or 0 for r in rows),
                completion_tokens=F("completion_tokens") + sum(r.completion_tokens or 0 for r in rows),
                cost=F("cost") + sum((r.cost or Decimal(0) for r in rows), Decimal(0)))

    buffer: list[tuple[PairCall, CallResult]] = []
    stored = run.done
    with chat:
        while (entry := chat.out.get()) is not None:
            buffer.append(entry)
            if len(buffer) >= batch:
                store(buffer)
                stored += len(buffer)
                buffer = []
                if on_progress:
                    on_progress(stored, run.total)
                if after_store:
                    after_store(stored)
        if buffer:
            store(buffer)
            stored += len(buffer)
            if on_progress:
                on_progress(stored, run.total)
    status = PairwiseRun.Status.FAILED if chat.crashed else PairwiseRun.Status.FINISHED
    PairwiseRun.objects.filter(pk=run.pk).update(status=status, finished_at=timezone.now(), error=chat.error)
    run.refresh_from_db()
    return run


@transaction.atomic
def pairwise_run_retry(*, run: PairwiseRun) -> tuple[PairwiseRun, int]:
    """Queue a stopped pairwise run again: its failed or unreadable calls are discarded (and sent again with the ones
    it never sent). Returns the run and how many failed calls go again; the caller enqueues it."""
    run = PairwiseRun.objects.select_for_update().get(pk=run.pk)
    if run.status in (PairwiseRun.Status.QUEUED, PairwiseRun.Status.RUNNING):
        raise ValidationError(f"the run is {run.get_status_display().lower()}: wait until it stops", code="active")
    failed = PairwiseJudgment.objects.filter(run=run, preferred="")
    n = failed.count()
    if not n and run.done >= run.total:
        raise ValidationError("no failed call to retry: every pair has a verdict", code="nothing_failed")
    failed.delete()
    run.done, run.failed = run.done - n, run.failed - n
    run.status, run.error, run.finished_at = PairwiseRun.Status.QUEUED, "", None
    run.save(update_fields=["done", "failed", "status", "error", "finished_at"])
    return run, n
