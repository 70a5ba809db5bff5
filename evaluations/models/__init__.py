"""The evaluations app's models, one module per area, imported here by name so Django registers them.

`benchmark`: traditions, rubric versions, test cases, evaluated models, responses, TheoBERT cases.
`judge`: judge runs, their per-response results and sub-dimension scores.
`theobert`: TheoBERT scoring runs and the scorer's per-case verdicts.
`conditions`: generation conditions (route, reasoning, temperature, tokens, system prompt, language; §9.1).
`pairwise`: pairwise judge runs (position bias): ordered pairs of responses and the judge's preference.
The enums the fields use live in `evaluations.domain` (below the models) and are re-exported here.
"""
from evaluations.domain import (
    MASK_TOKEN,
    Difficulty,
    Dimension,
    PassCondition,
    QuestionType,
    TheoBertCategory,
    TheoBertDifficulty,
    TheoBertErrorClass,
    TheoBertType,
    Visibility,
)

from .benchmark import (
    EvaluatedModel,
    ModelResponse,
    RubricDimension,
    RubricSubDimension,
    RubricVersion,
    TestCase,
    TestCaseRevision,
    TheoBertCase,
    Tradition,
)
from .conditions import GenerationCondition, ReasoningEffort, standard_condition_id
from .judge import JudgeResult, JudgeRun, JudgeScore
from .pairwise import PairwiseJudgment, PairwiseRun
from .theobert import TheoBertResult, TheoBertRun

__all__ = [
    "MASK_TOKEN", "Difficulty", "Dimension", "EvaluatedModel", "GenerationCondition", "ReasoningEffort", "standard_condition_id", "JudgeResult", "JudgeRun", "JudgeScore",
    "PairwiseJudgment", "PairwiseRun",
    "ModelResponse", "PassCondition", "QuestionType", "RubricDimension", "RubricSubDimension", "RubricVersion",
    "TestCase", "TestCaseRevision", "TheoBertCase", "TheoBertCategory", "TheoBertResult", "TheoBertRun", "TheoBertDifficulty", "TheoBertErrorClass", "TheoBertType",
    "Tradition", "Visibility",
]
