"""Forms of the Delphi pages. The allocation form is parsed by `allocation.allocation_parse` (Decimal rules)."""
from __future__ import annotations

from decimal import Decimal

from django import forms

from accounts.models import User
from annotations.models import Panel
from evaluations.models import RubricVersion, Tradition
from evaluations.selectors import rubric_active

from ..models import DEFAULT_PLANNED_ROUNDS, DEFAULT_THRESHOLD, DelphiStudy


class StudyCreateForm(forms.Form):
    """A study on a rubric version: a tradition's panel and/or chosen experts, rounds and convergence rule."""

    name = forms.CharField(max_length=120)
    rubric = forms.ModelChoiceField(queryset=RubricVersion.objects.all(), help_text="The weights the panel revises.")
    tradition = forms.ModelChoiceField(
        queryset=Tradition.objects.all(), required=False,
        help_text="Empty for a study across traditions (taken from the panel when one is chosen).",
    )
    panel = forms.ModelChoiceField(queryset=Panel.objects.all(), required=False,
                                   help_text="Every member of this panel becomes a panelist.")
    panelists = forms.ModelMultipleChoiceField(
        queryset=User.objects.filter(is_active=True).exclude(role=User.Role.ADMIN).order_by("display_name", "email"),
        required=False, widget=forms.SelectMultiple(attrs={"size": 10}),
        help_text="Further (or instead) individual experts. The methodology asks for at least 5 per tradition.",
    )
    planned_rounds = forms.IntegerField(min_value=1, max_value=10, initial=DEFAULT_PLANNED_ROUNDS,
                                        help_text="Methodology §4.3: 3 rounds.")
    convergence_threshold = forms.DecimalField(
        min_value=Decimal("0.01"), max_value=Decimal("100"), decimal_places=2, initial=DEFAULT_THRESHOLD,
        help_text="A weight has converged when its IQR is below this many points (§4.3: 10).",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            try:
                self.initial.setdefault("rubric", rubric_active())
            except RubricVersion.DoesNotExist:
                pass

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if DelphiStudy.objects.filter(name=name).exists():
            raise forms.ValidationError("A Delphi study with this name exists.")
        return name

    def clean(self) -> dict:
        data = super().clean() or {}
        panel, tradition = data.get("panel"), data.get("tradition")
        if panel is None and not data.get("panelists"):
            raise forms.ValidationError("Choose a panel or at least one panelist.")
        if panel is not None and panel.tradition_id and tradition is not None and panel.tradition_id != tradition.pk:
            self.add_error("panel", f"This panel belongs to {panel.tradition}, not {tradition}.")
        return data


class ApproveForm(forms.Form):
    version = forms.CharField(max_length=20, required=False,
                              help_text="Name of the new rubric version; empty for the default.")
