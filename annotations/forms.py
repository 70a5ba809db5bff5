"""Parsing the scoring form: `score-<key>` radio values, rationale, broken-item flag."""
from __future__ import annotations

from django import forms
from django.http import QueryDict

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
