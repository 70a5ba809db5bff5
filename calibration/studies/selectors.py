"""Reads of a study: its rows and dimensions as the report builder takes them, and its live reliability (the
coefficients and intervals of `manage.py irr`, from the same `stats.reliability.reliability_summary`)."""
from __future__ import annotations

from django.db.models import Count, QuerySet

from evidence.kit.trees import JsonObject

from ..models import Study, StudyJudgeRun, StudyScore
from .report import DimensionInfo, StudyProvenance, StudyRow, study_report_build


def study_rows(*, study: Study) -> list[StudyRow]:
    """Every score of the study as a report input row (one query)."""
    return [
        StudyRow(item, dimension, rater, kind, value, group)
        for item, dimension, rater, kind, value, group in StudyScore.objects.filter(item__study=study).values_list(
            "item__external_id", "dimension__key", "rater__name", "rater__kind", "value", "rater__group")
    ]


def study_dimensions(*, study: Study) -> list[DimensionInfo]:
    return [DimensionInfo(d.key, d.level, d.scale_min, d.scale_max) for d in study.dimensions.order_by("id")]


def study_reliability(*, study: Study, n_resamples: int = 1000, seed: int = 0) -> JsonObject:
    """Per dimension: the humans' reliability summary (α at the dimension's level with its interval, ICC,
    agreement, κ, AC1/AC2 …), each judge's agreement with them, and the same per rater group: the JSON that
    `manage.py study_report` prints (the study report's JSON with the study's name and source first)."""
    report = study_report_build(study_rows(study=study), dimensions=study_dimensions(study=study),
                                n_resamples=n_resamples, seed=seed,
                                meta=StudyProvenance(study=study.name, source=study.source))
    return {"study": study.name, "source": study.source, **report.to_json()}


def study_by_ref(*, ref: str) -> Study | None:
    """The study whose id (digits) or name is `ref`, or None; an id is tried before a name."""
    found = Study.objects.filter(pk=int(ref)).first() if ref.isascii() and ref.isdigit() else None
    return found or Study.objects.filter(name=ref).first()


def study_by_name(*, name: str) -> Study | None:
    """The study with exactly this name, or None."""
    return Study.objects.filter(name=name).first()


def study_names(*, limit: int = 20) -> list[str]:
    """The names of the first `limit` studies (for a message listing what exists)."""
    return list(Study.objects.values_list("name", flat=True)[:limit])


def studies_by_id() -> list[Study]:
    """Every study, oldest first."""
    return list(Study.objects.order_by("pk"))

def studies_listing() -> QuerySet[Study]:
    """Every study with its numbers of items, raters and dimensions, by name (the list page)."""
    return Study.objects.annotate(n_items=Count("items", distinct=True), n_raters=Count("raters", distinct=True),
                                  n_dimensions=Count("dimensions", distinct=True)).order_by("name")


def studies_with_dimensions() -> QuerySet[Study]:
    """Every study, its dimensions prefetched (the API's list)."""
    return Study.objects.prefetch_related("dimensions")


def study_named(*, name: str) -> Study | None:
    """The study of this name with its number of items (`n_items`), or None."""
    return Study.objects.filter(name=name).annotate(n_items=Count("items")).first()


def study_judge_runs_recent(*, study: Study, limit: int = 20) -> list[StudyJudgeRun]:
    """The study's newest judge runs, newest first."""
    return list(StudyJudgeRun.objects.filter(study=study).order_by("-id")[:limit])
