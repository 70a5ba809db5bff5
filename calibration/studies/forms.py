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
