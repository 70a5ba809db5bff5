"""The forms of the case-review pages: every POST a view reads goes through one of these."""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from annotations.models import Panel
from annotations.selectors import panel_choices
from evaluations.domain import MAX_FORM_COUNT, Difficulty

from .models import CaseReview, TheoBertAudit


def _translated(choices: list[tuple[str, str]]) -> list[tuple[str, Any]]:
    """A model's choices with their labels looked up in the catalogue when the form is drawn."""
    return [(value, gettext_lazy(label)) for value, label in choices]  # noqa: INT001


class CaseReviewForm(forms.Form):
    # The choices' labels are messages (evaluations.domain.LABELS): shown in the interface language.
    valid = forms.ChoiceField(label=gettext_lazy("Is this a valid test of its dimension?"),
                              choices=_translated(CaseReview.Valid.choices), widget=forms.RadioSelect)
    reference_correct = forms.ChoiceField(label=gettext_lazy("Is the reference answer correct for this tradition?"),
                                          choices=_translated(CaseReview.Reference.choices), widget=forms.RadioSelect)
    difficulty = forms.ChoiceField(label=gettext_lazy("How difficult is it?"), choices=_translated(Difficulty.choices),
                                   widget=forms.RadioSelect)
    clarity = forms.TypedChoiceField(label=gettext_lazy("How clear is the question? (0 unclear – 3 perfectly clear)"),
                                     choices=[(str(v), str(v)) for v in range(4)], coerce=int, widget=forms.RadioSelect)
    comment = forms.CharField(label=gettext_lazy("Comment (optional)"), required=False, max_length=5000,
                              widget=forms.Textarea(attrs={"rows": 3}))


class ReviewCycleForm(forms.Form):
    panel: forms.ModelChoiceField[Panel] = forms.ModelChoiceField(queryset=None,  # set in __init__
                                                                  label=gettext_lazy("Panel"))
    name = forms.CharField(max_length=160, required=False, label=gettext_lazy("Name"))
    reviewers = forms.IntegerField(label=gettext_lazy("Reviewers per case"), min_value=3, max_value=20, initial=3)
    sample_size = forms.IntegerField(label=gettext_lazy("Stratified sample size (empty: every case)"), min_value=1,
                                     max_value=MAX_FORM_COUNT, required=False)
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0, required=False, label=gettext_lazy("Seed"))

    def __init__(self, *args: Any, panels: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["panel"].queryset = panels  # type: ignore[attr-defined]


class FlagResolveForm(forms.Form):
    action = forms.ChoiceField(choices=[("revise", gettext_lazy("Revise the case (a new version)")),
                                        ("retire", gettext_lazy("Retire the case")),
                                        ("keep", gettext_lazy("Keep it as it is"))], widget=forms.RadioSelect)
    prompt = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    reference_answer = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}))
    difficulty = forms.ChoiceField(choices=_translated(Difficulty.choices), required=False)
    note = forms.CharField(label=gettext_lazy("Note (why)"), required=False, max_length=5000,
                           widget=forms.Textarea(attrs={"rows": 2}))


class TheoBertAuditForm(forms.Form):
    case_sound = forms.ChoiceField(
        label=gettext_lazy("Is the case sound (target right, foil truly wrong, no ambiguity)?"),
        choices=_translated(TheoBertAudit.Answer.choices), widget=forms.RadioSelect)
    verdict_right = forms.ChoiceField(label=gettext_lazy("Is the scorer's verdict right?"),
                                      choices=_translated(TheoBertAudit.Answer.choices), widget=forms.RadioSelect)
    comment = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2}),
                              label=gettext_lazy("Comment (optional)"))


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
