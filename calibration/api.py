"""REST endpoints for the benchmark pipeline (token auth, admins only): the reports of cycles and imported rating
studies (requested, listed, read and bundled; always stored snapshots). Gold labels: `adjudication/api.py`."""
from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework_dataclasses.serializers import DataclassSerializer

from accounts.models import ApiToken
from annotations.models import CalibrationCycle
from evidence.api import (
    SubjectSnapshotAPIView,
    SubjectSnapshotBundleAPIView,
    SubjectSnapshotVersionsAPIView,
)
from evidence.kit.meta import DEFAULT_RESAMPLES, DEFAULT_SEED
from evidence.kit.serializers import WITH_BODY, SnapshotSerializer
from evidence.kit.trees import JsonObject
from evidence.models import Snapshot
from evidence.services import MAX_RESAMPLES, snapshot_pending_error

from .models import Study
from .reports.schema import Report, report_from_dict
from .reports.tasks import report_snapshot_start
from .studies.snapshots import DEFAULT_STUDY_SEED
from .studies.tasks import study_snapshot_start

CYCLE, STUDY = Snapshot.Kind.CYCLE_REPORT, Snapshot.Kind.STUDY_REPORT
NOT_COMPUTED = "{subject} has no computed report yet: POST /api/v1/reports/ with its id"


class VersionPending(APIException):
    """409: another version of the same report is queued or running (a computation is queued once)."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "pending"


PENDING_RESPONSE = OpenApiResponse(description="Another version of this report is queued or running; "
                                               "`detail` names it. Request again once it has finished.")


def snapshot_service_error(exc: DjangoValidationError) -> APIException:
    """A snapshot service's refusal as an API error: 409 for a version already pending, else 400 by field."""
    if snapshot_pending_error(exc):
        return VersionPending(detail=exc.messages[0])
    return serializers.ValidationError(exc.message_dict)


class ReportSerializer(DataclassSerializer):
    """Generated from the report's dataclass tree (calibration.reports.schema): the schema lists every field."""

    class Meta:
        dataclass = Report


class ReportSnapshotSerializer(SnapshotSerializer):
    """A stored version of a cycle's or a study's report: the counts of its input rows (ratings.csv) too."""

    input_counts = serializers.DictField(child=serializers.IntegerField())


class CycleSnapshotSerializer(ReportSnapshotSerializer):
    """A stored version of a cycle's report: the cycle and judge run it read, and (when ready) the typed report."""

    cycle = serializers.IntegerField(source="cycle_id")
    judge_run = serializers.IntegerField(source="judge_run_id", allow_null=True)
    report = ReportSerializer(source="body", allow_null=True, read_only=True,
                              help_text="The report (null until the version is ready, and in version lists).")

    def body_of(self, payload: JsonObject) -> Report:
        return report_from_dict(payload)


class SnapshotRequestSerializer(serializers.Serializer):
    run = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                   help_text="Judge run id (default: the newest finished run on the cycle's rubric).")
    seed = serializers.IntegerField(required=False, default=DEFAULT_SEED, min_value=0)
    n_resamples = serializers.IntegerField(required=False, default=DEFAULT_RESAMPLES, min_value=0,
                                           max_value=MAX_RESAMPLES)


class ReportAPIView(SubjectSnapshotAPIView):
    """A cycle's IRR report: a stored snapshot (?version=N, default the newest ready one); never computed here."""

    subject_model, kind, serializer = CalibrationCycle, CYCLE, CycleSnapshotSerializer
    subject_name, not_computed = "cycle {pk}", NOT_COMPUTED


class ReportVersionsAPIView(SubjectSnapshotVersionsAPIView):
    """Every version of a cycle's report (without the report bodies); POST queues a new one for the worker."""

    # Queuing a version writes a snapshot row and takes worker time: a write.
    token_scope = {"GET": ApiToken.Scope.REPORTS_READ, "POST": ApiToken.Scope.DATA_WRITE}
    subject_model, kind, serializer = CalibrationCycle, CYCLE, CycleSnapshotSerializer

    @extend_schema(request=SnapshotRequestSerializer, responses={202: CycleSnapshotSerializer, 409: PENDING_RESPONSE})
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
            raise snapshot_service_error(exc) from exc
        snapshot.refresh_from_db()
        return Response(CycleSnapshotSerializer(snapshot, context={WITH_BODY: True}).data, status=202)


class ReportBundleAPIView(SubjectSnapshotBundleAPIView):
    """A ready report version's citable bundle (zip: README with the citation, JSON, CSV, PDF, ratings.csv,
    SHA256SUMS), the bytes the report page serves; ?version=N, default the newest ready one."""

    subject_model, kind, operation_id, subject_name = CalibrationCycle, CYCLE, "report_bundle", "cycle {pk}"


# --- study reports, and one endpoint that requests a report of either ----------------------------------------

class StudySnapshotSerializer(ReportSnapshotSerializer):
    """A stored version of a study's report: the study, and (when ready) the report itself."""

    study = serializers.IntegerField(source="study_id")
    report = serializers.JSONField(
        source="body", allow_null=True, read_only=True,
        help_text="The report: meta, and per dimension the humans' coefficients with intervals, each judge, each "
                  "rater group (see the bundle's README). Null until ready, and in version lists.")


class ReportRequestSerializer(serializers.Serializer):
    cycle = serializers.IntegerField(required=False, min_value=1, help_text="A calibration cycle's id …")
    study = serializers.IntegerField(required=False, min_value=1, help_text="… or an imported rating study's id.")
    run = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                   help_text="Cycles only: the judge run (default: the newest finished on the rubric).")
    seed = serializers.IntegerField(required=False, min_value=0, help_text=f"Default {DEFAULT_SEED} for a cycle, "
                                                                           f"{DEFAULT_STUDY_SEED} for a study.")
    n_resamples = serializers.IntegerField(required=False, default=DEFAULT_RESAMPLES, min_value=0,
                                           max_value=MAX_RESAMPLES)

    def validate(self, attrs: dict) -> dict:
        if ("cycle" in attrs) == ("study" in attrs):
            raise serializers.ValidationError({"non_field_errors": ["give either cycle or study"]})
        if "study" in attrs and attrs.get("run") is not None:
            raise serializers.ValidationError({"run": ["a study's judges are its judge raters: run is for cycles"]})
        return attrs


class ReportQueuedSerializer(serializers.Serializer):
    """A queued report version and where to read it."""

    cycle = serializers.IntegerField(allow_null=True)
    study = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Snapshot.Status.choices)
    seed = serializers.IntegerField()
    n_resamples = serializers.IntegerField()
    url = serializers.CharField(help_text="GET this version (poll until status is ready or failed).")
    bundle_url = serializers.CharField(help_text="The citable zip, once ready.")


class ReportsAPIView(APIView):
    """Request a new version of a cycle's or a study's report; the worker computes it (202, then poll `url`)."""

    token_scope = ApiToken.Scope.DATA_WRITE  # writes a snapshot row and takes worker time

    @extend_schema(operation_id="reports_request", request=ReportRequestSerializer,
                   responses={202: ReportQueuedSerializer, 409: PENDING_RESPONSE})
    def post(self, request: Request) -> Response:
        incoming = ReportRequestSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        try:
            if "study" in data:
                study = get_object_or_404(Study, pk=data["study"])
                snapshot = study_snapshot_start(study=study, requested_by=request.user, n_resamples=data["n_resamples"],
                                                seed=data.get("seed", DEFAULT_STUDY_SEED))
                url = reverse("api-study-report", kwargs={"pk": study.pk})
                bundle = reverse("api-study-report-bundle", kwargs={"pk": study.pk})
            else:
                cycle = get_object_or_404(CalibrationCycle, pk=data["cycle"])
                snapshot = report_snapshot_start(cycle=cycle, requested_by=request.user, run_id=data.get("run"),
                                                 seed=data.get("seed", DEFAULT_SEED), n_resamples=data["n_resamples"])
                url = reverse("api-cycle-report", kwargs={"pk": cycle.pk})
                bundle = reverse("api-cycle-report-bundle", kwargs={"pk": cycle.pk})
        except DjangoValidationError as exc:
            raise snapshot_service_error(exc) from exc
        snapshot.refresh_from_db()
        query = f"?version={snapshot.version}"
        return Response(ReportQueuedSerializer({
            "cycle": snapshot.cycle_id, "study": snapshot.study_id, "version": snapshot.version,
            "status": snapshot.status, "seed": snapshot.seed, "n_resamples": snapshot.n_resamples,
            "url": request.build_absolute_uri(url + query), "bundle_url": request.build_absolute_uri(bundle + query),
        }).data, status=202)


class StudyReportAPIView(SubjectSnapshotAPIView):
    """A study's report: a stored snapshot (?version=N, default the newest ready one); never computed here."""

    subject_model, kind, serializer, operation_id = Study, STUDY, StudySnapshotSerializer, "study_report"
    subject_name, not_computed = "study {pk}", NOT_COMPUTED


class StudyReportVersionsAPIView(SubjectSnapshotVersionsAPIView):
    """Every version of a study's report, newest first (without the report bodies)."""

    subject_model, kind, serializer, operation_id = Study, STUDY, StudySnapshotSerializer, "study_report_versions"


class StudyReportBundleAPIView(SubjectSnapshotBundleAPIView):
    """A ready version's citable bundle (zip: README, JSON, CSV, PDF, ratings.csv, SHA256SUMS); ?version=N."""

    subject_model, kind, operation_id, subject_name = Study, STUDY, "study_report_bundle", "study {pk}"
