"""The form that queues a new version of a run's calibrated leaderboard."""
from __future__ import annotations

from typing import Any

from django import forms

from accounts.forms import ServiceErrorsForm
from annotations.models import CalibrationCycle
from evaluations.models import JudgeRun
from evidence.services import MAX_RESAMPLES

from .build import DEFAULT_MARGIN, DEFAULT_TARGET_HALF_WIDTH
from .selectors import calibrated_label_cycles
from .snapshots import DEFAULT_RESAMPLES, DEFAULT_SEED


class CalibratedRequestForm(ServiceErrorsForm):
    cycle: forms.ModelChoiceField[CalibrationCycle] = forms.ModelChoiceField(
        queryset=None, label="Expert labels from",  # the run's cycles, set in __init__
        help_text="The calibration cycle whose expert scores correct the judge's.")
    target_half_width = forms.FloatField(
        initial=DEFAULT_TARGET_HALF_WIDTH, min_value=0.001, max_value=1, label="Target half-width",
        help_text="Composite points (0–1) the evidence meter aims at, per model and per dimension.")
    margin = forms.FloatField(
        initial=DEFAULT_MARGIN, required=False, label="Equivalence margin",
        help_text="Composite points (0–1): two models, or the judge and the experts, whose gap is surely inside "
                  "±margin are called equivalent; above 0 and below 1.")
    seed = forms.IntegerField(initial=DEFAULT_SEED, min_value=0, max_value=2**63 - 1)
    n_resamples = forms.IntegerField(initial=DEFAULT_RESAMPLES, min_value=0, max_value=MAX_RESAMPLES,
                                     label="Bootstrap resamples", help_text="For the judge-only intervals.")

    def __init__(self, *args: Any, run: JudgeRun, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cycles = calibrated_label_cycles(run=run)
        field = self.fields["cycle"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = cycles
        if not self.is_bound:
            field.initial = cycles.first()
