"""Every judge prompt: the one builder of the judge's system prompts and user messages, in three variants.

* single response (methodology §5.3.3 system prompt, §5.3.4 user message): :func:`judge_system_prompt`,
  :func:`judge_user_message` — the judge run;
* pairwise (§6.2.1 position bias; the methodology gives no prompt for this mode, so it is ours):
  :func:`pairwise_system_prompt`, :func:`pairwise_user_message` — ``{"preferred": "A" | "B" | "tie", …}``;
* study (an imported reliability study's item × dimension; ours too): :func:`study_system_prompt`,
  :func:`study_user_message` — ``{"score": N}`` on the dimension's scale.

Callers (the pipeline, ``evaluations.judge.pairwise``, ``calibration.studies.judging``) only call these; none
writes prompt text of its own.

Decisions the methodology leaves open for the single-response prompts, fixed here and pinned by golden-file tests:

* ``{section}`` is the case's dimension key (``textual``), as §5.3.3 says.
* ``{dimensionName}`` is the sub-dimension's camelCase key (``lexicalAccuracy``), not its display
  name: the judge must echo it in the JSON ``"dimension"`` field, and the production code matches
  answers to sub-dimensions by key (§15.5 lists the keys).
* ``{weight}`` is printed as an integer when whole (``35``), otherwise without trailing zeros (``12.5``).
* ``{tradition}`` is the tradition's display name (``Reformed``).
* The template's ``...`` line only stands for "one line per sub-dimension"; it is not sent.
* Neither prompt ends with a newline; the user message's optional blocks are separated by one blank line.
* A case in another language than English (issue 35) adds one block before the closing line, naming the language
  (``CASE LANGUAGE: Spanish (es)``) and asking for the evaluation in that language's terms with the reasoning in
  English (the scores' parser and the experts' comparison read English reasoning). An English case's message is
  §5.3.4's, byte for byte (tests/evaluations/judge/test_prompts.py).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple

from ..domain import is_english, language_name

if TYPE_CHECKING:  # the prompts themselves need no Django; only the rubric readers below take a model
    from ..models import RubricVersion


class PromptSubDimension(NamedTuple):
    key: str
    weight: Decimal
    description: str


_SYSTEM_HEAD = """You are an expert theological evaluator assessing LLM responses
for the FaithBench benchmark.
Your role is to score responses on a 0-3 scale for each dimension.

SCORING SCALE:
0 = Inadequate: Incorrect, misleading, or fails to address
1 = Partial: Some accuracy but significant errors or omissions
2 = Good: Mostly accurate with minor gaps
3 = Excellent: Fully accurate, demonstrates depth

EVALUATION DIMENSIONS for {section}:
"""

_SYSTEM_TAIL = """
OUTPUT FORMAT:
Respond with valid JSON only:
{
  "scores": [
    { "dimension": "<dimension_name>",
      "rawScore": <0-3>,
      "reasoning": "<brief justification>" }
  ]
}

Be strict but fair. Evaluate theological accuracy, not style or length."""

_USER_CLOSE = "Evaluate the model response and provide scores for each dimension."


def format_weight(weight: Decimal | int | float) -> str:
    """A weight as the prompt prints it: 35.00 → "35", 12.50 → "12.5"."""
    value = Decimal(str(weight))
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def judge_system_prompt(*, section: str, sub_dimensions: Iterable[PromptSubDimension]) -> str:
    """The §5.3.3 system prompt for one dimension ("section") and its sub-dimensions in rubric order."""
    lines = "".join(
        f"- {sub.key} ({format_weight(sub.weight)}%): {sub.description}\n" for sub in sub_dimensions
    )
    return _SYSTEM_HEAD.replace("{section}", section) + lines + _SYSTEM_TAIL


def language_block(language: str) -> str:
    """The block a non-English case adds to the user message; "" for English (or no language recorded)."""
    if is_english(language):
        return ""
    return (f"CASE LANGUAGE: {language_name(language)} ({language})\n"
            "The question and the response are in this language. Judge them in its own theological vocabulary; "
            "write your reasoning in English.")


def judge_user_message(
    *, question: str, response: str, reference_answer: str = "", tradition: str = "", language: str = ""
) -> str:
    """The §5.3.4 user message; the reference, tradition and (non-English) language blocks only when the case has
    them."""
    blocks = [f"QUESTION:\n{question}", f"MODEL RESPONSE:\n{response}"]
    if reference_answer.strip():
        blocks.append(f"REFERENCE ANSWER (for comparison):\n{reference_answer}")
    if tradition.strip():
        blocks.append(f"TRADITION CONTEXT: {tradition}\nEvaluate fidelity to this specific theological tradition.")
    if language_block(language):
        blocks.append(language_block(language))
    blocks.append(_USER_CLOSE)
    return "\n\n".join(blocks)


def rubric_prompt_sections(rubric: RubricVersion) -> dict[str, tuple[PromptSubDimension, ...]]:
    """{dimension key: its sub-dimensions as prompt lines} for a RubricVersion, in rubric order."""
    sections: dict[str, tuple[PromptSubDimension, ...]] = {}
    for dimension in rubric.dimensions.prefetch_related("sub_dimensions"):
        sections[dimension.key] = tuple(
            PromptSubDimension(sub.key, sub.weight, sub.description) for sub in dimension.sub_dimensions.all()
        )
    return sections


def sub_dimension_keys(sub_dimensions: Sequence[PromptSubDimension]) -> list[str]:
    return [sub.key for sub in sub_dimensions]


# --- pairwise ---------------------------------------------------------------------------------------------

PAIRWISE_SYSTEM_PROMPT = (
    "You are an expert evaluator of answers to questions in theology and biblical studies. Compare the two answers "
    "to the question below on one dimension: {dimension}. Judge their content only — the order in which they are "
    "shown and their length must not influence you. If they are equally good, say so. Answer with a JSON object "
    "and nothing else: {{\"preferred\": \"A\" or \"B\" or \"tie\", \"reasoning\": \"one or two sentences\"}}."
)


def pairwise_system_prompt(*, dimension: str) -> str:
    """The pairwise system prompt naming the dimension (its display name) the two answers are compared on."""
    return PAIRWISE_SYSTEM_PROMPT.format(dimension=dimension)


def pairwise_user_message(*, question: str, reference: str, first: str, second: str) -> str:
    """QUESTION / (REFERENCE ANSWER) / ANSWER A / ANSWER B blocks, one blank line apart."""
    parts = [f"QUESTION:\n{question}"]
    if reference.strip():
        parts.append(f"REFERENCE ANSWER:\n{reference}")
    parts += [f"ANSWER A:\n{first}", f"ANSWER B:\n{second}"]
    return "\n\n".join(parts)


# --- study ------------------------------------------------------------------------------------------------

STUDY_SYSTEM_PROMPT = (
    "You are an expert evaluator taking part in a reliability study. Rate the text you are given on one "
    "criterion, \u201c{dimension}\u201d, following the instructions in the user's message. Answer with a JSON object "
    "and nothing else: {{\"score\": <number>}}, where the number is {scale}."
)
STUDY_PLACEHOLDER = re.compile(r"\{\{\s*instance\s*\}\}")


def study_scale_text(low: float | None, high: float | None, level: str) -> str:
    """How the study prompt names the scale: "a whole number from 1 to 5", "a number from 0 to 1", or neither."""
    if low is None or high is None:
        return "the score the instructions ask for"
    whole = float(low).is_integer() and float(high).is_integer() and level != "interval"
    return (f"a whole number from {low:g} to {high:g}" if whole else f"a number from {low:g} to {high:g}")


def study_system_prompt(*, dimension: str, low: float | None, high: float | None, level: str) -> str:
    """The study system prompt: one criterion (the dimension's key) and its scale."""
    return STUDY_SYSTEM_PROMPT.format(dimension=dimension, scale=study_scale_text(low, high, level))


def study_user_message(*, template: str, text: str, dimension: str) -> str:
    """The dimension's template with the item's text in place of ``{{ instance }}`` (or after it)."""
    if not template.strip():
        return f"Rate the following text for {dimension}.\n\n{text}"
    if STUDY_PLACEHOLDER.search(template):
        return STUDY_PLACEHOLDER.sub(lambda _: text, template)
    return f"{template.rstrip()}\n\n{text}"
