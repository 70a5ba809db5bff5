"""Forms of the studies pages: a new version of a study's report, a judge run, and the upload's steps."""
from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from django import forms
from django.conf import settings

from accounts.forms import ServiceErrorsForm
from evaluations.domain import MAX_FORM_COUNT
from evidence.kit.meta import DEFAULT_RESAMPLES
from evidence.services import MAX_RESAMPLES
from stats.ratingfile import DESCRIPTIONS

from .importing import DEFAULT_DIMENSION, LONG_REQUIRED
from .scales import DeclaredScale, scale_option
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
    limit = forms.IntegerField(required=False, min_value=1, max_value=MAX_FORM_COUNT, help_text="At most this many calls (a trial run).")

    def __init__(self, *args: object, study_dimensions: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["dimensions"].choices = [(key, key) for key in study_dimensions or []]  # type: ignore[attr-defined]


# --- the upload page (upload → preview and mapping → confirm) ------------------------------------------------

FORMAT_CHOICES = [
    ("long", "Long — one row per rating (CSV or JSONL): item, rater, score, and optionally dimension, rater_kind"),
    ("wide", "Wide — one CSV row per item, one column per rater"),
    ("judge-bench", "JUDGE-BENCH — a dataset JSON file as published (its metrics say their own levels)"),
]
LEVEL_CHOICES = [
    ("nominal", "Nominal — categories with no order (yes/no, a label): any disagreement counts the same."),
    ("ordinal", "Ordinal — ordered categories whose distances are unknown (the 0–3 rubric, a Likert scale)."),
    ("interval", "Interval — numbers with equal steps but no true zero (a 1–100 slider, a rescaled score)."),
    ("ratio", "Ratio — numbers with a true zero, where twice means twice (a count, a duration)."),
]
NONE_CHOICE = ("", "— none: use the default below —")


def upload_max_bytes() -> int:
    """The largest file the upload page accepts (IMPORT_MAX_UPLOAD_BYTES, like every import page)."""
    return int(getattr(settings, "IMPORT_MAX_UPLOAD_BYTES", 50 * 1024 * 1024))


def too_large_message(size: int) -> str:
    return (f"The upload is {size / 1048576:.1f} MB; imports are limited to {upload_max_bytes() / 1048576:.0f} MB "
            "(IMPORT_MAX_UPLOAD_BYTES). Split the file, or import it with manage.py import_ratings.")


class StudyUploadForm(forms.Form):
    """Step 1: the study to import into, the file's format and the file."""

    study = forms.CharField(max_length=200, label="Study name",
                            help_text="A new name creates the study; an existing one adds to it (a changed score is "
                                      "updated, the same file twice changes nothing).")
    fmt = forms.ChoiceField(choices=FORMAT_CHOICES, initial="long", widget=forms.RadioSelect, label="Format")
    file = forms.FileField(help_text="CSV, JSONL or JSON. The next step shows its first rows.")

    def clean_study(self) -> str:
        name = self.cleaned_data["study"].strip()
        if not name:
            raise forms.ValidationError("Give the study a name.", code="required")
        return name

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > upload_max_bytes():
            raise forms.ValidationError(too_large_message(upload.size), code="too_large")
        suffix = Path(upload.name or "").suffix.lower()
        if suffix not in (".csv", ".jsonl", ".ndjson", ".json"):
            raise forms.ValidationError(f"Use a .csv, .jsonl or .json file, not {suffix or 'a file without suffix'}.",
                                        code="suffix")
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload, fmt = data.get("file"), data.get("fmt")
        if upload is not None and fmt:
            suffix = Path(upload.name or "").suffix.lower()
            if fmt == "judge-bench" and suffix != ".json":
                self.add_error("file", "A JUDGE-BENCH dataset is a .json file.")
            elif fmt == "wide" and suffix != ".csv":
                self.add_error("file", "A wide file is a .csv file.")
            elif fmt == "long" and suffix == ".json":
                self.add_error("file", "A long file is .csv or .jsonl (one JSON object a line); for a JUDGE-BENCH "
                                       "dataset choose that format.")
        return data


class ImportOptions(TypedDict, total=False):
    """study_import's keyword arguments chosen on the mapping step (JSON-serialisable, kept in the session): a
    long file's columns, default dimension and rater kind; a wide file's item, rater and judge columns."""

    columns: dict[str, str]
    id_column: str
    rater_columns: list[str]
    judge_columns: list[str]
    dimension: str
    rater_kind: str
    level: str
    scale: DeclaredScale | None  # issue 32: the uploader's scale; None: inferred from the file


class StudyMappingForm(forms.Form):
    """Step 2: which of the file's columns is which (long, wide) and the level of measurement."""

    def __init__(self, *args: Any, fmt: str, header: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fmt = fmt
        columns = [(name, name) for name in header]
        if fmt == "long":
            for canonical in LONG_REQUIRED:
                self.fields[canonical] = forms.ChoiceField(
                    choices=[("", "— choose a column —"), *columns], label=f"{canonical} column",
                    help_text=DESCRIPTIONS[canonical].capitalize() + ".")
            for canonical in ("dimension", "rater_kind", "group"):
                self.fields[canonical] = forms.ChoiceField(
                    choices=[NONE_CHOICE, *columns], required=False, label=f"{canonical} column",
                    help_text=DESCRIPTIONS[canonical].capitalize() + ".")
            self.fields["default_dimension"] = forms.CharField(
                max_length=120, initial=DEFAULT_DIMENSION, label="Dimension when there is no dimension column")
            self.fields["default_kind"] = forms.ChoiceField(
                choices=[("human", "human"), ("judge", "judge")], initial="human",
                label="Rater kind when there is no rater_kind column")
        elif fmt == "wide":
            self.fields["id_column"] = forms.ChoiceField(choices=[("", "— choose a column —"), *columns],
                                                         label="Item column", help_text="The column naming the item.")
            self.fields["rater_columns"] = forms.MultipleChoiceField(
                choices=columns, widget=forms.CheckboxSelectMultiple, label="Rater columns",
                help_text="One column per rater; an empty cell is a missing rating.")
            self.fields["judge_columns"] = forms.MultipleChoiceField(
                choices=columns, widget=forms.CheckboxSelectMultiple, required=False, label="Which of them are judges")
            self.fields["default_dimension"] = forms.CharField(max_length=120, initial=DEFAULT_DIMENSION,
                                                               label="Dimension the columns rate")
        if fmt in ("long", "wide"):
            self.fields["level"] = forms.ChoiceField(
                choices=LEVEL_CHOICES, initial="ordinal", widget=forms.RadioSelect, label="Level of measurement",
                help_text="Decides how far apart two different scores are for Krippendorff's α.")
            self.fields["scale_min"] = forms.FloatField(
                required=False, label="Scale minimum",
                help_text="The lowest score the scale allows. Empty: inferred from the file (the next step states it).")
            self.fields["scale_max"] = forms.FloatField(required=False, label="Scale maximum",
                                                        help_text="The highest score the scale allows.")
            self.fields["categories"] = forms.CharField(
                required=False, max_length=500, label="Categories (nominal)",
                help_text="The category codes, comma-separated (e.g. 0,1,2); empty: the codes in the file.")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.fmt == "long":
            picked = [str(data[c]) for c in (*LONG_REQUIRED, "dimension", "rater_kind", "group") if data.get(c)]
            twice = sorted({p for p in picked if picked.count(p) > 1})
            if twice:
                raise forms.ValidationError(f"The column {twice[0]!r} is chosen for two roles.", code="twice")
        if self.fmt == "wide":
            raters = data.get("rater_columns") or []
            if data.get("id_column") in raters:
                self.add_error("rater_columns", "The item column cannot also be a rater.")
            stray = [c for c in data.get("judge_columns") or [] if c not in raters]
            if stray:
                self.add_error("judge_columns", f"{', '.join(stray)}: tick it as a rater column too.")
        if "scale_min" in self.fields:
            try:
                data["scale"] = scale_option(data.get("scale_min"), data.get("scale_max"), data.get("categories") or "")
            except ValueError as exc:
                field, _, message = str(exc).partition(": ")
                self.add_error(field if field in self.fields else None, message)
        return data

    def import_options(self) -> ImportOptions:
        """study_import's keyword arguments for the cleaned choices (JSON-serialisable, kept in the session)."""
        data = self.cleaned_data
        if self.fmt == "long":
            return {"columns": {c: data.get(c) or "" for c in (*LONG_REQUIRED, "dimension", "rater_kind", "group")},
                    "dimension": data["default_dimension"].strip() or DEFAULT_DIMENSION,
                    "rater_kind": data["default_kind"], "level": data["level"], "scale": data.get("scale")}
        if self.fmt == "wide":
            return {"id_column": data["id_column"], "rater_columns": list(data["rater_columns"]),
                    "judge_columns": list(data.get("judge_columns") or []),
                    "dimension": data["default_dimension"].strip() or DEFAULT_DIMENSION, "level": data["level"],
                    "scale": data.get("scale")}
        return {}
