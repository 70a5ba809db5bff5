"""The gold-label endpoint for the benchmark pipeline (token auth, admins only): current adjudicated gold labels."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.web import query_whole_number
from accounts.models import ApiToken
from annotations.models import CalibrationCycle

from .selectors import gold_labels


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
