"""Generation conditions (methodology §8.3, §8.4, §9, §9.1, §17 items 8, 10, 11): the settings a response was
generated under — provider route, reasoning mode and effort, temperature, token limit, system prompt, language —
as one named record. Every response belongs to one condition and one repetition (1…k)."""
from __future__ import annotations

from decimal import Decimal
from typing import ClassVar, Literal, TypedDict

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from evaluations.domain import external_id_validator
from evaluations.methodology import (
    STANDARD_CONDITION_NAME,
    STANDARD_LANGUAGE,
    STANDARD_MAX_TOKENS,
    STANDARD_SYSTEM_PROMPT,
    STANDARD_TEMPERATURE,
)

ConditionAxis = Literal["route", "reasoning", "reasoning_effort", "temperature", "max_tokens", "system_prompt",
                        "language"]


class ConditionSettings(TypedDict):
    """A generation condition's defining settings as plain values (the temperature as a decimal string)."""

    route: str
    reasoning: bool
    reasoning_effort: str
    temperature: str
    max_tokens: int
    system_prompt: str
    language: str


class ReasoningEffort(models.TextChoices):
    NONE = "", "—"
    LOW = "low", "Low"
    MEDIUM = "medium", "Medium"
    HIGH = "high", "High"


class GenerationConditionQuerySet(models.QuerySet["GenerationCondition"]):
    def standard(self) -> GenerationCondition:
        return self.get(is_standard=True)


class GenerationCondition(models.Model):
    """One way of asking a test model: route, reasoning, temperature, tokens, system prompt, language."""

    # The fields that define a condition; two conditions compared in a delta differ in some of them.
    AXES: ClassVar[tuple[ConditionAxis, ...]] = ("route", "reasoning", "reasoning_effort", "temperature", "max_tokens", "system_prompt", "language")

    name = models.CharField(max_length=64, unique=True, validators=[external_id_validator],
                            help_text="How imports and commands name it, e.g. standard, reasoning-high, de.")
    description = models.TextField(blank=True)
    is_standard = models.BooleanField(
        default=False, help_text="The methodology's standard condition (§9.1); exactly one condition is standard."
    )
    route = models.CharField(
        max_length=120, blank=True,
        help_text="Provider route or endpoint (e.g. an OpenRouter provider such as 'together'); empty: the endpoint's "
        "default routing.",
    )
    reasoning = models.BooleanField(default=False, help_text="Reasoning (thinking) mode on.")
    reasoning_effort = models.CharField(max_length=10, blank=True, choices=ReasoningEffort.choices,
                                        default=ReasoningEffort.NONE)
    temperature = models.DecimalField(max_digits=4, decimal_places=2, default=STANDARD_TEMPERATURE,
                                      validators=[MinValueValidator(Decimal(0)), MaxValueValidator(Decimal(2))])
    max_tokens = models.PositiveIntegerField(default=STANDARD_MAX_TOKENS, validators=[MinValueValidator(1)])
    system_prompt = models.TextField(default=STANDARD_SYSTEM_PROMPT, blank=True)
    language = models.CharField(max_length=16, default=STANDARD_LANGUAGE,
                                help_text="BCP 47 tag of the language the question is asked in (en, de, ko…).")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = GenerationConditionQuerySet.as_manager()

    class Meta:
        ordering = ["-is_standard", "name"]
        verbose_name = "generation condition"
        constraints = [
            models.UniqueConstraint(fields=["is_standard"], condition=Q(is_standard=True),
                                    name="generation_condition_one_standard"),
            models.CheckConstraint(condition=Q(temperature__gte=0, temperature__lte=2),
                                   name="generation_condition_temperature_0_2"),
            models.CheckConstraint(condition=Q(max_tokens__gte=1), name="generation_condition_max_tokens_positive"),
            models.CheckConstraint(condition=Q(reasoning=True) | Q(reasoning_effort=""),
                                   name="generation_condition_effort_needs_reasoning"),
            models.CheckConstraint(condition=Q(reasoning_effort__in=ReasoningEffort.values),
                                   name="generation_condition_effort_valid"),
            models.CheckConstraint(condition=~Q(language=""), name="generation_condition_language_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (standard)" if self.is_standard else self.name

    def settings_dict(self) -> ConditionSettings:
        """The defining settings as plain values (for exports, deltas and the generation payload)."""
        return {"route": self.route, "reasoning": self.reasoning, "reasoning_effort": self.reasoning_effort,
                "temperature": str(self.temperature), "max_tokens": self.max_tokens,
                "system_prompt": self.system_prompt, "language": self.language}

    def differs_in(self, other: GenerationCondition) -> list[str]:
        """The axes on which two conditions differ ("reasoning" covers effort too)."""
        mine, theirs = self.settings_dict(), other.settings_dict()
        axes: list[str] = [axis for axis in self.AXES if mine[axis] != theirs[axis]]
        if "reasoning_effort" in axes and "reasoning" in axes:
            axes.remove("reasoning_effort")
        return axes


__all__ = ["STANDARD_CONDITION_NAME", "GenerationCondition", "ReasoningEffort"]


def standard_condition_id() -> int:
    """The standard condition's id, created if missing (the default of `ModelResponse.condition`; the data
    migration creates it, but tests that flush the database lose migration data)."""
    condition, _ = GenerationCondition.objects.get_or_create(
        is_standard=True,
        defaults={"name": STANDARD_CONDITION_NAME, "temperature": STANDARD_TEMPERATURE,
                  "max_tokens": STANDARD_MAX_TOKENS, "system_prompt": STANDARD_SYSTEM_PROMPT,
                  "language": STANDARD_LANGUAGE,
                  "description": "The methodology's standard condition (§9.1): temperature 0.7, reasoning off, "
                  "a minimal system prompt, at most 2,000 tokens, English."},
    )
    return condition.pk
