"""The judge's exact prompts (methodology §5.3.3 system prompt, §5.3.4 user message).

Decisions the methodology leaves open, fixed here and pinned by golden-file tests:

* ``{section}`` is the case's dimension key (``textual``), as §5.3.3 says.
* ``{dimensionName}`` is the sub-dimension's camelCase key (``lexicalAccuracy``), not its display
  name: the judge must echo it in the JSON ``"dimension"`` field, and the production code matches
  answers to sub-dimensions by key (§15.5 lists the keys).
* ``{weight}`` is printed as an integer when whole (``35``), otherwise without trailing zeros (``12.5``).
* ``{tradition}`` is the tradition's display name (``Reformed``).
* The template's ``...`` line only stands for "one line per sub-dimension"; it is not sent.
* Neither prompt ends with a newline; the user message's optional blocks are separated by one blank line.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple

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


def judge_user_message(
    *, question: str, response: str, reference_answer: str = "", tradition: str = ""
) -> str:
    """The §5.3.4 user message; the reference and tradition blocks only when the case has them."""
    blocks = [f"QUESTION:\n{question}", f"MODEL RESPONSE:\n{response}"]
    if reference_answer.strip():
        blocks.append(f"REFERENCE ANSWER (for comparison):\n{reference_answer}")
    if tradition.strip():
        blocks.append(f"TRADITION CONTEXT: {tradition}\nEvaluate fidelity to this specific theological tradition.")
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
