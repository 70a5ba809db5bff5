"""REST endpoints of the calibrated leaderboard (token auth, admins): read a stored version, list and queue versions,
fetch the citable bundle. Always stored snapshots; nothing is computed in a request."""
from __future__ import annotations

from typing import cast

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import ApiToken
from annotations.selectors import cycle_get
from evaluations.models import JudgeRun
from evidence.api import SubjectSnapshotAPIView, SubjectSnapshotBundleAPIView, SubjectSnapshotVersionsAPIView
from evidence.kit.serializers import WITH_BODY, SnapshotSerializer
from evidence.models import Snapshot
from evidence.services import MAX_RESAMPLES

from .build import DEFAULT_MARGIN, DEFAULT_TARGET_HALF_WIDTH
from .selectors import calibrated_snapshot_for, calibrated_snapshots
from .snapshots import DEFAULT_RESAMPLES, DEFAULT_SEED
from .tasks import calibrated_snapshot_start

VERSION_PARAMETER = OpenApiParameter("version", int, required=False,
                                     description="Version (default: the newest ready one)")


class CalibratedSnapshotSerializer(SnapshotSerializer):
    """A stored version of a run's calibrated leaderboard, and (when ready and asked for) the leaderboard itself."""

    judge_run = serializers.IntegerField(source="judge_run_id")
    cycle = serializers.IntegerField(source="label_cycle_id", help_text="The cycle whose expert scores were used.")
    leaderboard = serializers.JSONField(
        source="body", allow_null=True, read_only=True,
        help_text="The calibrated leaderboard (report.json of the bundle); null until ready, and in version lists.")


class CalibratedRequestSerializer(serializers.Serializer):
    cycle = serializers.IntegerField(min_value=1, help_text="The calibration cycle whose expert scores correct the run.")
    target_half_width = serializers.FloatField(required=False, default=DEFAULT_TARGET_HALF_WIDTH, min_value=0.001,
                                               max_value=1)
    margin = serializers.FloatField(
        required=False, default=DEFAULT_MARGIN,
        help_text="The verdicts' equivalence margin in composite points: above 0 and below 1 (default 0.05).")
    seed = serializers.IntegerField(required=False, default=DEFAULT_SEED, min_value=0)
    n_resamples = serializers.IntegerField(required=False, default=DEFAULT_RESAMPLES, min_value=0,
                                           max_value=MAX_RESAMPLES)


class CalibratedAPIView(SubjectSnapshotAPIView):
    """A run's calibrated leaderboard: a stored version (?version=N, default the newest ready one)."""

    subject_model, kind, serializer = JudgeRun, Snapshot.Kind.CALIBRATED, CalibratedSnapshotSerializer
    version_parameter = VERSION_PARAMETER
    subject_name = "judge run {pk}"
    not_found = "{subject} has no calibrated leaderboard version {version}"
    not_computed = ("{subject} has no calibrated leaderboard yet: POST /api/v1/judge-runs/{{id}}/calibrated/versions/ "
                    "with a cycle queues one")

    def find(self, subject: Model, version: int | None) -> Snapshot | None:
        return calibrated_snapshot_for(run=cast(JudgeRun, subject), version=version)


class CalibratedVersionsAPIView(SubjectSnapshotVersionsAPIView):
    """Every version of a run's calibrated leaderboard (without bodies); POST queues a new one for the worker."""

    token_scope = {"GET": ApiToken.Scope.REPORTS_READ, "POST": ApiToken.Scope.DATA_WRITE}
    subject_model, kind, serializer = JudgeRun, Snapshot.Kind.CALIBRATED, CalibratedSnapshotSerializer

    def versions(self, subject: Model) -> QuerySet[Snapshot]:
        return calibrated_snapshots(run=cast(JudgeRun, subject))

    @extend_schema(request=CalibratedRequestSerializer, responses={202: CalibratedSnapshotSerializer})
    def post(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(JudgeRun, pk=pk)
        incoming = CalibratedRequestSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        cycle = cycle_get(pk=data["cycle"])
        if cycle is None:
            raise serializers.ValidationError({"cycle": f"calibration cycle {data['cycle']} does not exist"})
        try:
            snapshot = calibrated_snapshot_start(run=run, cycle=cycle, requested_by=request.user, seed=data["seed"],
                                                 n_resamples=data["n_resamples"],
                                                 target_half_width=data["target_half_width"],
                                                 margin=data["margin"])
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else
                                              {"non_field_errors": exc.messages}) from exc
        snapshot.refresh_from_db()
        return Response(CalibratedSnapshotSerializer(snapshot, context={WITH_BODY: True}).data, status=202)


class CalibratedBundleAPIView(SubjectSnapshotBundleAPIView):
    """A ready version's citable bundle (zip: README, report.json, tables.csv, report.pdf, inputs.csv, SHA256SUMS)."""

    subject_model, kind, operation_id = JudgeRun, Snapshot.Kind.CALIBRATED, "calibrated_leaderboard_bundle"
    version_parameter, subject_name = VERSION_PARAMETER, "judge run {pk}'s calibrated leaderboard"

    def find(self, subject: Model, version: int | None) -> Snapshot | None:
        return calibrated_snapshot_for(run=cast(JudgeRun, subject), version=version)
