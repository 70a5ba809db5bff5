"""REST endpoints for the benchmark pipeline (token auth, admins only): gold labels and IRR reports."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import CalibrationCycle
from calibration.adjudication.selectors import gold_labels

from .reports.selectors import cycle_report


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

    permission_classes = [IsAdminUser]

    @extend_schema(
        parameters=[OpenApiParameter("cycle", int, required=False, description="Calibration cycle id")],
        responses=GoldLabelListSerializer,
    )
    def get(self, request: Request) -> Response:
        cycle = None
        if request.query_params.get("cycle"):
            cycle = get_object_or_404(CalibrationCycle, pk=request.query_params["cycle"])
        return Response(GoldLabelListSerializer({"results": gold_labels(cycle=cycle)}).data)


class ReportAPIView(APIView):
    """The calibration (IRR) report of a cycle as JSON: every group, comparison and verdict."""

    permission_classes = [IsAdminUser]

    @extend_schema(
        parameters=[OpenApiParameter("run", int, required=False, description="Judge run id (default: newest finished)"),
                    OpenApiParameter("seed", int, required=False, description="Bootstrap seed"),
                    OpenApiParameter("resamples", int, required=False, description="Bootstrap resamples (0 = off)")],
        responses={200: dict},
    )
    def get(self, request: Request, pk: int) -> Response:
        cycle = get_object_or_404(CalibrationCycle.objects.select_related("rubric"), pk=pk)
        params = request.query_params

        def number(name: str, default: int | None) -> int | None:
            value = params.get(name)
            if value is None or value == "":
                return default
            if not value.isdigit():
                raise serializers.ValidationError({name: "must be a whole number"})
            return int(value)

        resamples = number("resamples", 1000)
        if resamples is not None and resamples > 10_000:
            raise serializers.ValidationError({"resamples": "at most 10,000"})
        report, _, _ = cycle_report(cycle=cycle, run_id=number("run", None), n_resamples=resamples or 0,
                                    seed=number("seed", 20260101) or 0)
        return Response(report)
