"""The benchmark's vocabulary and pure rules: enums, tokens, validators and checks shared by the models,
the import schemas and the judge. It imports no model, so everything else may import it."""
from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models

EXTERNAL_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}$"
external_id_validator = RegexValidator(
    EXTERNAL_ID_RE, "Use 1–64 characters: letters, digits, '.', '_', ':' or '-', starting with a letter or digit."
)
MASK_TOKEN = "[MASK]"


class Dimension(models.TextChoices):
    TEXTUAL = "textual", "Textual Analysis"
    HERMENEUTICAL = "hermeneutical", "Hermeneutical Reasoning"
    DOCTRINAL = "doctrinal", "Doctrinal Precision"
    HISTORICAL = "historical", "Historical Theology"
    APOLOGETICS = "apologetics", "Apologetics"
    INTERTEXTUAL = "intertextual", "Intertextual Reasoning"


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"
    EXPERT = "expert", "Expert"


class QuestionType(models.TextChoices):
    FACTUAL_RECALL = "factual_recall", "Factual recall"
    COMPARATIVE_ANALYSIS = "comparative_analysis", "Comparative analysis"
    APPLIED_REASONING = "applied_reasoning", "Applied reasoning"
    CONTESTED_TOPIC = "contested_topic", "Contested topic"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    HELD_OUT = "held_out", "Held-out"


class TheoBertType(models.TextChoices):
    DOCTRINAL_ASSOCIATION = "doctrinal_association", "Doctrinal association"
    CANONICAL_KNOWLEDGE = "canonical_knowledge", "Canonical knowledge"
    CONTRASTIVE_THEOLOGY = "contrastive_theology", "Contrastive theology"


class TheoBertCategory(models.TextChoices):
    PNEUMATOLOGY = "pneumatology", "Pneumatology"
    SOTERIOLOGY = "soteriology", "Soteriology"
    ECCLESIOLOGY = "ecclesiology", "Ecclesiology"
    HAMARTIOLOGY = "hamartiology", "Hamartiology"
    CHRISTOLOGY = "christology", "Christology"
    ESCHATOLOGY = "eschatology", "Eschatology"
    THEOLOGY_PROPER = "theology_proper", "Theology proper"
    CANONICAL_KNOWLEDGE = "canonical_knowledge", "Canonical knowledge"
    BIBLIOLOGY = "bibliology", "Bibliology"
    ROMANS_ROAD = "romans_road", "Romans road"
    SPIRITUAL_WARFARE = "spiritual_warfare", "Spiritual warfare"
    KINGDOM_THEOLOGY = "kingdom_theology", "Kingdom theology"


class TheoBertDifficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class PassCondition(models.TextChoices):
    TARGET_IN_TOP_K = "target_in_top_k", "Target in top-k"
    CORRECT_BEATS_FOIL = "correct_beats_foil", "Correct beats foil"
    ALL_TOP_K_IN_TARGET_SET = "all_top_k_in_target_set", "All top-k in target set"


class TheoBertErrorClass(models.TextChoices):
    """Why a masked-LM case failed (theobert-eval.md, "Error Classification")."""

    NEAR_MISS = "near_miss", "Near miss (ranked k+1 or k+2)"
    GENERIC_OVER_THEOLOGICAL = "generic_over_theological", "Generic over theological"
    WRONG_SEMANTIC_CLUSTER = "wrong_semantic_cluster", "Wrong semantic cluster"
    TOTAL_MISS = "total_miss", "Total miss (ranked below 20)"


class ErrorClass(models.TextChoices):
    """Why a call to the chat-completions endpoint did not produce a usable judgment."""

    RATE_LIMITED = "rate_limited", "Rate limit (429)"
    SERVER_ERROR = "server_error", "Server error (5xx)"
    TIMEOUT = "timeout", "Timeout (408 or client timeout)"
    CONNECTION_ERROR = "connection_error", "Connection error"
    AUTH = "auth", "Authentication (401)"
    FILTERED = "filtered", "Content filtered (403)"
    NOT_FOUND = "not_found", "Model not found (404)"
    BAD_REQUEST = "bad_request", "Invalid request (400)"
    HTTP_ERROR = "http_error", "Other HTTP error"
    PARSE_ERROR = "parse_error", "Judge error: unparseable output"


def theobert_semantic_errors(values: dict) -> list[tuple[str, str]]:
    """Rules of theobert-eval.md beyond field types: a [MASK], targets, and a foil for contrastive cases."""
    problems: list[tuple[str, str]] = []
    if MASK_TOKEN not in (values.get("input") or ""):
        problems.append(("input", f"must contain {MASK_TOKEN}"))
    if not values.get("targets"):
        problems.append(("targets", "must list at least one correct completion"))
    if values.get("pass_condition") == PassCondition.CORRECT_BEATS_FOIL and not values.get("foils"):
        problems.append(("foils", "pass_condition correct_beats_foil needs at least one foil"))
    return problems


# Query-string numbers. Ids are 64-bit (BigAutoField; SQLite's INTEGER is 64-bit too): a larger value
# overflows the database driver (a 500), so it is refused here. No list is longer than MAX_PAGE pages.
MAX_QUERY_ID = 2**63 - 1
MAX_PAGE = 100_000
# A form's count (a limit, a sample size): the database's 32-bit integer; larger values overflowed a query (a 500).
MAX_FORM_COUNT = 2**31 - 1


def query_whole_number(raw: str | None, *, maximum: int = MAX_QUERY_ID) -> int | None:
    """A query value as a whole number 1..maximum, or None (absent, not ASCII digits, or out of range).

    ASCII only: `"²".isdigit()` is true but `int("²")` fails, and `int("١٢")` is 12.
    Example: `query_whole_number("12")` is 12; `query_whole_number("9" * 30)` and `("abc")` are None.
    """
    if not raw or not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(maximum)):
        return None
    value = int(raw)
    return value if 1 <= value <= maximum else None


def query_page(raw: str | None) -> int | None:
    """A `?page=` value: 1 when absent or not a whole number (lenient, as Django's `get_page`), None past
    MAX_PAGE (the view answers 404: no list has that many pages)."""
    if not (raw and raw.isascii() and raw.isdigit()):
        return 1
    value = int(raw) if len(raw) <= len(str(MAX_PAGE)) else MAX_PAGE + 1
    return None if value > MAX_PAGE else max(1, value)
