"""The form that asks for a new report version."""
from __future__ import annotations

from django import forms

from accounts.forms import ServiceErrorsForm
from evaluations.judge.selectors import judge_runs_finished_choices
from evidence.kit.meta import DEFAULT_RESAMPLES, DEFAULT_SEED
from evidence.services import MAX_RESAMPLES


class SnapshotRequestForm(ServiceErrorsForm):
    """Which judge run to compare with, and the bootstrap's seed and number of resamples."""

    run = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, label="Judge run",
        choices=lambda: [("", "The newest finished run on the cycle's rubric"), *judge_runs_finished_choices()],
        help_text="Finished runs that scored something: id, date, judge, the models judged, rubric, items scored.")
    seed = forms.IntegerField(initial=DEFAULT_SEED, min_value=0, max_value=2**63 - 1)
    n_resamples = forms.IntegerField(initial=DEFAULT_RESAMPLES, min_value=0, max_value=MAX_RESAMPLES,
                                     label="Bootstrap resamples", help_text="0 turns the intervals off.")
