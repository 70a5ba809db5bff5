"""Forms of the Delphi pages: creating a study, an expert's allocation (one Decimal field per weight), approval."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy

from accounts.selectors import users_active_non_admin
from annotations.selectors import panel_choices
from evaluations.models import RubricVersion
from evaluations.selectors import rubric_active, rubric_choices, tradition_choices

from .allocation import HUNDRED, MAX_RATIONALE, AllocationInput, allocation_errors
from .models import DEFAULT_PLANNED_ROUNDS, DEFAULT_THRESHOLD
from .selectors import DIMENSION_GROUP, Feedback, WeightField, WeightStructure, study_name_taken


class StudyCreateForm(forms.Form):
    """A study on a rubric version: a tradition's panel and/or chosen experts, rounds and convergence rule."""

    name = forms.CharField(max_length=120, label=gettext_lazy("Name"))
    rubric = forms.ModelChoiceField(queryset=rubric_choices(), label=gettext_lazy("Rubric"),
                                    help_text=gettext_lazy("The weights the panel revises."))
    tradition = forms.ModelChoiceField(
        queryset=tradition_choices(), required=False, label=gettext_lazy("Tradition"),
        help_text=gettext_lazy("Empty for a study across traditions (taken from the panel when one is chosen)."),
    )
    panel = forms.ModelChoiceField(queryset=panel_choices(), required=False, label=gettext_lazy("Panel"),
                                   help_text=gettext_lazy("Every member of this panel becomes a panelist."))
    panelists = forms.ModelMultipleChoiceField(
        queryset=users_active_non_admin(),
        required=False, widget=forms.SelectMultiple(attrs={"size": 10}), label=gettext_lazy("Panelists"),
        help_text=gettext_lazy("Further (or instead) individual experts. The methodology asks for at least 5 per "
                               "tradition."),
    )
    planned_rounds = forms.IntegerField(min_value=1, max_value=10, initial=DEFAULT_PLANNED_ROUNDS,
                                        label=gettext_lazy("Planned rounds"),
                                        help_text=gettext_lazy("Methodology §4.3: 3 rounds."))
    convergence_threshold = forms.DecimalField(
        min_value=Decimal("0.01"), max_value=Decimal("100"), decimal_places=2, initial=DEFAULT_THRESHOLD,
        label=gettext_lazy("Convergence threshold"),
        help_text=gettext_lazy("A weight has converged when its IQR is below this many points (§4.3: 10)."),
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
        if study_name_taken(name=name):
            raise forms.ValidationError(gettext("A Delphi study with this name exists."))
        return name

    def clean(self) -> dict:
        data = super().clean() or {}
        panel, tradition = data.get("panel"), data.get("tradition")
        if panel is None and not data.get("panelists"):
            raise forms.ValidationError(gettext("Choose a panel or at least one panelist."))
        if panel is not None and panel.tradition_id and tradition is not None and panel.tradition_id != tradition.pk:
            self.add_error("panel", gettext("This panel belongs to %(panel_tradition)s, not %(tradition)s.")
                           % {"panel_tradition": panel.tradition, "tradition": tradition})
        return data


class ApproveForm(forms.Form):
    version = forms.CharField(max_length=20, required=False, label=gettext_lazy("New rubric version"),
                              help_text=gettext_lazy("Name of the new rubric version; empty for the default."))

    def add_service_error(self, exc: ValidationError) -> None:
        """A refused version name (too long, taken) goes on the version field; anything else on the form."""
        self.add_error("version" if exc.code in ("version_length", "version_taken") else None, exc)


# --- the expert's allocation ------------------------------------------------------------------------------

TENTH = Decimal("0.1")
TOTAL_CODE = "total"


class PointsField(forms.DecimalField):
    """Points for one weight: a whole number or one decimal, 0–100, as a Decimal (never a float).

    Typed as text, like the page's running total reads it: "12,5" is 12.5 and a typographic minus is a
    minus; an exponent ("1e1"), NaN or infinity is not a number of points.
    """

    widget = forms.TextInput
    default_error_messages = {
        "required": gettext_lazy("Enter the points for this weight (0 if none)."),
        "invalid": gettext_lazy("“%(value)s” is not a number: enter a whole number or one decimal, e.g. 25 or 12.5."),
        "min_value": gettext_lazy("Points cannot be negative."),
        "max_value": gettext_lazy("At most 100 points."),
        "max_decimal_places": gettext_lazy("Use at most one decimal place, e.g. 12.5."),
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=Decimal("0"), max_value=HUNDRED, max_digits=None, decimal_places=1, **kwargs)

    def to_python(self, value: Any) -> Any:  # Decimal | None (the stubs type DecimalField's as IntegerField's)
        if value in self.empty_values:
            return None
        text = str(value).strip().replace("\u2212", "-")
        sign, body = (text[0], text[1:]) if text[:1] in ("+", "-") else ("", text)
        whole, _, fraction = body.replace(",", ".").partition(".")
        digits = whole + fraction
        if not (digits.isascii() and digits.isdecimal()):
            raise ValidationError(self.error_messages["invalid"], code="invalid", params={"value": text[:20]})
        return Decimal(f"{sign}{whole or 0}.{fraction}" if fraction else f"{sign}{whole}")

    def clean(self, value: Any) -> Decimal | None:
        points = super().clean(value)
        if points is None:
            return None
        return abs(points).quantize(TENTH) if points == 0 else points.quantize(TENTH)  # "-0" is 0


@dataclass
class AllocationRow:
    """One weight on the page: its points and rationale fields, and last round's feedback."""

    weight: WeightField
    points: forms.BoundField
    rationale: forms.BoundField
    feedback: Feedback | None = None


@dataclass
class AllocationGroup:
    """One level of weights (the six dimensions, or a dimension's sub-dimensions) and its total's errors."""

    id: str
    label: str
    rows: list[AllocationRow]
    errors: list[str]
    name: str = ""
    description: str = ""


class AllocationForm(forms.Form):
    """An expert's allocation: points and an optional rationale per weight; each level totals exactly 100.

    The fields are made from the rubric's weights (`w__<key>`, `r__<key>`). The totals are checked with the
    service's own rule (`allocation.allocation_errors`); a total that is off is a form error of code
    "total" naming its level, shown with that level's fields.
    """

    def __init__(self, *args: Any, structure: WeightStructure, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.structure = structure
        for weight in structure.fields:
            name = gettext(weight.name)  # a rubric name: a glossary term (evaluations.domain.TERMS)
            self.fields[weight.field] = PointsField(label=name)
            self.fields[weight.rationale_field] = forms.CharField(
                label=gettext("Rationale for %(weight)s") % {"weight": name}, required=False,
                max_length=MAX_RATIONALE, widget=forms.Textarea,
                error_messages={"max_length": gettext("Keep the rationale under %(limit)s characters.")
                                % {"limit": MAX_RATIONALE}},
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        points = {w.key: data[w.field] for w in self.structure.fields if data.get(w.field) is not None}
        for key, messages in allocation_errors(points, self.structure.groups).items():
            if key.startswith("total:"):  # a weight's own error is already on its field
                self.add_total_error(key.removeprefix("total:"), messages)
        return data

    def add_total_error(self, group_id: str, messages: list[str]) -> None:
        self.add_error(None, [ValidationError(m, code=TOTAL_CODE, params={"group": group_id}) for m in messages])

    def allocation(self) -> AllocationInput:
        """The cleaned allocation as the service takes it (empty rationales left out)."""
        data = self.cleaned_data
        return AllocationInput(
            points={w.key: data[w.field] for w in self.structure.fields},
            rationales={w.key: data[w.rationale_field] for w in self.structure.fields if data[w.rationale_field]},
        )

    def add_service_error(self, exc: ValidationError) -> None:
        """The service's errors on the fields they name (weight keys), totals on their level, the rest on the form."""
        if not hasattr(exc, "error_dict"):
            self.add_error(None, exc)
            return
        by_key = {w.key: w.field for w in self.structure.fields}
        for key, errors in exc.error_dict.items():
            if key.startswith("total:"):
                self.add_total_error(key.removeprefix("total:"), [m for e in errors for m in e.messages])
            else:
                self.add_error(by_key.get(key), errors)

    def _non_field(self, *, totals: bool) -> list[ValidationError]:
        return [e for e in self.non_field_errors().as_data() if (e.code == TOTAL_CODE) == totals]

    def general_errors(self) -> list[str]:
        """Errors of the whole form that are not about a level's total (e.g. the round just closed)."""
        return [m for e in self._non_field(totals=False) for m in e.messages]

    def groups(self, feedback: dict[str, Feedback]) -> list[AllocationGroup]:
        """The levels in the rubric's order, each with its rows (bound fields, feedback) and its total's errors."""
        totals: dict[str, list[str]] = {}
        for error in self._non_field(totals=True):
            totals.setdefault((error.params or {})["group"], []).extend(error.messages)

        def rows(weights: tuple[WeightField, ...]) -> list[AllocationRow]:
            return [AllocationRow(w, self[w.field], self[w.rationale_field], feedback.get(w.key)) for w in weights]

        structure = self.structure
        result = [AllocationGroup(DIMENSION_GROUP, gettext("The six dimensions"), rows(structure.dimensions),
                                  totals.get(DIMENSION_GROUP, []))]
        for d in structure.dimensions:
            label = gettext("The sub-dimensions of %(dimension)s") % {"dimension": gettext(d.name)}
            result.append(AllocationGroup(d.key, label, rows(structure.subs[d.key]),
                                          totals.get(d.key, []), name=d.name, description=d.description))
        return result
