"""The adjudicator's decision form: a 0–3 gold score per sub-dimension, a reason and a note."""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from accounts.forms import ServiceErrorsForm
from annotations.models import AdjudicationDecision


def gold_field_name(key: str) -> str:
    return f"gold_{key}"


class DecisionForm(ServiceErrorsForm):
    # No reason chosen in advance: the lead must say why (a preselected one was recorded unread).
    # The reasons' labels are messages (evaluations.domain.LABELS): shown in the interface language.
    reason = forms.ChoiceField(
        choices=[("", gettext_lazy("— choose a reason —")),
                 *((value, gettext_lazy(label)) for value, label in AdjudicationDecision.Reason.choices)],
        label=gettext_lazy("Reason"),
        error_messages={"required": gettext_lazy("Choose the reason for this decision.")})
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=4000,
                           label=gettext_lazy("Note"))

    def __init__(self, *args: Any, keys: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys = keys
        for key in keys:
            self.fields[gold_field_name(key)] = forms.TypedChoiceField(
                choices=[(i, str(i)) for i in range(4)], coerce=int, label=key, widget=forms.RadioSelect)

    def rows(self, sub_dimensions: list[Any]) -> list[tuple[Any, forms.BoundField]]:
        """(sub-dimension, its gold-score field), in the rubric's order, for the template."""
        return [(sub, self[gold_field_name(sub.key)]) for sub in sub_dimensions]

    def scores(self) -> dict[str, int]:
        return {key: self.cleaned_data[gold_field_name(key)] for key in self.keys}

    def service_field(self, name: str) -> str:
        """A sub-dimension key the service names is its gold-score field."""
        return gold_field_name(name) if name in self.keys else name
