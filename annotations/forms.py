"""Parsing the scoring form: `score-<key>` radio values, rationale, broken-item flag."""
from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet
from django.http import QueryDict

from accounts.models import User

from .services import AnnotationInput

SCORE_PREFIX = "score-"


def annotation_input_parse(data: QueryDict) -> AnnotationInput:
    """Turn the posted form into service input; a value that is not 0–3 is passed on for the service to reject."""
    scores: dict[str, int] = {}
    for name in data:
        value = data.get(name, "") or ""
        if not name.startswith(SCORE_PREFIX) or value == "":
            continue
        key = name[len(SCORE_PREFIX) :]
        try:
            scores[key] = int(value)
        except ValueError:
            scores[key] = -1  # rejected by the service with a clear message
    return AnnotationInput(
        scores=scores,
        rationale=data.get("rationale", "").strip(),
        flagged_broken=data.get("flagged_broken") in ("on", "1", "true"),
        broken_note=data.get("broken_note", "").strip(),
    )


class ReopenForm(forms.Form):
    note = forms.CharField(max_length=500, required=False)


class HeartbeatForm(forms.Form):
    seconds = forms.IntegerField(min_value=0, max_value=3600)



class ExpertChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: User) -> str:  # type: ignore[override]
        return f"{obj.display_name} <{obj.email}>" if obj.display_name else obj.email


class ReassignForm(forms.Form):
    """Choose the member of the assignment's panel who takes it over (only qualified members are offered)."""

    to_expert = ExpertChoiceField(queryset=User.objects.none(), label="Give it to", empty_label=None)

    def __init__(self, *args: Any, candidates: QuerySet[User], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["to_expert"]
        assert isinstance(field, ExpertChoiceField)
        field.queryset = candidates
