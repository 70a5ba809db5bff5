"""Forms of the validation page (run a check) and of pairwise runs (position bias)."""
from __future__ import annotations

from typing import Any, TypedDict, cast

from django import forms
from django.core.exceptions import ValidationError

from evaluations.domain import MAX_FORM_COUNT
from evaluations.judge.config import setting
from evaluations.judge.selectors import CASE_FILTER_FIELDS, judge_runs_finished_choices

from .selectors import cycle_choices_for
from .store import CheckKind


class PairwiseOptions(TypedDict):
    """A pairwise run's options as `pairwise_run_create` and `pairwise_run_plan` take them."""

    model: str
    cases: str | None
    limit: int | None


class PairwiseStartForm(forms.Form):
    model = forms.CharField(max_length=200, label="Judge model")
    cases = forms.CharField(required=False, label="Case filter",
                            help_text=f"Fields {', '.join(CASE_FILTER_FIELDS)}; e.g. dimension=doctrinal. "
                                      "Empty: every active case.")
    limit = forms.IntegerField(required=False, min_value=1, max_value=MAX_FORM_COUNT, label="Limit (pairs)",
                               help_text="At most this many pairs of responses to one case; each is asked in both "
                                         "orders (2 calls).")

    SERVICE_ERROR_FIELDS = {"bad_case_filter": "cases", "bad_limit": "limit"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].initial = setting("JUDGE_PRIMARY_MODEL")

    def add_service_error(self, exc: ValidationError) -> None:
        self.add_error(self.SERVICE_ERROR_FIELDS.get(str(getattr(exc, "code", ""))), exc)

    def options(self) -> PairwiseOptions:
        data = self.cleaned_data
        return {"model": data["model"].strip(), "cases": data["cases"] or None, "limit": data["limit"]}


class CheckRunForm(forms.Form):
    """The inputs of one check kind: a run (verbosity), several runs (judges, runs), a cycle (tradition; optional
    expert reference for verbosity). Which fields a kind shows is `FIELDS`; the service checks the rules."""

    FIELDS: dict[str, tuple[str, ...]] = {
        CheckKind.VERBOSITY: ("run", "cycle"),
        CheckKind.TRADITION: ("cycle",),
        CheckKind.JUDGES: ("runs",),
        CheckKind.RUNS: ("runs",),
    }

    run = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Judge run")
    runs = forms.TypedMultipleChoiceField(coerce=int, required=False, label="Judge runs",
                                          help_text="Two or more (Ctrl/⌘-click to choose several).")
    cycle = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Cycle")

    def __init__(self, *args: Any, kind: str, run_choices: list[tuple[int, str]] | None = None,
                 cycle_choices: list[tuple[int, str]] | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", kind)
        super().__init__(*args, **kwargs)
        self.kind = kind
        runs = run_choices if run_choices is not None else judge_runs_finished_choices()
        cycles = cycle_choices if cycle_choices is not None else cycle_choices_for(kind)
        cast(forms.ChoiceField, self.fields["run"]).choices = [("", "— choose a finished run —"), *runs]
        cast(forms.ChoiceField, self.fields["runs"]).choices = runs
        cast(forms.ChoiceField, self.fields["cycle"]).choices = [("", "none (judge only)" if kind == CheckKind.VERBOSITY
                                         else "— choose a cross-tradition cycle —"), *cycles]
        if kind == CheckKind.VERBOSITY:
            self.fields["cycle"].label = "Experts of cycle (optional reference)"
        for name in list(self.fields):
            if name not in self.FIELDS.get(kind, ()):
                del self.fields[name]

