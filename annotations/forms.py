"""Forms of the scoring pages: the scoring form (one 0–3 field per sub-dimension), skip, reopen, heartbeat.

The scoring form is built from the rubric's sub-dimensions of the item, so its fields are exactly the
radio groups the page shows (`score-<key>`); what the page's JavaScript and htmx send is unchanged.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy

from accounts.forms import ServiceErrorsForm
from accounts.models import User
from evaluations.methodology import SCALE

from .selectors import EnteredValues
from .services import RATIONALE_MAX_LENGTH, AnnotationInput, annotation_completeness_errors

SCORE_PREFIX = "score-"
BROKEN_NOTE_MAX_LENGTH = 500


class SubDimensionLike(Protocol):
    """A rubric sub-dimension, or the scoring page's view of one."""

    @property
    def key(self) -> str: ...

    @property
    def name(self) -> str: ...


def score_field_name(key: str) -> str:
    return f"{SCORE_PREFIX}{key}"


class ScoringForm(ServiceErrorsForm):
    """Scores 0–3 per sub-dimension (empty = not scored yet), rationale and the broken-item flag.

    `complete=True` (submit) also asks for what a submission needs: every sub-dimension scored, and a
    rationale when any score is 0 or 3 — the service's own rule (`annotation_completeness_errors`).
    A `score-<key>` field for a sub-dimension the item is not scored on (unknown, or of another dimension,
    rubric or tradition) is refused by name: silently dropping it would store an empty draft instead.
    """

    rationale = forms.CharField(required=False, max_length=RATIONALE_MAX_LENGTH, widget=forms.Textarea)
    flagged_broken = forms.BooleanField(required=False)
    broken_note = forms.CharField(required=False, max_length=BROKEN_NOTE_MAX_LENGTH)

    def __init__(self, *args: Any, sub_dimensions: Sequence[SubDimensionLike], complete: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sub_dimensions = list(sub_dimensions)
        self.complete = complete
        for sub in self.sub_dimensions:
            self.fields[score_field_name(sub.key)] = forms.TypedChoiceField(
                label=sub.name, choices=[(level.score, level.label) for level in SCALE], coerce=int,
                required=False, empty_value=None, widget=forms.RadioSelect,
                error_messages={"invalid_choice": "Scores are whole numbers from 0 to 3."},
            )

    @property
    def keys(self) -> list[str]:
        return [sub.key for sub in self.sub_dimensions]

    @property
    def unknown_fields(self) -> list[str]:
        """The posted `score-…` fields that are not sub-dimensions of this item, in the order sent."""
        return [name for name in self.data if name.startswith(SCORE_PREFIX) and name not in self.fields]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in self.unknown_fields:
            self.add_error(None, ValidationError(
                "%(field)s: “%(key)s” is not a sub-dimension of this item (it is scored on %(keys)s). Nothing was saved.",
                code="unknown_sub_dimension",
                params={"field": name, "key": name[len(SCORE_PREFIX):], "keys": ", ".join(self.keys) or "nothing"}))
        if self.complete and not self.errors:
            for field, messages in annotation_completeness_errors(keys=self.keys, data=self.annotation_input()).items():
                if field == "scores":
                    self.add_error(None, messages)
                    for key in self.keys:
                        if data.get(score_field_name(key)) is None:
                            self.add_error(score_field_name(key), "Score this sub-dimension.")
                else:
                    self.add_error(field, messages)
        return data

    def annotation_input(self) -> AnnotationInput:
        """The cleaned values as the services take them (scores left empty are not in `scores`)."""
        data = self.cleaned_data
        scores = {key: data[score_field_name(key)] for key in self.keys
                  if data.get(score_field_name(key)) is not None}
        return AnnotationInput(scores=scores, rationale=data.get("rationale", ""),
                               flagged_broken=bool(data.get("flagged_broken")), broken_note=data.get("broken_note", ""))

    def entered(self) -> EnteredValues:
        """What the expert entered, to show it again next to the errors (a score that is not valid is left out)."""
        scores = {name[len(SCORE_PREFIX):]: value for name in self.fields
                  if name.startswith(SCORE_PREFIX) and (value := self._entered(name)) is not None}
        return {"scores": scores, "rationale": self._entered("rationale"),
                "flagged_broken": self._entered("flagged_broken"), "broken_note": self._entered("broken_note")}

    def _entered(self, name: str) -> Any:
        """One field's value as it cleans (a posted form value: any type), else as sent (None for a score)."""
        field = self.fields[name]
        try:
            return field.clean(field.widget.value_from_datadict(self.data, self.files, self.add_prefix(name)))
        except ValidationError:
            return None if name.startswith(SCORE_PREFIX) else self.data.get(name, "")

    def score_rows(self, sub_dimensions: Sequence[Any]) -> list[tuple[Any, forms.BoundField]]:
        """(sub-dimension as shown, its score field) in the rubric's order, for the template."""
        return [(sub, self[score_field_name(sub.key)]) for sub in sub_dimensions]

    def error_text(self) -> str:
        """Every error in one line, each named by its field, for the autosave status."""
        parts = []
        for name, errors in self.errors.items():
            label = self[name].label if name in self.fields else None
            for message in errors:
                parts.append(f"{label}: {message}" if label else str(message))
        return " ".join(parts)


class SkipForm(forms.Form):
    """"Outside my expertise": only the broken-item flag and note are kept."""

    flagged_broken = forms.BooleanField(required=False)
    broken_note = forms.CharField(required=False, max_length=BROKEN_NOTE_MAX_LENGTH)


class ReopenForm(forms.Form):
    note = forms.CharField(max_length=500, required=False)


class HeartbeatForm(forms.Form):
    seconds = forms.IntegerField(min_value=0, max_value=3600)



class ExpertChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: User) -> str:
        return f"{obj.display_name} <{obj.email}>" if obj.display_name else obj.email


class ReassignForm(forms.Form):
    """Choose the member of the assignment's panel who takes it over (only qualified members are offered)."""

    to_expert = ExpertChoiceField(queryset=None, label=gettext_lazy("Give it to"), empty_label=None)

    def __init__(self, *args: Any, candidates: QuerySet[User], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["to_expert"]
        assert isinstance(field, ExpertChoiceField)
        field.queryset = candidates
