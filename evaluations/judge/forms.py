"""Forms of the judge pages: start runs (one, a series, several judges), resume a run."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from ..domain import MAX_FORM_COUNT
from ..selectors import evaluated_model_choices, rubric_active, rubric_choices
from .config import setting
from .selectors import CASE_FILTER_FIELDS
from .services import MAX_JUDGES, MAX_REPEATS, RunChoices


class JudgeRunStartForm(forms.Form):
    """What to judge (models, cases, limit), with which judge(s), how often, and at most at what cost."""

    rubric = forms.ModelChoiceField(queryset=rubric_choices(), empty_label=None)
    models = forms.ModelMultipleChoiceField(
        queryset=evaluated_model_choices(), required=False, widget=forms.CheckboxSelectMultiple,
        label="Evaluated models", help_text="None ticked: every model.")
    cases = forms.CharField(
        required=False, label="Case filter",
        help_text=f"Fields {', '.join(CASE_FILTER_FIELDS)}; e.g. dimension=textual|doctrinal,difficulty=hard. "
                  "Empty: every active case.")
    run_label = forms.CharField(required=False, label="Response run label", help_text="Only responses with this label.")
    limit = forms.IntegerField(required=False, min_value=1, max_value=MAX_FORM_COUNT, label="Limit (items)",
                               help_text="At most this many responses, lowest ids first.")
    judge = forms.CharField(max_length=120, label="Judge model",
                            help_text="The primary judge; the fallback and secondary judges come from the settings.")
    other_judges = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Compare with other judges",
        help_text=f"One model per line (up to {MAX_JUDGES - 1}): a run per judge on the same responses, for the "
                  "judge comparison check (§6.3.2).")
    repeats = forms.IntegerField(
        initial=1, min_value=1, max_value=MAX_REPEATS, label="Runs per judge",
        help_text="More than 1: a series of repeated runs on the same responses (§8.4); reports average them.")
    budget = forms.DecimalField(
        required=False, min_value=Decimal("0.000001"), max_digits=12, decimal_places=6,
        label="Budget per run", help_text="Stop sending calls once a run has cost this much (in "
                                          f"{setting('CURRENCY')}). Empty: no limit.")
    label = forms.CharField(required=False, max_length=100, help_text="A name for the run(s).")

    # The service's refusals that are about one field go on that field.
    SERVICE_ERROR_FIELDS = {"bad_case_filter": "cases", "unknown_model": "models", "bad_limit": "limit",
                            "bad_budget": "budget", "bad_repeats": "repeats", "duplicate_judge": "other_judges",
                            "too_many_judges": "other_judges"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rubric"].initial = rubric_active()
        self.fields["judge"].initial = setting("JUDGE_PRIMARY_MODEL")

    def add_service_error(self, exc: ValidationError) -> None:
        self.add_error(self.SERVICE_ERROR_FIELDS.get(str(getattr(exc, "code", ""))), exc)

    def judges(self) -> list[str]:
        data = self.cleaned_data
        others = [line.strip() for line in (data.get("other_judges") or "").splitlines() if line.strip()]
        return [data["judge"].strip(), *others]

    def selection(self) -> RunChoices:
        """The keyword arguments of `judge_runs_create` besides rubric, judges and repeats."""
        data = self.cleaned_data
        return {"models": [m.name for m in data["models"]], "cases": data["cases"] or None,
                "run_label": data["run_label"] or None, "limit": data["limit"], "label": data["label"],
                "budget": data["budget"]}


class JudgeRunResumeForm(forms.Form):
    budget = forms.DecimalField(required=False, min_value=Decimal("0.000001"), max_digits=12, decimal_places=6,
                                label="New budget", help_text="Only for a run stopped at its budget: a higher one.")
