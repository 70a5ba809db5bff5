"""What happened to a judge run, in words: its state, the reason when it failed, the fix, and its error counts
explained (calls vs items). One function decides it for the run page, the run list and the worker's last word, so
a run that ends with nothing scored says *failed* everywhere, with the same reason."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address
from urllib.parse import urlsplit

from django.db.models import Count, Exists, OuterRef, Q, Sum

from ..domain import ErrorClass
from ..models import JudgeResult, JudgeRun, PairwiseJudgment, PairwiseRun
from .config import setting

API_KEY_SETTING = "FAITHBENCH_LLM_API_KEY"
BASE_URL_SETTING = "FAITHBENCH_LLM_BASE_URL"
FAKE_ENDPOINT_HINT = ("for an offline trial, start the fake endpoint (python -m evaluations.judge.fake_server --port "
                      f"8765) and set {BASE_URL_SETTING}=http://127.0.0.1:8765/v1")
ROLE_NAMES = {"primary": "primary judge", "fallback": "fallback judge", "secondary": "secondary judge"}


def api_key_configured() -> bool:
    """Whether the judge pipeline has an API key (settings.FAITHBENCH['LLM_API_KEY'] or FAITHBENCH_LLM_API_KEY)."""
    return bool(str(setting("LLM_API_KEY") or "").strip())


def endpoint_is_local(base_url: str) -> bool:
    """A loopback endpoint (the fake server, a local model server): it may well need no API key."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Failure:
    """Why a run failed and what to do about it."""

    reason: str
    fix: str


def failure_explained(*, error_classes: Mapping[str, int], base_url: str, primary_model: str, has_key: bool,
                      auth_error: bool = False) -> Failure:
    """The reason and the fix for a run that scored nothing, from its failed results' error classes (pure)."""
    no_key = (f"No API key is configured ({API_KEY_SETTING} is empty)" if not has_key else "")
    key_fix = (f"Set {API_KEY_SETTING} in the environment of the web server and the worker (or "
               "settings.FAITHBENCH['LLM_API_KEY']), restart them, then press Retry.")
    if auth_error:
        if not has_key:
            return Failure(f"{no_key}: the endpoint {base_url} answered 401 Unauthorized.", key_fix)
        return Failure(f"The endpoint {base_url} refused the API key (401 Unauthorized).",
                       f"Check {API_KEY_SETTING} (a valid key for this endpoint), restart the worker, then press Retry.")
    dominant = max(error_classes.items(), key=lambda kv: (kv[1], kv[0]))[0] if error_classes else ""
    if dominant in (ErrorClass.CONNECTION_ERROR, ErrorClass.TIMEOUT):
        what = "could not be reached" if dominant == ErrorClass.CONNECTION_ERROR else "did not answer in time"
        reason = f"The endpoint {base_url} {what} ({dominant} on every retry)."
        if not has_key and not endpoint_is_local(base_url):
            reason = f"{no_key}, and the endpoint {base_url} {what} ({dominant})."
            return Failure(reason, f"{key_fix} Check the network too; {FAKE_ENDPOINT_HINT}.")
        return Failure(reason, f"Check the network and {BASE_URL_SETTING}; then press Retry. Or {FAKE_ENDPOINT_HINT}.")
    if dominant == ErrorClass.NOT_FOUND:
        return Failure(f"The endpoint {base_url} does not know the judge model {primary_model} (404).",
                       "Start a run with a model name the endpoint lists (FAITHBENCH_JUDGE_PRIMARY_MODEL sets the "
                       "default), or check " + BASE_URL_SETTING + ".")
    if dominant == ErrorClass.BAD_REQUEST:
        return Failure(f"The endpoint {base_url} refused the requests (400 Bad Request).",
                       "Read one result's error message in the admin (Judge results); the model may not accept "
                       "JSON output or the token limit.")
    if dominant == ErrorClass.RATE_LIMITED:
        return Failure("The endpoint kept answering 429 Too Many Requests after every retry.",
                       "Wait, lower FAITHBENCH_MAX_IN_FLIGHT, then press Retry.")
    if dominant in (ErrorClass.SERVER_ERROR, ErrorClass.HTTP_ERROR):
        return Failure(f"The endpoint {base_url} kept answering with server errors.", "Try again later: press Retry.")
    if dominant == ErrorClass.PARSE_ERROR:
        return Failure("The judge's answers could not be read as the rubric's JSON scores.",
                       "Read a raw answer in the admin (Judge results); another judge model may follow the format.")
    reason = f"Every item failed ({dominant or 'no error recorded'})."
    return Failure(f"{no_key}. {reason}" if no_key and not endpoint_is_local(base_url) else reason,
                   key_fix if not has_key else "Read the results' error messages in the admin, then press Retry.")


def judge_run_failure(*, run: JudgeRun, has_key: bool | None = None) -> Failure:
    """`failure_explained` for a stored run (one query for its error classes)."""
    error_classes = dict(JudgeResult.objects.filter(run=run).exclude(error_class="").values_list("error_class")
                         .annotate(n=Count("id")).values_list("error_class", "n"))
    return failure_explained(error_classes=error_classes, base_url=run.base_url, primary_model=run.primary_model,
                             has_key=api_key_configured() if has_key is None else has_key,
                             auth_error=run.flagged_auth_error)


@dataclass(frozen=True)
class ErrorBreakdown:
    """The failed calls of a run (a *call* is one judge asked about one item, retries included; an *item* is one
    response, which may need two calls: the primary judge, then the fallback or the secondary judge)."""

    failed_calls: int = 0
    attempts: int = 0  # HTTP attempts of those failed calls
    items: int = 0  # distinct items with a failed call
    items_rescued: int = 0  # of which the fallback (or secondary) judge then scored
    by_class: dict[str, int] = field(default_factory=dict)
    by_role: dict[str, int] = field(default_factory=dict)

    def sentence(self, *, max_attempts: int) -> str:
        if not self.failed_calls:
            return "none"
        roles = ", ".join(f"{ROLE_NAMES.get(role, role)} {n}" for role, n in self.by_role.items())
        classes = ", ".join(f"{name} {n}" for name, n in self.by_class.items())
        text = (f"{self.failed_calls} failed call{'s' if self.failed_calls != 1 else ''} over "
                f"{self.items} item{'s' if self.items != 1 else ''} ({roles}; {self.attempts} HTTP attempts, each "
                f"call tried up to {max_attempts} times): {classes}")
        if self.items_rescued:
            text += f"; {self.items_rescued} of these items were then scored by another judge"
        return text + "."


def judge_run_errors(*, run: JudgeRun) -> ErrorBreakdown:
    """The run's failed calls by error class and judge role, and the items they concern (one query, two when some
    call failed)."""
    failed = JudgeResult.objects.filter(run=run).exclude(error_class="")
    rows = list(failed.values("error_class", "role").annotate(n=Count("id"), attempts=Sum("attempts"))
                .order_by().values_list("error_class", "role", "n", "attempts"))
    if not rows:
        return ErrorBreakdown()
    by_class: dict[str, int] = {}
    by_role: dict[str, int] = {}
    for error_class, role, n, _ in rows:
        by_class[error_class] = by_class.get(error_class, 0) + n
        by_role[role] = by_role.get(role, 0) + n
    order = list(ROLE_NAMES)
    scored_too = JudgeResult.objects.filter(run=run, response_id=OuterRef("response_id"),
                                            status=JudgeResult.Status.SCORED)
    items = failed.aggregate(items=Count("response_id", distinct=True),
                             rescued=Count("response_id", distinct=True, filter=Q(Exists(scored_too))))
    return ErrorBreakdown(
        failed_calls=sum(r[2] for r in rows), attempts=sum(r[3] or 0 for r in rows), items=items["items"],
        items_rescued=items["rescued"],
        by_class=dict(sorted(by_class.items(), key=lambda kv: (-kv[1], kv[0]))),
        by_role=dict(sorted(by_role.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 9)))


@dataclass(frozen=True)
class RunOutcome:
    """A run's state in words, with the actions that make sense now."""

    state: str  # queued / running / cancelling / finished / finished_with_failures / failed / cancelled / stopped
    headline: str
    tone: str  # ok / warn / bad / info
    reason: str = ""
    fix: str = ""
    pending: int = 0
    can_cancel: bool = False
    can_resume: bool = False  # items without a result can be sent
    retryable: int = 0  # failed items that "retry failed items" would send again


def judge_run_outcome(*, run: JudgeRun, has_key: bool | None = None, explain: bool = True) -> RunOutcome:
    """The run's outcome from its counters (and, for a failed run, its failed results' error classes; `explain=False`
    leaves the reason out and needs no query, for lists)."""
    has_key = api_key_configured() if has_key is None else has_key
    total, scored, failed = run.total_items, run.scored_items, run.failed_items
    pending = max(0, total - run.processed_items)
    counts = f"{scored} of {total} scored" + (f", {failed} failed" if failed else "") + (
        f", {run.filtered_items} filtered" if run.filtered_items else "") + (f", {pending} pending" if pending else "")
    status = run.status
    if status == JudgeRun.Status.QUEUED:
        return RunOutcome("queued", f"Queued — waiting for a worker ({counts})", "info", pending=pending,
                          can_cancel=True)
    if status == JudgeRun.Status.RUNNING:
        return RunOutcome("running", f"Running — {counts}", "info", pending=pending, can_cancel=True)
    if status == JudgeRun.Status.CANCELLING:
        return RunOutcome("cancelling", f"Cancelling — finishing the calls in flight ({counts})", "warn",
                          pending=pending)
    if status == JudgeRun.Status.CANCELLED:
        return RunOutcome("cancelled", f"Cancelled — {counts}", "warn", reason=run.error_message, pending=pending,
                          can_resume=pending > 0, retryable=failed,
                          fix="Resume sends the items without a result." if pending else "")
    nothing_scored = scored == 0 and (failed > 0 or run.flagged_auth_error)
    if status == JudgeRun.Status.FAILED or nothing_scored:
        if not explain:
            reason, fix = "", ""
        elif run.flagged_auth_error or failed or not run.error_message:
            explained = judge_run_failure(run=run, has_key=has_key)
            reason, fix = explained.reason, explained.fix
        else:  # the worker crashed with an exception: its message is the reason
            reason, fix = run.error_message, "Press Retry to send the items without a result again."
        return RunOutcome("failed", f"Failed — {counts}", "bad", reason=reason, fix=fix, pending=pending,
                          can_resume=pending > 0, retryable=failed)
    if failed or pending:
        return RunOutcome("finished_with_failures", f"Finished — {counts}", "warn",
                          reason=f"{failed} item{'s' if failed != 1 else ''} failed after every retry and fallback; "
                                 "they are excluded from scores." if failed else "",
                          fix="Retry sends the failed items again." if failed else "", pending=pending,
                          can_resume=pending > 0, retryable=failed)
    return RunOutcome("finished", f"Finished — {counts}", "ok")


def pairwise_run_outcome(*, run: PairwiseRun, has_key: bool | None = None) -> RunOutcome:
    """A pairwise run's state in words: a run whose every call failed is *failed*, with the reason and the fix."""
    has_key = api_key_configured() if has_key is None else has_key
    pending = max(0, run.total - run.done)
    counts = f"{run.done - run.failed} of {run.total} calls with a verdict" + (
        f", {run.failed} failed" if run.failed else "") + (f", {pending} not sent" if pending else "")
    if run.status == PairwiseRun.Status.QUEUED:
        return RunOutcome("queued", f"Queued — waiting for a worker ({counts})", "info", pending=pending)
    if run.status == PairwiseRun.Status.RUNNING:
        return RunOutcome("running", f"Running — {counts}", "info", pending=pending)
    classes: dict[str, int] = {}
    for error in PairwiseJudgment.objects.filter(run=run).exclude(error="").values_list("error", flat=True):
        name = error.split(":", 1)[0]
        classes[name] = classes.get(name, 0) + 1
    if run.status == PairwiseRun.Status.FAILED or (run.done and run.failed == run.done):
        if run.failed:
            failure = failure_explained(error_classes=classes, base_url=run.base_url, primary_model=run.model,
                                        has_key=has_key, auth_error=classes.get(ErrorClass.AUTH, 0) == run.failed)
            reason, fix = failure.reason, failure.fix
        else:
            reason, fix = run.error or "The run stopped.", "Press Retry."
        return RunOutcome("failed", f"Failed — {counts}", "bad", reason=reason, fix=fix, pending=pending,
                          can_resume=True, retryable=run.failed)
    if run.failed or pending:
        return RunOutcome("finished_with_failures", f"Finished — {counts}", "warn",
                          reason=f"{run.failed} call(s) failed or could not be read: their pairs are left out of the "
                                 "position check." if run.failed else "",
                          fix="Retry sends them again.", pending=pending, can_resume=True, retryable=run.failed)
    return RunOutcome("finished", f"Finished — {counts}", "ok")
