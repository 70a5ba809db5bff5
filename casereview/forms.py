"""The forms of the case-review pages: every POST a view reads goes through one of these."""
from __future__ import annotations

from typing import Any

from django import forms

from annotations.models import Panel
from annotations.selectors import panel_choices
from evaluations.domain import MAX_FORM_COUNT, Difficulty

from .models import CaseReview, TheoBertAudit


class CaseReviewForm(forms.Form):
    valid = forms.ChoiceField(label="Is this a valid test of its dimension?", choices=CaseReview.Valid.choices,
                              widget=forms.RadioSelect)
    reference_correct = forms.ChoiceField(label="Is the reference answer correct for this tradition?",
                                          choices=CaseReview.Reference.choices, widget=forms.RadioSelect)
    difficulty = forms.ChoiceField(label="How difficult is it?", choices=Difficulty.choices, widget=forms.RadioSelect)
    clarity = forms.TypedChoiceField(label="How clear is the question? (0 unclear – 3 perfectly clear)",
                                     choices=[(str(v), str(v)) for v in range(4)], coerce=int, widget=forms.RadioSelect)
    comment = forms.CharField(label="Comment (optional)", required=False, max_length=5000,
                              widget=forms.Textarea(attrs={"rows": 3}))


class ReviewCycleForm(forms.Form):
    panel: forms.ModelChoiceField[Panel] = forms.ModelChoiceField(queryset=None)  # set in __init__
    name = forms.CharField(max_length=160, required=False)
    reviewers = forms.IntegerField(label="Reviewers per case", min_value=3, max_value=20, initial=3)
    sample_size = forms.IntegerField(label="Stratified sample size (empty: every case)", min_value=1, max_value=MAX_FORM_COUNT,
                                     required=False)
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0, required=False)

    def __init__(self, *args: Any, panels: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["panel"].queryset = panels  # type: ignore[attr-defined]


class FlagResolveForm(forms.Form):
    action = forms.ChoiceField(choices=[("revise", "Revise the case (a new version)"), ("retire", "Retire the case"),
                                        ("keep", "Keep it as it is")], widget=forms.RadioSelect)
    prompt = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    reference_answer = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}))
    difficulty = forms.ChoiceField(choices=Difficulty.choices, required=False)
    note = forms.CharField(label="Note (why)", required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))


class TheoBertAuditForm(forms.Form):
    case_sound = forms.ChoiceField(label="Is the case sound (target right, foil truly wrong, no ambiguity)?",
                                   choices=TheoBertAudit.Answer.choices, widget=forms.RadioSelect)
    verdict_right = forms.ChoiceField(label="Is the scorer's verdict right?", choices=TheoBertAudit.Answer.choices,
                                      widget=forms.RadioSelect)
    comment = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))


class CycleCloseForm(forms.Form):
    close = forms.BooleanField()


class TheoBertRunForm(forms.Form):
    """The audit page's POSTs: which run (its id; the newest when absent), and assign audits to a panel's experts
    or re-score without the rejected cases."""

    run = forms.CharField(required=False)
    assign = forms.BooleanField(required=False)
    rescore = forms.BooleanField(required=False)
    panel = forms.ModelChoiceField(queryset=panel_choices(), required=False)
    per_case = forms.IntegerField(required=False, max_value=MAX_FORM_COUNT)
