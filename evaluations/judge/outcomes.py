"""Plain data passed from the judging event loop to the database writer (no ORM objects cross threads)."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class ScoreRecord:
    key: str
    raw_score: int
    reasoning: str
    consistency_flag: bool = False


@dataclass
class ResultRecord:
    """One judge model's verdict on one response (a future JudgeResult row and its JudgeScore rows)."""

    role: str
    judge_model: str
    status: str
    error_class: str = ""
    error_message: str = ""
    http_status: int | None = None
    attempts: int = 0
    raw_response: str = ""
    composite: Decimal | None = None
    consistency_flag: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: Decimal | None = None
    latency_ms: int | None = None
    retry_wait_ms: int = 0
    scores: list[ScoreRecord] = field(default_factory=list)


@dataclass(frozen=True)
class CallSpend:
    """What one answered (or given-up) call cost: its HTTP attempts and the usage its answer reported.

    The event loop sends one as soon as a call ends, before the item's results; the database thread counts it in
    the run at once, in its own small write, so a worker that dies before the item's results are stored has still
    counted the call (the item is then sent again, and that call counted too)."""

    attempts: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)


@dataclass
class ItemOutcome:
    """Everything the judges produced for one response; stored in one transaction, or not at all."""

    response_id: int
    results: list[ResultRecord] = field(default_factory=list)
    auth_error: bool = False  # a 401 anywhere: nothing is stored and the run stops

    @property
    def decisive(self) -> ResultRecord | None:
        """The result the leaderboard uses: secondary (self-preference), else fallback, else primary."""
        by_role = {r.role: r for r in self.results}
        return by_role.get("secondary") or by_role.get("fallback") or by_role.get("primary")

    @property
    def calls(self) -> int:
        return sum(r.attempts for r in self.results)
