"""Executing a judge run: an asyncio event loop sends requests, the calling thread owns the database.

Threads: the thread that calls ``judge_run_execute`` (the django-tasks worker, or ``judge_run --wait``)
reads the pending items, then starts one background thread running the event loop. The loop never
touches the database; it puts each finished item (an ItemOutcome, plain data) on a queue. The calling
thread drains the queue and stores items in batches (one transaction per batch, ``WRITE_BATCH_SIZE``
items or ``WRITE_FLUSH_SECONDS``, whichever comes first), checks for cancellation, and reports progress.

Crash safety: an item's results are committed together, so after a crash an item either has results
(finished; never sent again) or none (sent again on resume). At most one unflushed batch is lost.

Database outages: a write that loses its connection (the database restarting, a network blip) is tried again, with
backoff, for as long as the run's lease lasts (``STALE_RUN_SECONDS`` since the run's last write, less a margin);
meanwhile the requests go on and their outcomes wait in memory. A batch whose commit may have gone through before the
error is stored again without the items that already have results, so nothing is stored twice. Past the lease,
another worker may take the run back, so this one stops (the error is raised; docs/deployment.md, "The task worker through database outages").

Accounting: every call is counted in the run (HTTP attempts, tokens, cost) when it ends, apart from its item's
results: the loop puts a CallSpend on the queue before the item's outcome, and the database thread commits the
calls it has received every ``COUNT_FLUSH_SECONDS`` and always before a batch of results. A call whose answer
arrived before a crash is therefore counted although its item is sent again on resume (and that call counted too).
"""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar, Unpack

from django.db import InterfaceError, OperationalError, connections

from ..models import JudgeResult, JudgeRun
from .client import CallResult, ClientOptions, LLMClient
from .config import PipelineConfig, RunOverrides, judge_family, judge_payload, money, setting
from .consistency import contradiction
from .errors import FALLBACK_TRIGGERS, ErrorClass
from .leaderboard import case_composite
from .outcomes import CallSpend, ItemOutcome, ResultRecord, ScoreRecord
from .parsing import JudgeParseError, parse_judge_scores
from .prompts import judge_system_prompt, judge_user_message, rubric_prompt_sections
from .selectors import RunSummary, judge_run_pending_responses, judge_run_summary
from .services import (
    judge_results_store,
    judge_run_count_calls,
    judge_run_finish,
    judge_run_heartbeat,
    judge_run_mark_running,
)
from .status import failure_explained, judge_run_failure

logger = logging.getLogger(__name__)

SIX_PLACES = Decimal("0.000001")
CANCEL_CHECK_SECONDS = 1.0
# How long an answered call may wait before it is counted in the run (a small UPDATE of its counters).
COUNT_FLUSH_SECONDS = 0.1
_DONE = object()

Progress = Callable[[int, int], None]
OnCall = Callable[[CallSpend], None]
DISCONNECTS = (OperationalError, InterfaceError)  # what a restarting or unreachable database raises
LEASE_MARGIN = 0.8  # stop retrying once 80 % of the lease has passed since the run's last write
MAX_RETRY_WAIT = 2.0
T = TypeVar("T")


class RunLease:
    """The run's database writes, tried again through a lost connection while the run's lease lasts."""

    def __init__(self, *, seconds: float, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.sleep, self.clock = seconds, sleep, clock
        self.renewed = clock()
        self.outages = 0

    def call(self, write: Callable[[int], T], *, what: str) -> T:
        """`write(attempt)` (attempt 0 first), again after each lost connection until the lease runs out."""
        delay, attempt = 0.25, 0
        while True:
            try:
                result = write(attempt)
            except DISCONNECTS as exc:
                in_transaction = any(c.in_atomic_block for c in connections.all(initialized_only=True))
                if in_transaction or self.clock() + delay > self.renewed + self.seconds * LEASE_MARGIN:
                    raise
                logger.warning("judge run: the database is unreachable while %s (%s); trying again in %.2f s",
                               what, type(exc).__name__, delay)
                self.outages += attempt == 0
                connections.close_all()  # this thread's broken connection; the next query reconnects
                self.sleep(delay)
                delay, attempt = min(MAX_RETRY_WAIT, delay * 2), attempt + 1
                continue
            self.renewed = self.clock()
            return result


@dataclass(frozen=True)
class WorkItem:
    """One response to judge, with its prompts already built (plain data for the event loop)."""

    response_id: int
    system_prompt: str
    user_message: str
    sub_keys: tuple[str, ...]
    sub_weights: dict[str, Decimal]
    needs_secondary: bool


def work_items(*, run: JudgeRun) -> list[WorkItem]:
    """The run's pending items with prompts built from its rubric version (methodology §5.3.3–5.3.4)."""
    sections = rubric_prompt_sections(run.rubric)
    system_prompts = {key: judge_system_prompt(section=key, sub_dimensions=subs) for key, subs in sections.items()}
    weights = {key: {s.key: s.weight for s in subs} for key, subs in sections.items()}
    keys = {key: tuple(s.key for s in subs) for key, subs in sections.items()}
    primary_family = judge_family(run.primary_model)
    responses = (
        judge_run_pending_responses(run=run)
        .select_related("test_case__tradition", "model")
        .only("id", "text", "test_case__dimension", "test_case__prompt", "test_case__reference_answer",
              "test_case__language",
              "test_case__tradition__name", "model__name", "model__family")
    )
    items = []
    for response in responses.iterator(chunk_size=2000):
        case = response.test_case
        family = (response.model.family or judge_family(response.model.name)).lower()
        items.append(WorkItem(
            response_id=response.pk,
            system_prompt=system_prompts[case.dimension],
            user_message=judge_user_message(
                question=case.prompt, response=response.text, reference_answer=case.reference_answer,
                tradition=case.tradition.name if case.tradition else "",
                language=case.language,
            ),
            sub_keys=keys[case.dimension],
            sub_weights=weights[case.dimension],
            needs_secondary=bool(run.secondary_model and primary_family and family == primary_family),
        ))
    return items


def result_from_call(*, call: CallResult, item: WorkItem, model: str, role: str) -> ResultRecord:
    """Turn one call's outcome into a result: scored, parse_error, filtered or failed (with its class)."""
    record = ResultRecord(
        role=role, judge_model=model, status=JudgeResult.Status.FAILED, http_status=call.http_status,
        attempts=call.attempts, prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
        cost=call.cost, latency_ms=round(call.elapsed * 1000), retry_wait_ms=round(sum(call.waits) * 1000),
    )
    if not call.ok:
        record.error_class, record.error_message = call.error_class, call.error_message
        record.raw_response = call.raw_body[:20000]
        if call.error_class == ErrorClass.FILTERED:
            record.status = JudgeResult.Status.FILTERED
        elif call.error_class == ErrorClass.PARSE_ERROR:
            record.status = JudgeResult.Status.PARSE_ERROR
        return record
    record.raw_response = call.content
    try:
        parsed = parse_judge_scores(call.content, expected=item.sub_keys)
    except JudgeParseError as exc:
        record.status, record.error_class, record.error_message = (
            JudgeResult.Status.PARSE_ERROR, ErrorClass.PARSE_ERROR, str(exc)
        )
        return record
    record.scores = [
        ScoreRecord(p.key, p.raw_score, p.reasoning, contradiction(p.raw_score, p.reasoning) is not None)
        for p in parsed
    ]
    raw = {p.key: p.raw_score for p in parsed}
    record.composite = case_composite(raw_scores=raw, sub_weights=item.sub_weights).quantize(SIX_PLACES)
    record.consistency_flag = any(s.consistency_flag for s in record.scores)
    record.status = JudgeResult.Status.SCORED
    return record


def call_spend(call: CallResult) -> CallSpend:
    """What a finished call adds to its run's counters."""
    return CallSpend(attempts=call.attempts, prompt_tokens=call.prompt_tokens or 0,
                     completion_tokens=call.completion_tokens or 0, cost=call.cost or Decimal(0))


async def _judge(client: LLMClient, item: WorkItem, model: str, role: str, config: PipelineConfig,
                 on_call: OnCall | None) -> ResultRecord:
    payload = judge_payload(model=model, system_prompt=item.system_prompt, user_message=item.user_message, config=config)
    call = await client.chat(payload)
    if on_call is not None:
        on_call(call_spend(call))
    return result_from_call(call=call, item=item, model=model, role=role)


async def judge_item(client: LLMClient, item: WorkItem, config: PipelineConfig,
                     on_call: OnCall | None = None) -> ItemOutcome:
    """Primary judge (then the fallback on an HTTP error), plus the secondary judge for self-preference.

    When the secondary judge is also the fallback judge (the default), one call serves both: an item the secondary
    judge is asked about does not ask the same model again after a primary failure; the secondary result decides
    the item either way (methodology §5.3.2). on_call(spend) is called as each call ends, before the outcome."""
    secondary_serves_as_fallback = item.needs_secondary and config.secondary_model == config.fallback_model

    async def primary_chain() -> list[ResultRecord]:
        primary = await _judge(client, item, config.primary_model, JudgeResult.Role.PRIMARY, config, on_call)
        chain = [primary]
        if (primary.status == JudgeResult.Status.FAILED and primary.error_class in FALLBACK_TRIGGERS
                and config.fallback_model and not secondary_serves_as_fallback):
            chain.append(await _judge(client, item, config.fallback_model, JudgeResult.Role.FALLBACK, config, on_call))
        return chain

    if item.needs_secondary:
        chain, secondary = await asyncio.gather(
            primary_chain(), _judge(client, item, config.secondary_model, JudgeResult.Role.SECONDARY, config, on_call)
        )
        results = [*chain, secondary]
    else:
        results = await primary_chain()
    auth = any(r.error_class == ErrorClass.AUTH for r in results)
    return ItemOutcome(response_id=item.response_id, results=[] if auth else results, auth_error=auth)


async def _dispatch(
    items: Sequence[WorkItem], *, config: PipelineConfig, client_options: ClientOptions,
    emit: Callable[[ItemOutcome], None], stop: threading.Event, on_call: OnCall | None = None,
) -> None:
    async with LLMClient(
        base_url=config.base_url, api_key=config.api_key, max_in_flight=config.max_in_flight,
        retry=config.retry, timeout=config.timeout, **client_options,
    ) as client:
        iterator = iter(items)

        async def worker() -> None:
            for item in iterator:  # shared by all workers; the loop is single-threaded
                if stop.is_set():
                    return
                outcome = await judge_item(client, item, config, on_call)
                emit(outcome)
                if outcome.auth_error:
                    stop.set()
                    return

        await asyncio.gather(*(worker() for _ in range(max(1, min(config.max_in_flight, len(items))))))


def _loop_thread(items: Sequence[WorkItem], config: PipelineConfig, client_options: ClientOptions,
                 out: queue.SimpleQueue, stop: threading.Event, errors: list[BaseException],
                 budget_left: Decimal | None = None) -> None:
    spent = Decimal(0)

    def emit(outcome: ItemOutcome) -> None:
        # The loop stops taking new items once the answers received have used the budget up (the database thread
        # checks the committed cost too): what still arrives is only what was in flight.
        nonlocal spent
        out.put(outcome)
        if budget_left is not None:
            spent += sum((r.cost or Decimal(0) for r in outcome.results), Decimal(0))
            if spent >= budget_left:
                stop.set()

    try:
        asyncio.run(_dispatch(items, config=config, client_options=client_options, emit=emit, stop=stop,
                              on_call=out.put))
    except BaseException as exc:  # handed to the database thread, which decides the run's fate
        errors.append(exc)
    finally:
        out.put(_DONE)


def run_config(run: JudgeRun, **overrides: Unpack[RunOverrides]) -> PipelineConfig:
    """The pipeline configuration for a run: settings, with the run's recorded endpoint and judges."""
    return PipelineConfig.from_settings(
        base_url=run.base_url, primary_model=run.primary_model, fallback_model=run.fallback_model,
        secondary_model=run.secondary_model, **overrides,
    )


@dataclass
class _RunLoop:
    """The database side of a run: takes the loop thread's messages, stores results in batches, counts calls,
    renews the lease and watches for cancellation and the budget."""

    run: JudgeRun
    config: PipelineConfig
    lease: RunLease
    out: queue.SimpleQueue
    stop: threading.Event
    on_progress: Progress | None
    after_store: Callable[[int], None] | None
    done_before: int
    next_check: float
    stored: int = 0
    auth_failed: bool = False
    cancelled: bool = False
    interrupted: bool = False
    over_budget: bool = False
    buffer: list[ItemOutcome] = field(default_factory=list)
    spends: list[CallSpend] = field(default_factory=list)
    flush_at: float | None = None
    count_at: float | None = None

    def count_calls(self) -> None:
        if self.spends:
            batch = self.spends
            self.lease.call(lambda _: judge_run_count_calls(run=self.run, spends=batch), what="counting calls")
            self.spends, self.count_at = [], None

    def flush(self) -> None:
        run = self.run
        self.count_calls()  # a result is never committed before its calls are counted
        if self.buffer:
            self.lease.call(lambda attempt: _store(run=run, outcomes=self.buffer, retry=attempt > 0),
                            what="storing results")
            self.stored += len(self.buffer)
            if run.budget is not None and not self.over_budget:  # stop sending once the budget is spent
                spent = self.lease.call(
                    lambda _: JudgeRun.objects.filter(pk=run.pk).values_list("cost", flat=True).get(),
                    what="reading the cost")
                if spent >= run.budget:
                    self.over_budget = True
                    self.stop.set()
            self.buffer, self.flush_at = [], None
            if self.on_progress:
                self.on_progress(self.done_before + self.stored, run.total_items)
            if self.after_store:
                self.after_store(self.stored)

    def _receive(self, message: object) -> bool:
        """Take one message of the loop thread; True once the loop is done."""
        if message is _DONE:
            return True
        if isinstance(message, CallSpend):
            self.spends.append(message)
            self.count_at = self.count_at or time.monotonic() + COUNT_FLUSH_SECONDS
        elif isinstance(message, ItemOutcome):
            if message.auth_error:
                self.auth_failed = True
                self.stop.set()
            else:
                self.buffer.append(message)
                self.flush_at = self.flush_at or time.monotonic() + self.config.write_flush_seconds
        return False

    def _heartbeat(self, now: float) -> None:
        self.next_check = now + CANCEL_CHECK_SECONDS
        status = self.lease.call(lambda _: judge_run_heartbeat(run=self.run), what="renewing the lease")
        if status == JudgeRun.Status.CANCELLING and not self.stop.is_set():
            self.cancelled = True
            self.stop.set()

    def run_until_done(self) -> None:
        """Receive until the loop thread is done, flushing a batch when it is full or old enough."""
        if self.on_progress:
            self.on_progress(self.done_before, self.run.total_items)
        finished = False
        while not finished:
            now = time.monotonic()
            wait = max(0.0, min(self.next_check, self.flush_at or self.next_check, self.count_at or self.next_check)
                       - now)
            try:
                message = self.out.get(timeout=wait)
            except queue.Empty:
                message = None
            finished = self._receive(message)
            now = time.monotonic()
            if self.buffer and (finished or len(self.buffer) >= self.config.write_batch_size
                                or (self.flush_at and now >= self.flush_at)):
                self.flush()
            elif self.spends and (finished or (self.count_at and now >= self.count_at)):
                self.count_calls()
            if now >= self.next_check:
                self._heartbeat(now)


def _judge_run_settle(run: JudgeRun, config: PipelineConfig, loop: _RunLoop, errors: list[BaseException]) -> None:
    """The run's final status once its loop has ended: failed, stopped at its budget, cancelled or finished."""
    if errors:
        error = errors[0]
        judge_run_finish(run=run, status=JudgeRun.Status.FAILED, error_message=f"{type(error).__name__}: {error}")
    elif loop.auth_failed:
        failure = failure_explained(error_classes={}, base_url=run.base_url, primary_model=run.primary_model,
                                    has_key=bool(config.api_key), auth_error=True)
        judge_run_finish(
            run=run, status=JudgeRun.Status.FAILED, flagged_auth_error=True,
            error_message=f"{failure.reason} The run stopped. {failure.fix} (Or: manage.py judge_run --resume "
                          f"{run.pk}.)",
        )
    elif loop.over_budget and not loop.cancelled and not loop.interrupted:
        spent = JudgeRun.objects.filter(pk=run.pk).values_list("cost", flat=True).get()
        judge_run_finish(
            run=run, status=JudgeRun.Status.CANCELLED,
            error_message=f"Stopped at its budget: {money(spent)} spent of {money(run.budget)} (calls in flight "
                          f"finished). Resume with a higher budget to go on: manage.py judge_run --resume {run.pk} "
                          "--budget AMOUNT.")
    elif loop.cancelled or loop.interrupted:
        judge_run_finish(run=run, status=JudgeRun.Status.CANCELLED,
                         error_message="Interrupted (Ctrl-C)." if loop.interrupted else "")
    else:
        loop.lease.call(lambda _: run.refresh_from_db(), what="finishing the run")
        if run.scored_items == 0 and run.failed_items > 0:  # nothing to show for it: a failure, with its reason
            failure = judge_run_failure(run=run, has_key=bool(config.api_key))
            judge_run_finish(run=run, status=JudgeRun.Status.FAILED, error_message=f"{failure.reason} {failure.fix}")
        else:
            loop.lease.call(lambda _: judge_run_finish(run=run, status=JudgeRun.Status.FINISHED),
                            what="finishing the run")


def judge_run_execute(
    *,
    run: JudgeRun,
    config_overrides: RunOverrides | None = None,
    client_options: ClientOptions | None = None,
    on_progress: Progress | None = None,
    after_store: Callable[[int], None] | None = None,
) -> RunSummary:
    """Execute a queued run to the end (or until cancelled, a 401, or an error); returns its summary.

    client_options go to LLMClient (tests inject ``sleep``, ``now`` or an httpx ``transport``);
    after_store(stored_so_far) is called after every committed batch (tests use it to simulate a crash).
    """
    lease = RunLease(seconds=float(setting("STALE_RUN_SECONDS")))
    if not lease.call(lambda _: judge_run_mark_running(run=run), what="starting the run"):
        logger.info("judge run %s is %s, not queued: nothing to do", run.pk, run.status)
        return judge_run_summary(run=run)
    try:
        config = run_config(run, **(config_overrides or {}))
        items = work_items(run=run)
    except Exception as exc:
        judge_run_finish(run=run, status=JudgeRun.Status.FAILED, error_message=f"{type(exc).__name__}: {exc}")
        raise
    logger.info("judge run %s: %d pending item(s) of %d", run.pk, len(items), run.total_items)
    out: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    errors: list[BaseException] = []
    budget_left = None if run.budget is None else run.budget - run.cost
    thread = threading.Thread(target=_loop_thread, args=(items, config, client_options or {}, out, stop, errors,
                                                         budget_left),
                              name=f"judge-run-{run.pk}", daemon=True)
    loop = _RunLoop(run=run, config=config, lease=lease, out=out, stop=stop, on_progress=on_progress,
                    after_store=after_store, done_before=run.processed_items,
                    next_check=time.monotonic() + CANCEL_CHECK_SECONDS)
    thread.start()
    try:
        loop.run_until_done()
    except KeyboardInterrupt:
        loop.interrupted = True
        stop.set()
        _drain_into(out, loop.buffer, loop.spends, thread)
        loop.flush()
    except Exception as exc:
        stop.set()
        thread.join(30)
        _count_leftovers(run, out, loop.spends)
        judge_run_finish(run=run, status=JudgeRun.Status.FAILED, error_message=f"{type(exc).__name__}: {exc}")
        raise
    except BaseException:  # the worker is going down (SystemExit, …): count the calls answered, store nothing more
        stop.set()
        thread.join(30)
        _count_leftovers(run, out, loop.spends)
        raise
    finally:
        stop.set()
        thread.join(60)
    _judge_run_settle(run, config, loop, errors)
    return judge_run_summary(run=run)


def _store(*, run: JudgeRun, outcomes: Sequence[ItemOutcome], retry: bool) -> None:
    """Store a batch; on a retry, without the items that have results already (the lost commit went through)."""
    if retry:
        done = set(JudgeResult.objects.filter(run=run, response_id__in=[o.response_id for o in outcomes])
                   .values_list("response_id", flat=True))
        if done:
            logger.warning("judge run %s: %d item(s) of the batch were stored before the connection was lost",
                           run.pk, len(done))
        outcomes = [o for o in outcomes if o.response_id not in done]
    judge_results_store(run=run, outcomes=outcomes, calls_counted=True)  # counted as they ended (count_calls)


def _drain_into(out: queue.SimpleQueue, buffer: list[ItemOutcome], spends: list[CallSpend],
                thread: threading.Thread) -> None:
    """After a stop: collect what the in-flight requests still deliver until the loop says it is done."""
    while True:
        try:
            message = out.get(timeout=120)
        except queue.Empty:
            return
        if message is _DONE:
            return
        if isinstance(message, CallSpend):
            spends.append(message)
        elif isinstance(message, ItemOutcome) and not message.auth_error:
            buffer.append(message)


def _count_leftovers(run: JudgeRun, out: queue.SimpleQueue, spends: list[CallSpend]) -> None:
    """When execution breaks off: count the calls already answered (those waiting and those on the queue), though
    their items' results will not be stored; a failure here is logged, never raised over the original error."""
    while True:
        try:
            message = out.get_nowait()
        except queue.Empty:
            break
        if isinstance(message, CallSpend):
            spends.append(message)
    try:
        judge_run_count_calls(run=run, spends=spends)
    except Exception:
        logger.exception("judge run %s: could not count %d answered call(s)", run.pk, len(spends))

