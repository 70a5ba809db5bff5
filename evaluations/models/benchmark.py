"""Benchmark data: traditions, rubric versions, test cases, evaluated models, responses, TheoBERT cases."""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from evaluations.domain import (
    MASK_TOKEN,
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
    language_tag_validator,
    theobert_semantic_errors,
)
from evaluations.models.conditions import GenerationCondition, standard_condition_id

HUNDRED = Decimal("100")


def _in_choices(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Tradition(models.Model):
    """A Christian tradition whose experts form a panel and whose positions cases test."""

    key = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=80, unique=True)
    in_development = models.BooleanField(
        default=False, help_text="Traditions still in development (Pentecostal in v1.0) have smaller panels."
    )
    min_panel_size = models.PositiveSmallIntegerField(
        default=3, help_text="Minimum number of experts on this tradition's panel (methodology §6.1.1)."
    )
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order", "name"]

    def __str__(self) -> str:
        return f"{self.name} (in development)" if self.in_development else self.name


class RubricVersionQuerySet(models.QuerySet["RubricVersion"]):
    def active(self) -> RubricVersionQuerySet:
        return self.filter(status=RubricVersion.Status.ACTIVE)


class RubricVersion(models.Model):
    """A versioned rubric: six weighted dimensions, each with weighted sub-dimensions."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        RETIRED = "retired", "Retired"

    version = models.CharField(max_length=20, unique=True, help_text="For example 1.0, 1.1-delphi.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    based_on = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="derived")
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RubricVersionQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "version"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["draft", "active", "retired"]), name="rubric_status_valid"),
        ]

    def __str__(self) -> str:
        return f"Rubric v{self.version}"

    def clean(self) -> None:
        if self.pk:
            errors = self.weight_errors()
            if errors:
                raise ValidationError(errors)

    def weight_errors(self) -> list[str]:
        """Every way this rubric's weights fail to sum to exactly 100 at each level (empty when valid)."""
        errors: list[str] = []
        dimensions = list(self.dimensions.prefetch_related("sub_dimensions"))
        if len(dimensions) != 6:
            errors.append(f"rubric v{self.version} has {len(dimensions)} dimensions; expected 6")
        total = sum((d.weight for d in dimensions), Decimal("0"))
        if total != HUNDRED:
            errors.append(f"dimension weights of rubric v{self.version} sum to {total}, not 100")
        for dimension in dimensions:
            subs = list(dimension.sub_dimensions.all())
            if not subs:
                errors.append(f"dimension {dimension.key} has no sub-dimensions")
                continue
            sub_total = sum((s.weight for s in subs), Decimal("0"))
            if sub_total != HUNDRED:
                errors.append(f"sub-dimension weights of {dimension.key} sum to {sub_total}, not 100")
        return errors


def weight_field(help_text: str) -> models.DecimalField:
    """A weight in percentage points: an exact decimal 0–100 with two places (never a float)."""
    return models.DecimalField(
        max_digits=5, decimal_places=2, help_text=help_text,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
    )


class RubricDimension(models.Model):
    """One of the six dimensions of a rubric version, with its weight out of 100."""

    rubric = models.ForeignKey(RubricVersion, on_delete=models.CASCADE, related_name="dimensions")
    key = models.CharField(max_length=20, choices=Dimension.choices)
    name = models.CharField(max_length=80)
    weight = weight_field("Percentage points; the six weights sum to 100.")
    description = models.TextField(blank=True)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["rubric", "order"]
        constraints = [
            models.UniqueConstraint(fields=["rubric", "key"], name="rubric_dimension_unique"),
            models.CheckConstraint(condition=_in_choices("key", Dimension), name="rubric_dimension_key_valid"),
            models.CheckConstraint(condition=Q(weight__gte=0, weight__lte=100), name="rubric_dimension_weight_0_100"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.weight}%)"


class RubricSubDimension(models.Model):
    """A sub-dimension scored 0–3 by experts and the judge, weighted within its dimension."""

    dimension = models.ForeignKey(RubricDimension, on_delete=models.CASCADE, related_name="sub_dimensions")
    key = models.CharField(max_length=40, help_text="camelCase key as the methodology spells it, e.g. lexicalAccuracy.")
    name = models.CharField(max_length=80)
    weight = weight_field("Percentage points; a dimension's weights sum to 100.")
    description = models.TextField(blank=True)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["dimension", "order"]
        constraints = [
            models.UniqueConstraint(fields=["dimension", "key"], name="rubric_subdimension_unique"),
            models.CheckConstraint(condition=Q(weight__gte=0, weight__lte=100), name="rubric_subdimension_weight_0_100"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.weight}%)"


class TestCaseQuerySet(models.QuerySet["TestCase"]):
    def public(self) -> TestCaseQuerySet:
        return self.filter(visibility=Visibility.PUBLIC)

    def held_out(self) -> TestCaseQuerySet:
        return self.filter(visibility=Visibility.HELD_OUT)

    def active(self) -> TestCaseQuerySet:
        return self.filter(is_active=True)


class TestCase(models.Model):
    """A benchmark question in one dimension ("section")."""

    __test__ = False  # not a pytest test class

    external_id = models.CharField(max_length=64, unique=True, validators=[external_id_validator])
    dimension = models.CharField(max_length=20, choices=Dimension.choices)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices)
    tradition = models.ForeignKey(
        Tradition, null=True, blank=True, on_delete=models.PROTECT, related_name="test_cases",
        help_text="Empty for tradition-neutral cases.",
    )
    question_type = models.CharField(max_length=30, choices=QuestionType.choices)
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC,
        help_text="Held-out cases never reach an unauthorised user or an export.",
    )
    is_active = models.BooleanField(default=True)
    prompt = models.TextField()
    reference_answer = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    is_anchor = models.BooleanField(
        default=False, help_text="An anchor case stays in every held-out rotation, so rotations can be equated (§8.7)."
    )
    rotation = models.CharField(
        max_length=40, blank=True, help_text="The held-out rotation this case belongs to (empty: none, or an anchor)."
    )
    retired_reason = models.TextField(blank=True, help_text="Why a reviewed case was retired (it is then inactive).")
    # Issue 35: the language the case is written in, and for a translation, where it comes from and how it was made.
    # Checked in clean() and by the import (evaluations.domain.language_tag_clean), not as a field validator: a
    # migration must not import today's code (tests/test_migrations.py).
    language = models.CharField(max_length=35, default="en",
                                help_text="BCP 47 tag of the language of the prompt and reference answer (en, es, ko…).")
    source_case = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="translations",
        help_text="For a translated case: the case it was translated from (in another language).",
    )
    translator = models.CharField(max_length=200, blank=True, help_text="Who translated it (a person or a system).")
    translation_method = models.CharField(max_length=20, choices=TranslationMethod.choices, blank=True)
    verified_by = models.CharField(max_length=200, blank=True,
                                   help_text="Who checked the translation (required for a machine translation checked "
                                             "by an expert).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TestCaseQuerySet.as_manager()

    class Meta:
        ordering = ["external_id"]
        verbose_name = "test case"
        constraints = [
            models.CheckConstraint(condition=_in_choices("dimension", Dimension), name="testcase_dimension_valid"),
            models.CheckConstraint(condition=_in_choices("difficulty", Difficulty), name="testcase_difficulty_valid"),
            models.CheckConstraint(condition=_in_choices("question_type", QuestionType), name="testcase_question_type_valid"),
            models.CheckConstraint(condition=_in_choices("visibility", Visibility), name="testcase_visibility_valid"),
            models.CheckConstraint(condition=Q(version__gte=1), name="testcase_version_positive"),
            models.CheckConstraint(condition=~Q(prompt=""), name="testcase_prompt_not_empty"),
            models.CheckConstraint(condition=~Q(language=""), name="testcase_language_not_empty"),
            # A translation names its source and its method; an original has neither.
            models.CheckConstraint(
                condition=(Q(source_case__isnull=True, translation_method="")
                           | (Q(source_case__isnull=False) & _in_choices("translation_method", TranslationMethod))),
                name="testcase_translation_provenance",
            ),
            models.CheckConstraint(condition=~Q(source_case=models.F("pk")), name="testcase_not_its_own_source"),
        ]
        indexes = [models.Index(fields=["dimension", "difficulty"])]

    def __str__(self) -> str:
        return self.external_id

    @property
    def is_held_out(self) -> bool:
        return self.visibility == Visibility.HELD_OUT

    @property
    def is_translation(self) -> bool:
        return self.source_case_id is not None

    def clean(self) -> None:
        """The language is a BCP 47 tag; a translation's source is another case in another language."""
        language_tag_validator(self.language)
        if self.source_case is not None:
            if self.source_case_id == self.pk:
                raise ValidationError({"source_case": "a case cannot be its own source"})
            if self.source_case.language.split("-")[0] == self.language.split("-")[0]:
                raise ValidationError({"source_case": "the source case is in the same language: a translation's "
                                                      "source is in another language"})
            if not self.translation_method:
                raise ValidationError({"translation_method": "a translated case needs its translation method"})


class TestCaseRevision(models.Model):
    """The content of one version of a test case, kept when a reviewed case is revised (never edited)."""

    __test__ = False  # not a pytest test class

    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    prompt = models.TextField()
    reference_answer = models.TextField(blank=True)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices)
    reason = models.TextField(blank=True, help_text="Why this version was made (the flag it resolves).")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["test_case", "version"]
        verbose_name = "test case revision"
        constraints = [
            models.UniqueConstraint(fields=["test_case", "version"], name="testcase_revision_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.test_case_id} v{self.version}"


class EvaluatedModel(models.Model):
    """An LLM whose answers are evaluated; its family matters for self-preference bias."""

    name = models.CharField(max_length=120, unique=True, help_text="Identifier as the endpoint knows it, e.g. openai/gpt-4o.")
    provider = models.CharField(max_length=80, help_text="Who makes the model, e.g. OpenAI.")
    family = models.SlugField(
        max_length=40, help_text="Model family, lower case (gemini, gpt, claude, llama). A judge of the same family "
        "is subject to self-preference bias."
    )

    class Meta:
        ordering = ["name"]
        verbose_name = "evaluated model"

    def __str__(self) -> str:
        return self.name


class ModelResponse(models.Model):
    """One model's answer to one test case in one run, under one generation condition, as one repetition (1…k).

    `run_label` names the batch (e.g. 2026-03); the condition says how the model was asked, the repetition which of
    the k answers under that condition this is. The temperature, token limit and system prompt fields record what
    was actually sent (they normally equal the condition's)."""

    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="responses")
    model = models.ForeignKey(EvaluatedModel, on_delete=models.PROTECT, related_name="responses")
    run_label = models.CharField(max_length=64, default="default", validators=[external_id_validator])
    condition = models.ForeignKey(
        GenerationCondition, on_delete=models.PROTECT, related_name="responses", default=standard_condition_id,
        help_text="The generation condition this answer was produced under (default: the standard condition, §9.1).",
    )
    repetition = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1)],
        help_text="Which of the k answers under this condition (1…k; §8.4 recommends k ≥ 4).",
    )
    text = models.TextField()
    temperature = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    system_prompt = models.TextField(blank=True)
    settings = models.JSONField(default=dict, blank=True, help_text="Other generation settings (top_p, seed…).")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    language = models.CharField(
        max_length=35, blank=True,
        help_text="BCP 47 tag of the language the question was asked in (import: the file's, else the condition's "
                  "`language` axis); empty in rows made before languages were recorded: read `asked_language`.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["test_case", "model", "run_label", "condition", "repetition"]
        verbose_name = "model response"
        constraints = [
            models.UniqueConstraint(fields=["test_case", "model", "run_label", "condition", "repetition"],
                                    name="response_one_per_case_model_run_condition_repetition"),
            models.CheckConstraint(condition=Q(repetition__gte=1), name="response_repetition_positive"),
            models.CheckConstraint(
                condition=Q(temperature__isnull=True) | Q(temperature__gte=0, temperature__lte=2),
                name="response_temperature_0_2",
            ),
        ]

    def __str__(self) -> str:
        suffix = "" if self.repetition == 1 else f"#{self.repetition}"
        return f"{self.test_case_id}/{self.model_id}/{self.run_label}{suffix}"

    @property
    def asked_language(self) -> str:
        """The language the question was asked in: as recorded, else the generation condition's."""
        return self.language or self.condition.language


class TheoBertCase(models.Model):
    """A masked-language-model case in the TheoBERT eval.json schema, kept for expert audit."""

    case_id = models.CharField("id", max_length=64, unique=True, validators=[external_id_validator])
    type = models.CharField(max_length=30, choices=TheoBertType.choices)
    category = models.CharField(max_length=30, choices=TheoBertCategory.choices)
    difficulty = models.CharField(max_length=10, choices=TheoBertDifficulty.choices)
    input = models.TextField(help_text="The masked sentence; contains at least one [MASK].")
    targets = models.JSONField(default=list, help_text="Correct completion(s) for the masked position(s).")
    foils = models.JSONField(default=list, blank=True, help_text="Plausible but wrong completions (contrastive).")
    acceptable_alternatives = models.JSONField(default=list, blank=True)
    failure_examples = models.JSONField(
        default=list, blank=True, help_text="Tokens that signal a critical failure when in the top 3."
    )
    pass_condition = models.CharField(max_length=30, choices=PassCondition.choices)
    k = models.PositiveSmallIntegerField(default=5, validators=[MinValueValidator(1)])
    reference = models.CharField(max_length=200, blank=True)
    reasoning = models.TextField(blank=True)
    surface_confounder = models.TextField(blank=True)

    class Meta:
        ordering = ["case_id"]
        verbose_name = "TheoBERT case"
        constraints = [
            models.CheckConstraint(condition=_in_choices("type", TheoBertType), name="theobert_type_valid"),
            models.CheckConstraint(condition=_in_choices("category", TheoBertCategory), name="theobert_category_valid"),
            models.CheckConstraint(condition=_in_choices("difficulty", TheoBertDifficulty), name="theobert_difficulty_valid"),
            models.CheckConstraint(condition=_in_choices("pass_condition", PassCondition), name="theobert_pass_condition_valid"),
            models.CheckConstraint(condition=Q(input__contains=MASK_TOKEN), name="theobert_input_has_mask"),
            models.CheckConstraint(condition=Q(k__gte=1), name="theobert_k_positive"),
        ]

    def __str__(self) -> str:
        return self.case_id

    def clean(self) -> None:
        errors = theobert_semantic_errors(
            {"input": self.input, "targets": self.targets, "foils": self.foils, "pass_condition": self.pass_condition}
        )
        if errors:
            raise ValidationError({field: message for field, message in errors})
