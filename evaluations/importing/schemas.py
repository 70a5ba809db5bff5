"""Field-by-field validation of imported records, one schema per kind of file.

A schema turns a raw record (JSON values, or CSV strings) into clean Python values and a list of
(field, message) problems. Messages quote a bad value only for short coded fields (enums, ids,
numbers); free text such as prompts, reference answers and responses is never echoed, so held-out
content cannot leak into logs or error pages.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from ..domain import (
    Difficulty,
    Dimension,
    PassCondition,
    QuestionType,
    TheoBertCategory,
    TheoBertDifficulty,
    TheoBertType,
    TranslationMethod,
    Visibility,
    external_id_validator,
    language_tag_clean,
    theobert_semantic_errors,
)
from ..methodology import STANDARD_CONDITION_NAME

Problem = tuple[str, str]
# A clean field's value, as a Field's parser or default gives it (`settings`: the JSON object as read).
FieldValue = str | int | bool | Decimal | list[str] | dict[str, object] | None
# A clean record: the schema's field names (data, not code: one Schema per kind of file) → their values.
CleanRecord = dict[str, FieldValue]
_MISSING = object()


class FieldError(Exception):
    """A bad value; `{value}` in the message is filled in only where quoting the value is safe."""

    def __init__(self, message: str, value: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.value = value

    def render(self, *, redact: bool) -> str:
        return self.message.replace("{value}", "(value withheld: held-out record)" if redact else _short(self.value))


def _short(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def parse_code(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldError(f"must be a string, got {type(value).__name__}")
    try:
        external_id_validator(value)
    except ValidationError as exc:
        raise FieldError("{value} is not a valid identifier: " + exc.messages[0], value) from exc
    return value


def parse_text(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldError(f"must be text, got {type(value).__name__}")
    return value


def parse_short(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldError(f"must be a string, got {type(value).__name__}")
    return value.strip()


def parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise FieldError("must be a whole number, got true/false")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise FieldError("must be a whole number, got {value}", value)


def parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "0", "no"}:
        return False
    raise FieldError("must be true or false, got {value}", value)


def parse_decimal(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise FieldError("must be a number, got {value}", value)
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise FieldError("must be a number, got {value}", value) from exc
    if not number.is_finite():
        raise FieldError("must be a finite number, got {value}", value)
    return number


def _from_json_cell(value: Any, kind: type) -> Any:
    if isinstance(value, str):  # a CSV cell holds JSON
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise FieldError(f"must be a JSON {'array' if kind is list else 'object'} ({exc.msg})") from exc
    return value


def parse_str_list(value: Any) -> list[str]:
    value = _from_json_cell(value, list)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FieldError("must be an array of strings")
    return value


def parse_dict(value: Any) -> dict:
    value = _from_json_cell(value, dict)
    if not isinstance(value, dict):
        raise FieldError("must be a JSON object")
    return value


def choice(choices: type[models.TextChoices]) -> Callable[[Any], str]:
    allowed = list(choices.values)

    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.strip() not in allowed:
            raise FieldError("unknown value {value}; expected one of " + ", ".join(allowed), value)
        return value.strip()

    return parse


@dataclass(frozen=True)
class Field:
    name: str
    parse: Callable[[Any], Any]
    required: bool = True
    default: Any = None
    max_length: int | None = None
    min_value: int | Decimal | None = None
    max_value: int | Decimal | None = None
    decimal_places: int | None = None
    allow_empty: bool = False


@dataclass(frozen=True)
class Schema:
    """An ordered set of fields; the order is the export's column order."""

    kind: str
    fields: tuple[Field, ...]
    key: tuple[str, ...]
    extra_checks: tuple[Callable[[dict], list[Problem]], ...] = field(default=())

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def clean(self, record: dict) -> tuple[CleanRecord, list[Problem]]:
        """Parse one record; returns clean values and every problem found."""
        problems: list[Problem] = []
        unknown = sorted(set(record) - set(self.names))
        for name in unknown:
            problems.append((name, f"unknown field; expected {', '.join(self.names)}"))
        clean: CleanRecord = {}
        redact = record.get("visibility") == "held_out"
        for spec in self.fields:
            raw = record.get(spec.name, _MISSING)
            if raw is _MISSING or (_is_blank(raw) and not spec.allow_empty) or raw is None:
                if spec.required:
                    problems.append((spec.name, "is required" if raw is _MISSING else "must not be empty"))
                clean[spec.name] = spec.default() if callable(spec.default) else spec.default
                continue
            try:
                value = spec.parse(raw)
                _check_bounds(spec, value)
            except FieldError as exc:
                problems.append((spec.name, exc.render(redact=redact)))
                continue
            clean[spec.name] = value
        if not problems:
            for check in self.extra_checks:
                problems.extend(check(clean))
        return clean, problems


def _check_bounds(spec: Field, value: Any) -> None:
    if spec.max_length is not None and isinstance(value, str) and len(value) > spec.max_length:
        raise FieldError(f"is {len(value)} characters long; at most {spec.max_length} allowed")
    if spec.min_value is not None and value < spec.min_value:
        raise FieldError(f"must be at least {spec.min_value}, got {value}")
    if spec.max_value is not None and value > spec.max_value:
        raise FieldError(f"must be at most {spec.max_value}, got {value}")
    if spec.decimal_places is not None and isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and -exponent > spec.decimal_places:
            raise FieldError(f"has more than {spec.decimal_places} decimal places")


def parse_language(value: Any) -> str:
    """A BCP 47 tag, canonical case (ko-kr → ko-KR); an unknown or malformed tag is refused."""
    if not isinstance(value, str):
        raise FieldError(f"must be a language tag, got {type(value).__name__}")
    try:
        return language_tag_clean(value)
    except ValueError as exc:
        raise FieldError(str(exc)) from exc


def _prompt_not_blank(values: dict) -> list[Problem]:
    return [] if values["prompt"].strip() else [("prompt", "must not be empty")]


def _translation_provenance(values: dict) -> list[Problem]:
    """A translation names its source and method (and, checked by an expert, who checked it); an original, neither."""
    source, method = values.get("source_case"), values.get("translation_method")
    if source and not method:
        return [("translation_method", "a translated case (source_case given) needs its translation_method: "
                                       + ", ".join(TranslationMethod.values))]
    if method and not source:
        return [("source_case", "a translation_method is given but no source_case: name the case it was "
                                "translated from")]
    if source and source == values.get("external_id"):
        return [("source_case", "a case cannot be its own source")]
    if method == TranslationMethod.MACHINE_EXPERT and not values.get("verified_by"):
        return [("verified_by", "a machine translation checked by an expert names who checked it")]
    return []


CASES = Schema(
    kind="cases",
    key=("external_id",),
    fields=(
        Field("external_id", parse_code),
        Field("dimension", choice(Dimension)),
        Field("difficulty", choice(Difficulty)),
        Field("tradition", parse_short, required=False, default=None, max_length=40),
        Field("question_type", choice(QuestionType)),
        Field("visibility", choice(Visibility), required=False, default=Visibility.PUBLIC.value),
        Field("is_active", parse_bool, required=False, default=True),
        Field("prompt", parse_text),
        Field("reference_answer", parse_text, required=False, default="", allow_empty=True),
        Field("version", parse_int, required=False, default=1, min_value=1),
        Field("language", parse_language, required=False, default="en", max_length=35),
        Field("source_case", parse_code, required=False, default=""),
        Field("translator", parse_short, required=False, default="", max_length=200, allow_empty=True),
        Field("translation_method", choice(TranslationMethod), required=False, default=""),
        Field("verified_by", parse_short, required=False, default="", max_length=200, allow_empty=True),
    ),
    extra_checks=(_prompt_not_blank, _translation_provenance),
)

RESPONSES = Schema(
    kind="responses",
    key=("case", "model", "run_label", "condition", "repetition"),
    fields=(
        Field("case", parse_code),
        Field("model", parse_short, max_length=120),
        Field("provider", parse_short, required=False, default="", max_length=80),
        Field("family", parse_short, required=False, default="", max_length=40),
        Field("run_label", parse_code, required=False, default="default"),
        # A generation condition by name (it must exist); missing: the standard condition (§9.1).
        Field("condition", parse_code, required=False, default=STANDARD_CONDITION_NAME),
        Field("repetition", parse_int, required=False, default=1, min_value=1, max_value=1000),
        Field("text", parse_text),
        Field("temperature", parse_decimal, required=False, min_value=Decimal(0), max_value=Decimal(2), decimal_places=2),
        Field("max_tokens", parse_int, required=False, min_value=1),
        Field("system_prompt", parse_text, required=False, default="", allow_empty=True),
        Field("settings", parse_dict, required=False, default=dict),
        Field("prompt_tokens", parse_int, required=False, min_value=0),
        Field("completion_tokens", parse_int, required=False, min_value=0),
        # The language the question was asked in; missing: the generation condition's `language`.
        Field("language", parse_language, required=False, default="", max_length=35),
    ),
)

THEOBERT = Schema(
    kind="theobert",
    key=("id",),
    fields=(
        Field("id", parse_code),
        Field("type", choice(TheoBertType)),
        Field("category", choice(TheoBertCategory)),
        Field("difficulty", choice(TheoBertDifficulty)),
        Field("input", parse_text),
        Field("targets", parse_str_list),
        Field("foils", parse_str_list, required=False, default=list),
        Field("acceptable_alternatives", parse_str_list, required=False, default=list),
        Field("failure_examples", parse_str_list, required=False, default=list),
        Field("pass_condition", choice(PassCondition)),
        Field("k", parse_int, required=False, default=5, min_value=1, max_value=1000),
        Field("reference", parse_short, required=False, default="", max_length=200, allow_empty=True),
        Field("reasoning", parse_text, required=False, default="", allow_empty=True),
        Field("surface_confounder", parse_text, required=False, default="", allow_empty=True),
    ),
    extra_checks=(theobert_semantic_errors,),
)

SCHEMAS = {s.kind: s for s in (CASES, RESPONSES, THEOBERT)}
