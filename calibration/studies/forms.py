"""The form that asks for a new version of a study's report."""
from __future__ import annotations

from django import forms

from accounts.forms import ServiceErrorsForm

from ..reports.snapshots import DEFAULT_RESAMPLES, MAX_RESAMPLES
from .snapshots import DEFAULT_STUDY_SEED


class StudySnapshotRequestForm(ServiceErrorsForm):
    """The bootstrap's seed and number of resamples."""

    seed = forms.IntegerField(initial=DEFAULT_STUDY_SEED, min_value=0, max_value=2**63 - 1)
    n_resamples = forms.IntegerField(initial=DEFAULT_RESAMPLES, min_value=0, max_value=MAX_RESAMPLES,
                                     label="Bootstrap resamples", help_text="0 turns the intervals off.")


class StudyJudgeForm(ServiceErrorsForm):
    """Which judge model scores the study, on which dimensions, and at most how many calls."""

    model = forms.CharField(max_length=200, help_text="Also the judge's rater name in the study.")
    dimensions = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                           help_text="None ticked: every dimension.")
    limit = forms.IntegerField(required=False, min_value=1, help_text="At most this many calls (a trial run).")

    def __init__(self, *args: object, study_dimensions: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["dimensions"].choices = [(key, key) for key in study_dimensions or []]  # type: ignore[attr-defined]
