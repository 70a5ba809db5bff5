"""The benchmark's vocabulary and pure rules: enums, tokens, validators and checks shared by the models,
the import schemas and the judge. It imports no model, so everything else may import it."""
from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_noop

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


# --- languages of cases and responses (issue 35) ---------------------------------------------------------------
# BCP 47 tags in the shapes cases use: language[-Script][-REGION][-variant…], e.g. en, es-419, ko-KR, sr-Latn-RS,
# grc, hbo, de-CH-1996, plus private use (x-…). `langcodes` is not a dependency: the primary subtag is checked
# against Django's list of languages (LANG_INFO) and the ancient and liturgical languages the methodology names.
STANDARD_CASE_LANGUAGE = "en"
ANCIENT_LANGUAGES = {"grc": "Ancient Greek", "hbo": "Ancient Hebrew", "arc": "Aramaic", "syc": "Classical Syriac",
                     "la": "Latin", "cop": "Coptic", "gez": "Ge'ez", "cu": "Church Slavonic", "hy": "Armenian"}
_TAG = re.compile(
    r"^(?P<language>[A-Za-z]{2,3})"
    r"(?:-(?P<script>[A-Za-z]{4}))?"
    r"(?:-(?P<region>[A-Za-z]{2}|[0-9]{3}))?"
    r"(?P<variants>(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*)"
    r"(?P<private>-x(?:-[A-Za-z0-9]{1,8})+)?$"
)


# A form's count (a limit, a sample size): the database's 32-bit integer; larger values overflowed a query (a 500).
MAX_FORM_COUNT = 2**31 - 1


def _known_languages() -> dict[str, str]:
    from django.conf.locale import LANG_INFO

    regional = {code.split("-")[0]: info["name"] for code, info in LANG_INFO.items() if "-" in code and "name" in info}
    plain = {code: info["name"] for code, info in LANG_INFO.items() if "-" not in code and "name" in info}
    return {**regional, **plain, **ANCIENT_LANGUAGES}


def language_tag_clean(value: str) -> str:
    """A BCP 47 tag in its canonical case (ko-kr → ko-KR, SR-LATN → sr-Latn); ValueError saying what is wrong."""
    tag = (value or "").strip().replace("_", "-")
    match = _TAG.match(tag)
    if not tag or match is None:
        raise ValueError(f"{value!r} is not a language tag (BCP 47, e.g. en, es-419, ko-KR, grc)")
    language = match["language"].lower()
    if language not in _known_languages():
        raise ValueError(f"unknown language {language!r} in {value!r} (BCP 47: en, es, de, ko, grc, hbo…)")
    parts = [language]
    if match["script"]:
        parts.append(match["script"].title())
    if match["region"]:
        parts.append(match["region"].upper())
    return "-".join(parts) + (match["variants"] or "").lower() + (match["private"] or "").lower()


def language_tag_validator(value: str) -> None:
    """Django validator for a model field holding a BCP 47 tag."""
    try:
        language_tag_clean(value)
    except ValueError as exc:
        raise ValidationError(str(exc), code="bad_language_tag") from exc


def language_name(tag: str) -> str:
    """English name of a tag's language ("es-419" → "Spanish"); the tag itself when unknown."""
    return _known_languages().get(tag.split("-")[0].lower(), tag)


def is_english(tag: str) -> bool:
    return not tag or tag.split("-")[0].lower() == "en"


class TranslationMethod(models.TextChoices):
    HUMAN = "human", "Human translation"
    MACHINE = "machine", "Machine translation"
    MACHINE_EXPERT = "machine_expert", "Machine translation checked by an expert"


def scores_language(languages: list[str], case_language: str) -> bool:
    """Whether an expert who scores `languages` (BCP 47 tags; none = English only) may score a case in
    `case_language`: the primary subtags match (an "es" expert scores "es-419" and "es-MX")."""
    primaries = {tag.split("-")[0].lower() for tag in languages} or {STANDARD_CASE_LANGUAGE}
    return (case_language or STANDARD_CASE_LANGUAGE).split("-")[0].lower() in primaries


# --- the rubric's vocabulary as messages (issue 35) ----------------------------------------------------------------
# Dimension and sub-dimension names, the 0–3 scale's labels and criteria, and the words experts read on every item,
# marked with gettext_noop so `make messages` extracts them. Each has one agreed rendering per language in
# docs/glossary.csv (tests/i18n checks the catalogues follow it). Templates translate the stored English names with
# `{% translate name %}`; the names stored in rubric rows stay English.
TERMS: tuple[str, ...] = (
    gettext_noop('Textual Analysis'),  # dimension
    gettext_noop('Hermeneutical Reasoning'),  # dimension
    gettext_noop('Doctrinal Precision'),  # dimension
    gettext_noop('Historical Theology'),  # dimension
    gettext_noop('Apologetics'),  # dimension
    gettext_noop('Intertextual Reasoning'),  # dimension
    gettext_noop('Lexical Accuracy'),  # sub_dimension
    gettext_noop('Translation Fidelity'),  # sub_dimension
    gettext_noop('Linguistic Reasoning'),  # sub_dimension
    gettext_noop('Source Handling'),  # sub_dimension
    gettext_noop('Interpretive Method'),  # sub_dimension
    gettext_noop('Genre Awareness'),  # sub_dimension
    gettext_noop('Contextual Analysis'),  # sub_dimension
    gettext_noop('Canonical Integration'),  # sub_dimension
    gettext_noop('Doctrinal Accuracy'),  # sub_dimension
    gettext_noop('Tradition Fidelity'),  # sub_dimension
    gettext_noop('Nuance Recognition'),  # sub_dimension
    gettext_noop('Source Grounding'),  # sub_dimension
    gettext_noop('Historical Accuracy'),  # sub_dimension
    gettext_noop('Development Awareness'),  # sub_dimension
    gettext_noop('Patristic Knowledge'),  # sub_dimension
    gettext_noop('Historiographical Method'),  # sub_dimension
    gettext_noop('Logical Validity'),  # sub_dimension
    gettext_noop('Evidence Usage'),  # sub_dimension
    gettext_noop('Objection Handling'),  # sub_dimension
    gettext_noop('Persuasive Clarity'),  # sub_dimension
    gettext_noop('Cross-Reference Accuracy'),  # sub_dimension
    gettext_noop('Typological Recognition'),  # sub_dimension
    gettext_noop('Allusion Detection'),  # sub_dimension
    gettext_noop('Thematic Integration'),  # sub_dimension
    gettext_noop('Inadequate'),  # scale_label
    gettext_noop('Partial'),  # scale_label
    gettext_noop('Good'),  # scale_label
    gettext_noop('Excellent'),  # scale_label
    gettext_noop('Incorrect, misleading, or fails to address the question'),  # scale_criteria
    gettext_noop('Some accuracy but significant errors or omissions'),  # scale_criteria
    gettext_noop('Mostly accurate with minor gaps, adequate vocabulary'),  # scale_criteria
    gettext_noop('Fully accurate, demonstrates depth, uses appropriate vocabulary and sources'),  # scale_criteria
    gettext_noop('Rationale'),  # term
    gettext_noop('Adjudication'),  # term
    gettext_noop('Panel lead'),  # term
    gettext_noop('Question'),  # term
    gettext_noop('Answer'),  # term
    gettext_noop('Reference answer'),  # term
    gettext_noop('Outside my expertise'),  # term
    gettext_noop('Dimension'),  # term
    gettext_noop('Tradition'),  # term
    gettext_noop('Gold score'),  # term
    gettext_noop('Expert'),  # term
    gettext_noop('Panel'),  # term
    gettext_noop('Panelist'),  # term
    gettext_noop('Weight'),  # term
    gettext_noop('Case'),  # term
    gettext_noop('Cycle'),  # term
)

# Labels the expert pages show from stored codes (not glossary terms): an assignment's status.
LABELS: tuple[str, ...] = (
    gettext_noop("Not started"),
    gettext_noop("Draft"),
    gettext_noop("Submitted"),
    gettext_noop("Skipped (outside expertise)"),
    gettext_noop("Withdrawn"),
    # notification kinds and e-mail modes (accounts.models), shown on the inbox
    gettext_noop("New assignments"),
    gettext_noop("Delphi round opened"),
    gettext_noop("Delphi round waiting for your answer"),
    gettext_noop("Items wait for adjudication"),
    gettext_noop("Report ready"),
    gettext_noop("Email each notification at once"),
    gettext_noop("One email a day with everything new"),
    gettext_noop("No email (the inbox only)"),
    # statuses shown through `{% translate label %}`: API tokens (accounts), rubric versions, judge runs, report
    # versions (evidence), Delphi studies and rounds, case reviews
    gettext_noop("Active"),
    gettext_noop("Expired"),
    gettext_noop("Revoked"),
    gettext_noop("Retired"),
    gettext_noop("Queued"),
    gettext_noop("Running"),
    gettext_noop("Cancelling"),
    gettext_noop("Cancelled"),
    gettext_noop("Finished"),
    gettext_noop("Failed"),
    gettext_noop("Computing"),
    gettext_noop("Ready"),
    gettext_noop("Failed checks"),
    gettext_noop("Rounds running"),
    gettext_noop("Rounds finished: ready to close"),
    gettext_noop("Closed: proposal awaiting approval"),
    gettext_noop("Approved: rubric version created"),
    gettext_noop("Open"),
    gettext_noop("Closed"),
    # why an assignment was withdrawn (annotations.models.Assignment.WithdrawnReason), on the lead's pages
    gettext_noop("Withdrawn after adjudication"),
    gettext_noop("Expert removed from the panel"),
    gettext_noop("Reassigned to another expert"),
    # an adjudication's reason (annotations.models.AdjudicationDecision.Reason), on the adjudication page
    gettext_noop("An expert misread the response"),
    gettext_noop("The rubric is ambiguous here"),
    gettext_noop("Tradition-specific disagreement"),
    gettext_noop("Outside an expert's expertise"),
    gettext_noop("Other"),
    # case review (casereview.models): the reviewer's answers; a case's difficulty and question type
    gettext_noop("Yes"),
    gettext_noop("No"),
    gettext_noop("Unsure"),
    gettext_noop("Partly"),
    gettext_noop("Easy"),
    gettext_noop("Medium"),
    gettext_noop("Hard"),
    gettext_noop("Factual recall"),
    gettext_noop("Comparative analysis"),
    gettext_noop("Applied reasoning"),
    gettext_noop("Contested topic"),
    # audit actions (audit.models.AuditEvent.Action), on the audit trail
    gettext_noop("Signed in"),
    gettext_noop("Sign-in failed"),
    gettext_noop("Signed out"),
    gettext_noop("Role or access changed"),
    gettext_noop("Groups or permissions changed"),
    gettext_noop("Panel changed"),
    gettext_noop("API token created"),
    gettext_noop("API token revoked"),
    gettext_noop("Judge run started"),
    gettext_noop("Judge run cancelled"),
    gettext_noop("Evidence version requested"),
    gettext_noop("Evidence version computed"),
    gettext_noop("Evidence version failed"),
    gettext_noop("Evidence file downloaded"),
    gettext_noop("File exported"),
    gettext_noop("Personal data exported (Art. 15/20)"),
    gettext_noop("Person pseudonymised (Art. 17)"),
    gettext_noop("Audit rows past retention pruned"),
    # API token scopes (accounts.models.ApiToken.Scope), on the API tokens page
    gettext_noop("Read reports, gold labels and the leaderboard"),
    gettext_noop("Write data (import, request report versions)"),
    gettext_noop("Start and cancel judge runs"),
)
