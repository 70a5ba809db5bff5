"""Write API: bulk, idempotent POSTs of test cases and model responses; starting, following and cancelling judge runs.

One code path with the file importers (`importing.import_records`): the same schema, the same checks, the
same upsert by external id, all or nothing. A body is a JSON list of records, or `{"records": [...],
"dry_run": true}` to check without writing. 200 with what was created, updated and left unchanged; 400 with
every problem (`row` is the record's position, 1-based, and `field` the field it concerns); nothing is
written unless every record is valid.
"""
from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import ClassVar, TypedDict

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .importing import ImportFailed, import_records
from .importing.schemas import (
    SCHEMAS,
    Field,
    parse_bool,
    parse_decimal,
    parse_dict,
    parse_int,
    parse_str_list,
)
from .judge.config import setting
from .judge.estimate import EstimateJson, judge_run_estimate_cached, judge_run_plan
from .judge.selectors import judge_run_summary
from .judge.services import judge_run_cancel
from .judge.status import judge_run_outcome
from .models import JudgeRun
from .selectors import rubric_active
from .tasks import judge_run_resume_start, judge_run_retry_start, judge_run_start

MAX_RECORDS = 5_000  # per request; larger sets go in several requests (each all-or-nothing) or a file import


class FieldOptions(TypedDict, total=False):
    required: bool
    allow_null: bool


def _serializer_field(spec: Field) -> serializers.Field:
    """The OpenAPI description of one import field (validation stays with the import schema)."""
    options: FieldOptions = {"required": spec.required}
    if not spec.required:
        options["allow_null"] = True
    if spec.parse is parse_int:
        return serializers.IntegerField(min_value=spec.min_value, max_value=spec.max_value, **options)
    if spec.parse is parse_decimal:
        return serializers.DecimalField(max_digits=6, decimal_places=spec.decimal_places or 2,
                                        min_value=spec.min_value if isinstance(spec.min_value, Decimal) else None,
                                        max_value=spec.max_value if isinstance(spec.max_value, Decimal) else None,
                                        coerce_to_string=False, **options)
    if spec.parse is parse_bool:
        return serializers.BooleanField(**options)
    if spec.parse is parse_dict:
        return serializers.DictField(**options)
    if spec.parse is parse_str_list:
        return serializers.ListField(child=serializers.CharField(), **options)
    return serializers.CharField(max_length=spec.max_length, allow_blank=spec.allow_empty, **options)


def record_serializer(kind: str) -> type[serializers.Serializer]:
    """A serializer class whose fields are the import schema's, for the schema document."""
    fields = {spec.name: _serializer_field(spec) for spec in SCHEMAS[kind].fields}
    return type(f"{kind.title()}RecordSerializer", (serializers.Serializer,), fields)


CaseRecordSerializer = record_serializer("cases")
ResponseRecordSerializer = record_serializer("responses")


class ImportResultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    rows = serializers.IntegerField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    dry_run = serializers.BooleanField(help_text="True when nothing was written (checked only).")


class RowErrorSerializer(serializers.Serializer):
    row = serializers.IntegerField(help_text="The record's position in the request, 1-based (0: the request itself).")
    field = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class ImportErrorsSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = RowErrorSerializer(many=True)


class RowError(TypedDict):
    """One problem of a request (the shape of RowErrorSerializer)."""

    row: int
    field: str
    message: str


def _errors(detail: str, errors: list[RowError]) -> Response:
    return Response({"detail": detail, "errors": errors}, status=400)


class _BulkImportView(APIView):
    """POST a list of records of `kind` (admins; a token needs the data:write scope)."""

    token_scope = "data:write"
    kind: ClassVar[str]

    def post(self, request: Request) -> Response:
        try:
            body = request.data
        except ParseError as exc:
            return _errors("the body is not JSON", [{"row": 0, "field": "records", "message": str(exc.detail)}])
        dry_run = False
        if isinstance(body, dict):
            unknown = sorted(set(body) - {"records", "dry_run"})
            if unknown:
                return _errors("unknown keys", [{"row": 0, "field": k, "message": "unknown key; expected records, "
                                                 "dry_run"} for k in unknown])
            dry_run = body.get("dry_run", False)
            if not isinstance(dry_run, bool):
                return _errors("bad dry_run", [{"row": 0, "field": "dry_run", "message": "must be true or false"}])
            body = body.get("records")
        if not isinstance(body, list):
            return _errors("bad body", [{"row": 0, "field": "records",
                                         "message": "send a JSON list of records, or {\"records\": [...]}"}])
        if not body:
            return _errors("no records", [{"row": 0, "field": "records", "message": "the list is empty"}])
        if len(body) > MAX_RECORDS:
            return _errors("too many records", [{"row": 0, "field": "records",
                                                 "message": f"at most {MAX_RECORDS} records per request"}])
        try:
            report = import_records(records=body, kind=self.kind, dry_run=dry_run)
        except ImportFailed as exc:
            return _errors(f"{len(exc.errors)} error(s); nothing was written.",
                           [{"row": e.line, "field": e.field, "message": e.message} for e in exc.errors])
        return Response({"kind": report.kind, "rows": report.rows, "created": report.created,
                         "updated": report.updated, "unchanged": report.unchanged, "dry_run": dry_run})


_EXAMPLE_ERRORS = OpenApiExample("A bad record (nothing written)", status_codes=["400"], response_only=True, value={
    "detail": "1 error(s); nothing was written.",
    "errors": [{"row": 2, "field": "dimension", "message": "unknown value 'dogma'; expected one of doctrinal, …"}]})


class CasesBulkAPIView(_BulkImportView):
    """Create or update test cases by external id (the cases file import's fields and rules)."""

    kind = "cases"

    @extend_schema(operation_id="cases_bulk_upsert", request=CaseRecordSerializer(many=True),
                   responses={200: ImportResultSerializer, 400: ImportErrorsSerializer}, examples=[_EXAMPLE_ERRORS])
    def post(self, request: Request) -> Response:
        return super().post(request)


class ResponsesBulkAPIView(_BulkImportView):
    """Create or update model responses by (case, model, run label) (the responses file import's rules)."""

    kind = "responses"

    @extend_schema(operation_id="responses_bulk_upsert", request=ResponseRecordSerializer(many=True),
                   responses={200: ImportResultSerializer, 400: ImportErrorsSerializer}, examples=[_EXAMPLE_ERRORS])
    def post(self, request: Request) -> Response:
        return super().post(request)


# --- judge runs -------------------------------------------------------------------------------------------


class JudgeRunStartSerializer(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                   help_text="Evaluated models' names (default: every model).")
    cases = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Case filter, e.g. 'difficulty=easy|medium;dimension=doctrinal'.")
    run_label = serializers.CharField(required=False, allow_blank=True, default="")
    limit = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    budget = serializers.DecimalField(max_digits=12, decimal_places=6, required=False, allow_null=True, default=None,
                                      min_value=Decimal("0.000001"),
                                      help_text="Stop sending calls once the run has cost this much (resumable).")
    dry_run = serializers.BooleanField(required=False, default=False,
                                       help_text="Only estimate: answer 200 with the estimate and create nothing.")


class EstimateSerializer(serializers.Serializer):
    items = serializers.IntegerField()
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(allow_null=True, help_text="In FAITHBENCH_CURRENCY; null when no price is known.")
    basis = serializers.CharField()


class JudgeRunSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    scored = serializers.IntegerField()
    failed_total = serializers.IntegerField()
    filtered = serializers.IntegerField()
    pending = serializers.IntegerField()
    done = serializers.IntegerField()
    adds_up = serializers.BooleanField()
    cost = serializers.CharField(help_text="In FAITHBENCH_CURRENCY (default USD).")
    budget = serializers.CharField(allow_null=True, help_text="The run's budget, if it has one.")
    estimate = EstimateSerializer(allow_null=True, help_text="Before it starts: what the run is expected to use.")
    outcome = serializers.CharField(help_text="What happened, in words: e.g. \"Failed — 0 of 5 scored, 5 pending\" "
                                              "(a run that scored nothing is failed).")
    reason = serializers.CharField(allow_blank=True, help_text="Why it failed or stopped (empty when it did not).")
    fix = serializers.CharField(allow_blank=True, help_text="What to do about it (e.g. the setting to set).")
    retried_items = serializers.IntegerField(help_text="Failed items sent again by a retry.")


class MessageErrorsSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = RowErrorSerializer(many=True)


class JudgeRunData(TypedDict):
    """A run's state as the API returns it: JudgeRunSerializer's fields, in its order."""

    run_id: int
    status: str
    total: int
    scored: int
    failed_total: int
    filtered: int
    pending: int
    done: int
    adds_up: bool
    cost: str
    budget: str | None
    estimate: EstimateJson | None
    outcome: str
    reason: str
    fix: str
    retried_items: int


def _run_data(run: JudgeRun) -> JudgeRunData:
    summary = judge_run_summary(run=run).as_dict()
    estimate = judge_run_estimate_cached(run=run).as_dict() if run.status == JudgeRun.Status.QUEUED else None
    outcome = judge_run_outcome(run=run)
    return {
        "run_id": summary["run_id"], "status": summary["status"], "total": summary["total"],
        "scored": summary["scored"], "failed_total": summary["failed_total"], "filtered": summary["filtered"],
        "pending": summary["pending"], "done": summary["done"], "adds_up": summary["adds_up"],
        "cost": summary["cost"], "budget": None if run.budget is None else str(run.budget), "estimate": estimate,
        "outcome": outcome.headline, "reason": outcome.reason, "fix": outcome.fix,
        "retried_items": run.retried_items,
    }


class JudgeRunsAPIView(APIView):
    """POST: start a judge run over the selected responses (queued for the worker); 202 with its state."""

    token_scope = "judge:run"

    @extend_schema(operation_id="judge_runs_start", request=JudgeRunStartSerializer,
                   responses={202: JudgeRunSerializer, 200: EstimateSerializer, 400: MessageErrorsSerializer})
    def post(self, request: Request) -> Response:
        try:
            serializer = JudgeRunStartSerializer(data=request.data)
        except ParseError as exc:
            return _errors("the body is not JSON", [{"row": 0, "field": "body", "message": str(exc.detail)}])
        if not serializer.is_valid():
            return _errors("invalid request", [{"row": 0, "field": str(k), "message": " ".join(map(str, v))}
                                               for k, v in serializer.errors.items()])
        data = serializer.validated_data
        options = {"models": data["models"], "cases": data["cases"] or None, "run_label": data["run_label"] or None,
                   "limit": data["limit"], "label": data["label"], "budget": data["budget"]}
        try:
            if data["dry_run"]:
                estimate = judge_run_plan(rubric=rubric_active(), **options)
                return Response(EstimateSerializer(estimate.as_dict()).data)
            run = judge_run_start(rubric=rubric_active(), created_by=request.user, **options)
        except DjangoValidationError as exc:
            return _errors("the run cannot start", [{"row": 0, "field": "", "message": m} for m in exc.messages])
        return Response(_run_data(run), status=202)


class JudgeRunAPIView(APIView):
    """GET: a run's state and progress (the counts always add up to its total)."""

    token_scope = "reports:read"

    @extend_schema(operation_id="judge_run_status", responses={200: JudgeRunSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(_run_data(get_object_or_404(JudgeRun, pk=pk)))


class JudgeRunCancelAPIView(APIView):
    """POST: stop a queued or running run (a running one after its requests in flight)."""

    token_scope = "judge:run"

    @extend_schema(operation_id="judge_run_cancel", request=None,
                   responses={200: JudgeRunSerializer, 409: MessageErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(JudgeRun, pk=pk)
        try:
            run = judge_run_cancel(run=run)
        except DjangoValidationError as exc:
            return Response({"detail": " ".join(exc.messages),
                             "errors": [{"row": 0, "field": "status", "message": m} for m in exc.messages]}, status=409)
        return Response(_run_data(run))


class JudgeRunResumeInSerializer(serializers.Serializer):
    budget = serializers.DecimalField(max_digits=12, decimal_places=6, required=False, allow_null=True,
                                      help_text="A new, higher budget (for a run stopped at its budget).")


def _restart(request: Request, pk: int, restart: Callable[[JudgeRun, Decimal | None], JudgeRun]) -> Response:
    """Resume or retry a run (its optional new budget from the body) and queue it (one service, one transaction):
    202, or 409 saying why not."""
    run = get_object_or_404(JudgeRun, pk=pk)
    serializer = JudgeRunResumeInSerializer(data=request.data)
    if not serializer.is_valid():
        return _errors("invalid request", [{"row": 0, "field": str(k), "message": " ".join(map(str, v))}
                                           for k, v in serializer.errors.items()])
    try:
        run = restart(run, serializer.validated_data.get("budget"))
    except DjangoValidationError as exc:
        return Response({"detail": " ".join(exc.messages),
                         "errors": [{"row": 0, "field": "status", "message": m} for m in exc.messages]}, status=409)
    return Response(_run_data(run), status=202)


class JudgeRunResumeAPIView(APIView):
    """POST: queue a stopped, failed or cancelled run again; only its items without a result are sent. 202."""

    token_scope = "judge:run"

    @extend_schema(operation_id="judge_run_resume", request=JudgeRunResumeInSerializer,
                   responses={202: JudgeRunSerializer, 409: MessageErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        return _restart(request, pk, lambda run, budget: judge_run_resume_start(
            run=run, budget=budget, base_url=str(setting("LLM_BASE_URL"))))


class JudgeRunRetryAPIView(APIView):
    """POST: send a stopped run's failed items again (with its items without a result). 202."""

    token_scope = "judge:run"

    @extend_schema(operation_id="judge_run_retry", request=JudgeRunResumeInSerializer,
                   responses={202: JudgeRunSerializer, 409: MessageErrorsSerializer})
    def post(self, request: Request, pk: int) -> Response:
        return _restart(request, pk, lambda run, budget: judge_run_retry_start(
            run=run, budget=budget, base_url=str(setting("LLM_BASE_URL"))))
