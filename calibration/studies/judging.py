"""Judging an imported study: a judge model scores the study's items, one call per item × dimension, through the
integrated pipeline's HTTP client (the same retries, Retry-After, timeouts and cost accounting as a judge run); each
answer becomes a score of the judge rater named after the model, so the study's report compares it with the humans.

The prompts come from the judge's one prompt builder (``evaluations.judge.prompts``, its study variant): the user
message is the dimension's template (JUDGE-BENCH datasets carry one per metric) with ``{{ instance }}`` replaced by
the item's text — or, without that placeholder, followed by it; the system prompt asks for ``{"score": N}`` on the
dimension's scale; the reply's score must be a number on the scale, else the call counts as failed (``parse``).

Threads as in the judge pipeline: an event loop in a background thread sends the calls and never touches the
database; the calling thread stores answers in batches (one transaction each), checks for cancellation and writes
progress. Resuming needs no state: a run sends only the pairs its rater has not scored yet, so after a crash
nothing already stored is sent again.
"""
from __future__ import annotations

import json
import logging
import math
import queue
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any, TypedDict

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from accounts.models import User
from audit.models import AuditEvent
from audit.services import audit_record
from evaluations.judge.client import CallResult, ChatThread, ClientOptions, json_chat_payload
from evaluations.judge.config import PipelineConfig
from evaluations.judge.prompts import study_system_prompt, study_user_message

from ..models import Study, StudyDimension, StudyItem, StudyJudgeRun, StudyRater, StudyScore

logger = logging.getLogger(__name__)

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
BATCH = 100
FLUSH_SECONDS = 0.5
HEARTBEAT_SECONDS = 30.0
STALE_AFTER = timedelta(minutes=5)  # a running run with no sign of life for this long lost its process


@dataclass(frozen=True)
class Call:
    item_id: int
    dimension_id: int
    system: str
    user: str
    low: float | None
    high: float | None


def parse_study_score(content: str, *, low: float | None, high: float | None) -> float:
    """The score of a reply: ``{"score": N}`` (or the first number in the text); ValueError if none or off the scale."""
    value: Any = None
    try:
        body = json.loads(content.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
        if isinstance(body, dict):
            value = body.get("score")
    except ValueError:
        pass
    if value is None:
        match = NUMBER.search(content)
        value = match.group() if match else None
    try:
        number = float(value) if value is not None and not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"no score in the reply: {content[:80]!r}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"score {number:g} is outside the scale {low:g}–{high:g}")
    return number


def study_judge_dimensions(*, study: Study, keys: list[str] | None = None) -> list[StudyDimension]:
    dimensions = list(study.dimensions.order_by("id"))
    if keys:
        unknown = sorted(set(keys) - {d.key for d in dimensions})
        if unknown:
            raise ValidationError({"dimensions": [f"no such dimension in the study: {', '.join(unknown)}"]})
        return [d for d in dimensions if d.key in keys]
    return dimensions


def pending_calls(*, run: StudyJudgeRun) -> list[Call]:
    """The item × dimension pairs the run's rater has not scored yet, with their prompts (items with text only)."""
    rater = StudyRater.objects.filter(study=run.study, name=run.model).first()
    done = set(StudyScore.objects.filter(rater=rater).values_list("item_id", "dimension_id")) if rater else set()
    calls = []
    items = list(StudyItem.objects.filter(study=run.study).exclude(text="").order_by("id").values_list("id", "text"))
    for dimension in study_judge_dimensions(study=run.study, keys=run.dimensions or None):
        system = study_system_prompt(dimension=dimension.key, low=dimension.scale_min, high=dimension.scale_max,
                                     level=dimension.level)
        for item_id, text in items:
            if (item_id, dimension.pk) in done:
                continue
            calls.append(Call(item_id, dimension.pk, system,
                              study_user_message(template=dimension.prompt, text=text, dimension=dimension.key),
                              dimension.scale_min, dimension.scale_max))
            if run.limit is not None and len(calls) >= run.limit:
                return calls
    return calls


@transaction.atomic
def study_judge_run_request(*, study: Study, model: str, requested_by: User | None, base_url: str = "",
                            dimensions: list[str] | None = None, limit: int | None = None) -> StudyJudgeRun:
    """Record a run (the worker executes it). Refused: an unknown dimension, a model named like a human rater of
    the study, a run of the same model on the study still active, a study without item texts."""
    errors: dict[str, list[str]] = {}
    model = model.strip()
    now = timezone.now()
    StudyJudgeRun.objects.filter(study=study, status=StudyJudgeRun.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER
                                 ).update(status=StudyJudgeRun.Status.FAILED, finished_at=now,
                                          error="The process running it stopped (no sign of life for 5 minutes); "
                                                "a new run sends what is still missing.")
    if not model:
        errors["model"] = ["name the judge model"]
    if StudyRater.objects.filter(study=study, name=model, kind=StudyRater.Kind.HUMAN).exists():
        errors["model"] = [f"{model!r} is a human rater of this study: a judge needs its own name"]
    if StudyJudgeRun.objects.filter(study=study, model=model, status__in=["queued", "running"]).exists():
        errors["model"] = [f"a run of {model!r} on this study is still queued or running"]
    if limit is not None and limit < 1:
        errors["limit"] = ["must be at least 1"]
    try:
        study_judge_dimensions(study=study, keys=dimensions)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    if not StudyItem.objects.filter(study=study).exclude(text="").exists():
        errors["study"] = ["its items have no text to judge (JUDGE-BENCH files carry it in each instance's "
                           "`instance`; the long and wide formats carry none)"]
    if errors:
        raise ValidationError(errors)
    return StudyJudgeRun.objects.create(
        study=study, model=model, base_url=base_url or str(PipelineConfig.from_settings().base_url),
        dimensions=list(dimensions or []), limit=limit, requested_by=requested_by)


@transaction.atomic
def study_judge_run_cancel(*, run: StudyJudgeRun) -> bool:
    """Ask an active run to stop (a queued one stops at once, without a start time); False if it has ended.
    The audit trail records an accepted cancel in the same transaction (a queryset update sends no signal)."""
    now = timezone.now()
    if StudyJudgeRun.objects.filter(pk=run.pk, status=StudyJudgeRun.Status.QUEUED).update(
            status=StudyJudgeRun.Status.CANCELLED, cancel_requested=True, finished_at=now):
        was = StudyJudgeRun.Status.QUEUED
    elif StudyJudgeRun.objects.filter(pk=run.pk, status=StudyJudgeRun.Status.RUNNING).update(cancel_requested=True):
        was = StudyJudgeRun.Status.RUNNING
    else:
        return False
    audit_record(action=AuditEvent.Action.JUDGE_RUN_CANCELLED, target_type="study judge run", target_id=run.pk,
                 target=f"study judge run #{run.pk}", detail={"kind": "study judge run", "status": [was, "cancelled"]})
    return True


def _study_answers_store(*, run: StudyJudgeRun, rater: StudyRater,
                         answers: list[tuple[Call, CallResult]]) -> bool:
    """Store a batch of the judge's answers as scores and add their calls, tokens, cost and failures to the run's
    counts (one transaction); True when the run was asked to stop."""
    scores: list[StudyScore] = []
    failures: Counter[str] = Counter()
    prompt = completion = 0
    cost = Decimal(0)
    for call, result in answers:
        prompt += result.prompt_tokens or 0
        completion += result.completion_tokens or 0
        cost += result.cost or Decimal(0)
        if not result.ok:
            failures[result.error_class or "error"] += 1
            continue
        try:
            value = parse_study_score(result.content, low=call.low, high=call.high)
        except ValueError:
            failures["parse"] += 1
            continue
        scores.append(StudyScore(item_id=call.item_id, dimension_id=call.dimension_id, rater=rater, value=value))
    with transaction.atomic():
        StudyScore.objects.bulk_create(scores, ignore_conflicts=True)
        locked = StudyJudgeRun.objects.select_for_update().get(pk=run.pk)
        merged = Counter(locked.errors or {})
        merged.update(failures)
        StudyJudgeRun.objects.filter(pk=run.pk).update(
            scored=F("scored") + len(scores), failed=F("failed") + sum(failures.values()),
            prompt_tokens=F("prompt_tokens") + prompt, completion_tokens=F("completion_tokens") + completion,
            cost=F("cost") + cost, errors=dict(merged), heartbeat_at=timezone.now())
    return locked.cancel_requested


def study_judge_run_execute(*, run: StudyJudgeRun, client_options: ClientOptions | None = None,
                            on_progress: Callable[[int, int], None] | None = None) -> StudyJudgeRun:
    """Run a queued run to its end (or until cancelled); safe to call twice (the second does nothing)."""
    if not StudyJudgeRun.objects.filter(pk=run.pk, status=StudyJudgeRun.Status.QUEUED).update(
            status=StudyJudgeRun.Status.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()):
        run.refresh_from_db()
        return run
    try:
        calls = pending_calls(run=run)
        rater, _ = StudyRater.objects.get_or_create(study=run.study, name=run.model,
                                                    defaults={"kind": StudyRater.Kind.JUDGE})
        StudyJudgeRun.objects.filter(pk=run.pk).update(total=len(calls))
        config = PipelineConfig.from_settings(base_url=run.base_url)
    except Exception as exc:
        StudyJudgeRun.objects.filter(pk=run.pk).update(status=StudyJudgeRun.Status.FAILED, finished_at=timezone.now(),
                                                       error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    chat = ChatThread(calls, config=config, base_url=config.base_url, client_options=client_options,
                      name=f"study-judge-{run.pk}",
                      payload=lambda call: json_chat_payload(model=run.model, system=call.system, user=call.user,
                                                             max_tokens=200))
    buffer: list[tuple[Call, CallResult]] = []
    done = 0
    cancelled = False

    def flush() -> bool:
        """Store the buffered answers; True when the run was asked to stop."""
        nonlocal buffer, done
        stop = _study_answers_store(run=run, rater=rater, answers=buffer)
        done += len(buffer)
        buffer = []
        if on_progress:
            on_progress(done, len(calls))
        return stop

    last = beat = time.monotonic()
    with chat:
        while True:
            try:
                entry = chat.out.get(timeout=FLUSH_SECONDS)
            except queue.Empty:
                entry = ()
            if entry is None:
                break
            if entry:
                buffer.append(entry)
            if buffer and (len(buffer) >= BATCH or time.monotonic() - last >= FLUSH_SECONDS):
                last = time.monotonic()
                if flush():
                    cancelled = True
                    chat.stop.set()
            elif not entry and time.monotonic() - beat >= HEARTBEAT_SECONDS:  # waiting (a long Retry-After)
                beat = time.monotonic()
                StudyJudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
            elif not entry and StudyJudgeRun.objects.filter(pk=run.pk, cancel_requested=True).exists():
                cancelled = True
                chat.stop.set()
        if buffer:
            flush()
    status = (StudyJudgeRun.Status.FAILED if chat.crashed else
              StudyJudgeRun.Status.CANCELLED if cancelled else StudyJudgeRun.Status.FINISHED)
    StudyJudgeRun.objects.filter(pk=run.pk).update(status=status, finished_at=timezone.now(), error=chat.error)
    run.refresh_from_db()
    return run


class StudyJudgeRunOutcome(TypedDict):
    """What the worker records as the task's result (JSON)."""

    run: int
    status: str
    scored: int
    failed: int


@task()
def study_judge_run_task(run_id: int) -> StudyJudgeRunOutcome:
    run = study_judge_run_execute(run=StudyJudgeRun.objects.select_related("study").get(pk=run_id))
    return {"run": run.pk, "status": run.status, "scored": run.scored, "failed": run.failed}


@transaction.atomic
def study_judge_run_start(*, study: Study, model: str, requested_by: User | None, **options: Any) -> StudyJudgeRun:
    """Record a run and hand it to the worker once the request commits."""
    run = study_judge_run_request(study=study, model=model, requested_by=requested_by, **options)
    transaction.on_commit(lambda: study_judge_run_task.enqueue(run.pk))
    return run
