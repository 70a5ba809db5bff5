"""Django admin for the evaluations app: each module registers its models when imported here.

`benchmark`: traditions, rubrics, test cases, models, responses, TheoBERT cases (import/export).
`judge`: judge runs (start, cancel, resume) and their results.
"""
from . import benchmark, judge

__all__ = ["benchmark", "judge"]
