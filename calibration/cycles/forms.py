"""Forms of the calibration pages."""
from __future__ import annotations

import secrets
from typing import Any

from django import forms

from annotations.models import (
    CalibrationCycle,
    retest_min_days_default,
    retest_settings_errors,
    retest_share_default,
)
from annotations.selectors import cycle_choices, panel_choices

from .sampling import DrawParams
from .selectors import cycle_name_taken
from .services import RetestSettings


def random_seed() -> int:
    return secrets.randbelow(2**31)


class DrawForm(forms.Form):
    """Parameters of a calibration draw; the same values reproduce the same draw."""

    name = forms.CharField(max_length=120)
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, help_text="Recorded with the cycle.")
    min_per_dimension = forms.IntegerField(
        min_value=1, max_value=10_000, initial=50, help_text="Methodology §6.1.3: at least 50 per dimension."
    )
    refresh_fraction = forms.DecimalField(min_value=0, max_value=1, decimal_places=2, initial="0.25",
                                          help_text="Share of the previous cycle's non-anchor items replaced.")
    edge_fraction = forms.DecimalField(min_value=0, max_value=1, decimal_places=2, initial="0.10",
                                       help_text="Share of new draws taken from edge cases.")
    strategy = forms.ChoiceField(
        choices=CalibrationCycle.DrawStrategy.choices, initial=CalibrationCycle.DrawStrategy.PROPORTIONAL,
        label="Draw strategy", required=False,
        help_text="Proportional: places per stratum in proportion to its size. Active: more places where the judge "
                  "disagrees most with the experts so far (Neyman allocation), every response keeping a chance > 0.")
    previous = forms.ModelChoiceField(queryset=cycle_choices(), required=False,
                                      help_text="Keep its anchors and refresh the rest.")
    neutral_panel = forms.ModelChoiceField(queryset=panel_choices(), required=False,
                                           help_text="The panel that scores tradition-neutral items.")
    show_reference_answers = forms.BooleanField(required=False)
    retest_enabled = forms.BooleanField(
        required=False, initial=True, label="Re-serve items for test–retest",
        help_text="Blind: an expert gets a share of the items they submitted again, unmarked, to measure their "
                  "intra-rater agreement. Re-served scores never count in any report or estimate.")
    retest_share = forms.DecimalField(
        required=False, label="Re-serve share", decimal_places=3, max_digits=6, initial=retest_share_default,
        help_text="Share of each expert's submitted items re-served: more than 0 and at most 0.5 (0.05 = 5 %).")
    retest_min_days = forms.IntegerField(
        required=False, label="Re-serve after (days)", initial=retest_min_days_default,
        help_text="No item comes back sooner than this many days after the expert submitted it.")
    fingerprint = forms.CharField(required=False, widget=forms.HiddenInput)
    # Sent by the button pressed ("Preview the draw" or "Commit"), not rendered as a field.
    action = forms.ChoiceField(choices=[("preview", "Preview"), ("commit", "Commit")], required=False)

    @property
    def commit(self) -> bool:
        return self.cleaned_data.get("action") == "commit"

    def with_fingerprint(self, fingerprint: str) -> DrawForm:
        """The same entries, bound again with the fingerprint of the draw just previewed (for "Commit")."""
        # QueryDict.dict(): one value per field. Unpacking the QueryDict itself copied its internal lists, and the
        # preview then rendered value="['1500306342']" in the number inputs, which browsers reject (left empty).
        data = self.data.dict() if hasattr(self.data, "dict") else dict(self.data)
        return DrawForm({**data, "fingerprint": fingerprint})  # every field of this form is single-valued

    def params(self) -> DrawParams:
        data = self.cleaned_data
        return DrawParams(
            seed=data["seed"], min_per_dimension=data["min_per_dimension"],
            refresh_fraction=float(data["refresh_fraction"]), edge_fraction=float(data["edge_fraction"]),
            strategy=data.get("strategy") or CalibrationCycle.DrawStrategy.PROPORTIONAL,
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "retest_share" in self.errors or "retest_min_days" in self.errors:
            return data
        if data.get("retest_share") is None:  # left empty: the site's default (settings.RETEST_SHARE)
            data["retest_share"] = retest_share_default()
        if data.get("retest_min_days") is None:
            data["retest_min_days"] = retest_min_days_default()
        for field, message in retest_settings_errors(
            enabled=bool(data.get("retest_enabled")), share=data.get("retest_share"),
            min_days=data.get("retest_min_days"),
        ).items():
            self.add_error(field, message)
        return data

    def retest_settings(self) -> RetestSettings:
        data = self.cleaned_data
        return RetestSettings(enabled=bool(data.get("retest_enabled")), share=data["retest_share"],
                              min_days=data["retest_min_days"])

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if cycle_name_taken(name=name):
            raise forms.ValidationError("A cycle with this name exists.")
        return name



class CycleReasonForm(forms.Form):
    """Why a cycle is being closed or reopened; written to the cycle's audit trail (required to reopen)."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)

    def __init__(self, *args: Any, reason_required: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].required = reason_required
