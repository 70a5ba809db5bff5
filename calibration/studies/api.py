"""API of external rating studies: create a study, push ratings in bulk (the long format's rules, all or nothing,
idempotent). Its reports are snapshots, requested and read under /api/v1/reports/ (calibration.api). Admins;
tokens need data:write to write and reports:read to read."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from stats.alpha import LEVELS

from ..models import Study, StudyJudgeRun
from .importing import Dimension, StudyImportFailed, study_ratings_import
from .judging import study_judge_run_cancel, study_judge_run_start
from .selectors import studies_with_dimensions
from .services import study_create, study_data

MAX_RATINGS = 20_000
MAX_RESAMPLES = 10_000


class DimensionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=120)
    level = serializers.ChoiceField(choices=LEVELS, default="ordinal")
    scale_min = serializers.FloatField(required=False, allow_null=True, default=None)
    scale_max = serializers.FloatField(required=False, allow_null=True, default=None)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        low, high = attrs.get("scale_min"), attrs.get("scale_max")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"scale_max": "must not be below scale_min"})
        return attrs


class StudySerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    source = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    dimensions = DimensionSerializer(many=True, required=False, default=list)


class RatingSerializer(serializers.Serializer):
    """One rating; field names follow the rating-file vocabulary (docs/rating-files.md): `unit` for `item`,
    `value` or `rating` for `score`, and so on."""

    item = serializers.CharField(help_text="Also accepted as unit, item_id, unit_id.")
    dimension = serializers.CharField(required=False, help_text="Default: score. Also accepted as metric, criterion.")
    rater = serializers.CharField(help_text="Also accepted as rater_id, annotator, coder.")
    rater_kind = serializers.ChoiceField(choices=["human", "judge"], required=False,
                                         help_text="Default: human. Also accepted as kind, rater_type.")
    score = serializers.FloatField(help_text="Also accepted as value, rating.")
    group = serializers.CharField(required=False, allow_blank=True, help_text="Also accepted as rater_group.")


class RatingsResultSerializer(serializers.Serializer):
    study = serializers.CharField()
    items = serializers.IntegerField()
    raters = serializers.IntegerField()
    scores = serializers.IntegerField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ErrorsSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.CharField())


class _BadBody(Exception):
    pass


def _body(request: Request) -> Any:
    try:
        return request.data
    except ParseError as exc:
        raise _BadBody(f"the body is not JSON: {exc.detail}") from None


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    """DRF's nested validation errors as 'field: message' lines (the shape every 400 of this API has)."""
    if isinstance(detail, dict):
        return [line for key, value in detail.items() for line in _flatten(value, f"{prefix}{key}.")]
    if isinstance(detail, list):
        if all(not isinstance(v, dict | list) for v in detail):
            return [f"{prefix.rstrip('.')}: {v}" for v in detail]
        return [line for i, value in enumerate(detail) for line in _flatten(value, f"{prefix}{i}.")]
    return [f"{prefix.rstrip('.')}: {detail}"]


def _errors(detail: str, errors: list[str], status: int = 400) -> Response:
    return Response({"detail": detail, "errors": errors}, status=status)


class StudiesAPIView(APIView):
    """GET: the studies. POST: create one with its dimensions; the same study posted again answers 200 with it,
    a different one under a taken name 409."""

    token_scope = {"GET": "reports:read", "POST": "data:write"}

    @extend_schema(operation_id="studies_list", responses=StudySerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response([study_data(s) for s in studies_with_dimensions()])

    @extend_schema(operation_id="studies_create", request=StudySerializer,
                   responses={200: StudySerializer, 201: StudySerializer, 400: ErrorsSerializer, 409: ErrorsSerializer})
    def post(self, request: Request) -> Response:
        try:
            serializer = StudySerializer(data=_body(request))
        except _BadBody as exc:
            return _errors(str(exc), [f"body: {exc}"])
        if not serializer.is_valid():
            return _errors("invalid study", _flatten(serializer.errors))
        data = serializer.validated_data
        try:
            study, created = study_create(name=data["name"], description=data["description"], source=data["source"],
                                          dimensions=[dict(d) for d in data["dimensions"]])
        except ValidationError as exc:
            problems = [f"{field}: {m}" for field, ms in exc.message_dict.items() for m in ms]
            if exc.error_dict.get("name"):
                return _errors("a different study has this name", problems, status=409)
            return _errors("a dimension is named twice", problems)
        return Response(study_data(study), status=201 if created else 200)


class StudyRatingsAPIView(APIView):
    """Add or update ratings in bulk (the long format's fields); a bad rating anywhere writes nothing."""

    token_scope = "data:write"

    @extend_schema(operation_id="study_ratings_upsert", request=RatingSerializer(many=True),
                   responses={200: RatingsResultSerializer, 400: ErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(Study, pk=pk)
        try:
            body = _body(request)
        except _BadBody as exc:
            return _errors(str(exc), [f"body: {exc}"])
        if isinstance(body, dict):
            body = body.get("ratings")
        if not isinstance(body, list) or not body:
            return Response({"detail": "bad body", "errors": ["send a non-empty JSON list of ratings"]}, status=400)
        if len(body) > MAX_RATINGS:
            return Response({"detail": "too many ratings", "errors": [f"at most {MAX_RATINGS} per request"]},
                            status=400)
        declared = [Dimension(key=d.key, level=d.level, scale_min=d.scale_min, scale_max=d.scale_max, prompt=d.prompt)
                    for d in study.dimensions.all()]
        try:
            summary = study_ratings_import(records=body, study=study.name, dimensions=declared)
        except StudyImportFailed as exc:
            return Response({"detail": f"{len(exc.errors)} error(s); nothing was written.", "errors": exc.errors},
                            status=400)
        return Response({"study": summary.study, "items": summary.items, "raters": summary.raters,
                         "scores": summary.scores, "created": summary.created, "updated": summary.updated,
                         "unchanged": summary.unchanged})


class StudyJudgeRunRequestSerializer(serializers.Serializer):
    model = serializers.CharField(max_length=200, help_text="The judge model; its rater name in the study.")
    dimensions = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                       help_text="Dimension keys (default: every dimension).")
    limit = serializers.IntegerField(required=False, allow_null=True, min_value=1, help_text="At most this many calls.")


class StudyJudgeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study = serializers.IntegerField(source="study_id")
    model = serializers.CharField()
    status = serializers.ChoiceField(choices=StudyJudgeRun.Status.choices)
    dimensions = serializers.ListField(child=serializers.CharField())
    limit = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(help_text="Item × dimension pairs to send (0 until started).")
    scored = serializers.IntegerField()
    failed = serializers.IntegerField()
    errors = serializers.DictField(child=serializers.IntegerField(), help_text="Failed calls by error class.")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=14, decimal_places=6)
    error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class StudyJudgeRunsAPIView(APIView):
    """POST: score the study's items with a judge model (the worker runs it; poll the run). The endpoint is the
    configured one (settings), never one named in the request. Scope judge:run."""

    token_scope = "judge:run"

    @extend_schema(operation_id="study_judge_run_start", request=StudyJudgeRunRequestSerializer,
                   responses={202: StudyJudgeRunSerializer, 400: ErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(Study, pk=pk)
        incoming = StudyJudgeRunRequestSerializer(data=request.data)
        if not incoming.is_valid():
            return _errors("invalid request", _flatten(incoming.errors))
        try:
            run = study_judge_run_start(study=study, requested_by=request.user, model=incoming.validated_data["model"],
                                        dimensions=incoming.validated_data["dimensions"] or None,
                                        limit=incoming.validated_data.get("limit"))
        except ValidationError as exc:
            return _errors("refused", [f"{field}: {m}" for field, ms in exc.message_dict.items() for m in ms])
        return Response(StudyJudgeRunSerializer(run).data, status=202)


class StudyJudgeRunAPIView(APIView):
    """GET: a study judge run's state, counts, tokens and cost."""

    token_scope = "reports:read"

    @extend_schema(operation_id="study_judge_run", responses={200: StudyJudgeRunSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(StudyJudgeRunSerializer(get_object_or_404(StudyJudgeRun, pk=pk)).data)


class StudyJudgeRunCancelAPIView(APIView):
    """POST: stop a queued or running study judge run (409 once it has ended)."""

    token_scope = "judge:run"

    @extend_schema(operation_id="study_judge_run_cancel", request=None,
                   responses={200: StudyJudgeRunSerializer, 409: ErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(StudyJudgeRun, pk=pk)
        if not study_judge_run_cancel(run=run):
            return _errors(f"run {pk} has ended ({run.status})", [f"status: the run is {run.status}"], status=409)
        run.refresh_from_db()
        return Response(StudyJudgeRunSerializer(run).data)
