"""REST endpoints for the benchmark pipeline (token auth, admins only): gold labels and IRR reports."""
from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework_dataclasses.serializers import DataclassSerializer

from access.policy import PolicyPermission
from accounts.api_auth import TokenHasScope
from accounts.models import ApiToken
from annotations.models import CalibrationCycle
from calibration.adjudication.selectors import gold_labels
from evaluations.domain import query_whole_number

from .models import ReportSnapshot, SnapshotFile
from .reports.schema import Report, report_from_dict
from .reports.snapshots import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MAX_RESAMPLES,
    snapshot_file,
    snapshot_file_name,
    snapshot_for,
    version_param,
)
from .reports.tasks import report_snapshot_start


class GoldLabelSerializer(serializers.Serializer):
    cycle = serializers.CharField()
    case = serializers.CharField(help_text="The test case's external id.")
    model = serializers.CharField()
    run_label = serializers.CharField()
    dimension = serializers.CharField()
    sub_dimension = serializers.CharField()
    gold_score = serializers.IntegerField(min_value=0, max_value=3)
    reason = serializers.CharField()
    decision_id = serializers.IntegerField()
    adjudicated_at = serializers.CharField()


class GoldLabelListSerializer(serializers.Serializer):
    results = GoldLabelSerializer(many=True)


class GoldLabelsAPIView(APIView):
    """Current adjudicated gold labels, one row per item × sub-dimension (optionally for one cycle)."""

    permission_classes = [PolicyPermission, TokenHasScope]
    token_scope = ApiToken.Scope.REPORTS_READ

    @extend_schema(
        parameters=[OpenApiParameter("cycle", int, required=False, description="Calibration cycle id")],
        responses=GoldLabelListSerializer,
    )
    def get(self, request: Request) -> Response:
        cycle = None
        raw = request.query_params.get("cycle", "")
        if raw:
            cycle_id = query_whole_number(raw)
            if cycle_id is None:
                raise serializers.ValidationError({"cycle": "must be a cycle id (a whole number)"})
            cycle = get_object_or_404(CalibrationCycle, pk=cycle_id)
        return Response(GoldLabelListSerializer({"results": gold_labels(cycle=cycle)}).data)


class ReportSerializer(DataclassSerializer):
    """Generated from the report's dataclass tree (calibration.reports.schema): the schema lists every field."""

    class Meta:
        dataclass = Report


class SnapshotSerializer(serializers.Serializer):
    """A stored report version: what it was computed from, and (when ready) the report itself."""

    cycle = serializers.IntegerField(source="cycle_id")
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ReportSnapshot.Status.choices)
    progress = serializers.IntegerField(help_text="Percent done while computing.")
    error = serializers.CharField(allow_blank=True)
    judge_run = serializers.IntegerField(source="judge_run_id", allow_null=True)
    seed = serializers.IntegerField()
    n_resamples = serializers.IntegerField()
    input_hash = serializers.CharField(allow_blank=True, help_text="SHA-256 of the snapshot's ratings.csv.")
    input_counts = serializers.DictField(child=serializers.IntegerField())
    software = serializers.DictField(child=serializers.CharField())
    requested_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    report = ReportSerializer(source="typed_report", allow_null=True, read_only=True,
                              help_text="The report (null until the version is ready, and in version lists).")

    def to_representation(self, instance: ReportSnapshot) -> dict:
        """The typed report of a ready version, when the view asks for bodies (context `with_report`)."""
        payload = instance.payload if self.context.get("with_report") else None  # deferred in lists: not read
        instance.typed_report = report_from_dict(payload) if payload else None  # type: ignore[attr-defined]
        return super().to_representation(instance)


class SnapshotRequestSerializer(serializers.Serializer):
    run = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                   help_text="Judge run id (default: the newest finished run on the cycle's rubric).")
    seed = serializers.IntegerField(required=False, default=DEFAULT_SEED, min_value=0)
    n_resamples = serializers.IntegerField(required=False, default=DEFAULT_RESAMPLES, min_value=0,
                                           max_value=MAX_RESAMPLES)


class ReportAPIView(APIView):
    """A cycle's IRR report: a stored snapshot (?version=N, default the newest ready one); never computed here."""

    permission_classes = [PolicyPermission, TokenHasScope]
    token_scope = ApiToken.Scope.REPORTS_READ

    @extend_schema(
        parameters=[OpenApiParameter("version", int, required=False,
                                     description="Report version (default: the newest ready one)")],
        responses={200: SnapshotSerializer},
    )
    def get(self, request: Request, pk: int) -> Response:
        cycle = get_object_or_404(CalibrationCycle, pk=pk)
        try:
            version = version_param(request.query_params.get("version"))
        except ValueError as exc:
            raise serializers.ValidationError({"version": str(exc).removeprefix("version: ")}) from exc
        snapshot = snapshot_for(cycle=cycle, version=version)
        if snapshot is None:
            raise NotFound(f"cycle {pk} has no report version {version}" if version else
                           f"cycle {pk} has no computed report yet: POST to its versions endpoint")
        return Response(SnapshotSerializer(snapshot, context={"with_report": True}).data)


class ReportVersionsAPIView(APIView):
    """Every version of a cycle's report (without the report bodies); POST queues a new one for the worker."""

    permission_classes = [PolicyPermission, TokenHasScope]
    # Queuing a version writes a snapshot row and takes worker time: a write.
    token_scope = {"GET": ApiToken.Scope.REPORTS_READ, "POST": ApiToken.Scope.DATA_WRITE}

    @extend_schema(responses={200: SnapshotSerializer(many=True)})
    def get(self, request: Request, pk: int) -> Response:
        cycle = get_object_or_404(CalibrationCycle, pk=pk)
        snapshots = ReportSnapshot.objects.filter(cycle=cycle).defer("payload", "rater_key").order_by("-version")
        return Response(SnapshotSerializer(snapshots, many=True).data)  # bodies only from the version endpoint

    @extend_schema(request=SnapshotRequestSerializer, responses={202: SnapshotSerializer})
    def post(self, request: Request, pk: int) -> Response:
        cycle = get_object_or_404(CalibrationCycle, pk=pk)
        incoming = SnapshotRequestSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            snapshot = report_snapshot_start(
                cycle=cycle, requested_by=request.user, run_id=incoming.validated_data.get("run"),
                seed=incoming.validated_data["seed"], n_resamples=incoming.validated_data["n_resamples"],
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        snapshot.refresh_from_db()
        return Response(SnapshotSerializer(snapshot, context={"with_report": True}).data, status=202)


class ReportBundleAPIView(APIView):
    """A ready report version's citable bundle (zip: README with the citation, JSON, CSV, PDF, ratings.csv,
    SHA256SUMS), the bytes the report page serves; ?version=N, default the newest ready one."""

    permission_classes = [PolicyPermission, TokenHasScope]
    token_scope = ApiToken.Scope.REPORTS_READ

    @extend_schema(
        operation_id="report_bundle",
        parameters=[OpenApiParameter("version", int, required=False, description="Report version")],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        cycle = get_object_or_404(CalibrationCycle, pk=pk)
        try:
            version = version_param(request.query_params.get("version"))
        except ValueError as exc:
            raise serializers.ValidationError({"version": str(exc).removeprefix("version: ")}) from exc
        snapshot = snapshot_for(cycle=cycle, version=version, with_payload=False)
        if snapshot is None or not snapshot.is_ready:
            raise NotFound(f"cycle {pk} has no ready report version" + (f" {version}" if version else ""))
        stored = snapshot_file(snapshot=snapshot, fmt=SnapshotFile.Format.BUNDLE)
        if stored is None:  # pragma: no cover - a ready snapshot has every file
            raise NotFound("the bundle is missing from this version")
        response = HttpResponse(bytes(stored.content), content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="{snapshot_file_name(snapshot=snapshot, fmt=SnapshotFile.Format.BUNDLE)}"')
        response["ETag"] = f'"{stored.sha256}"'
        return response
