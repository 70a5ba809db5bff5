"""REST endpoint of the judge pipeline: the leaderboard (admins only; token or session auth)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.web import query_whole_number

from ..models import JudgeRun
from .conditions import condition_report_cached
from .selectors import judge_run_find, judge_run_latest_finished, leaderboard_cached


class ScoreSerializer(serializers.Serializer):
    score = serializers.FloatField(allow_null=True, help_text="Difficulty-weighted mean composite, 0–1.")
    ci_low = serializers.FloatField(allow_null=True, help_text="Bootstrap 95 % interval, lower bound.")
    ci_high = serializers.FloatField(allow_null=True, help_text="Bootstrap 95 % interval, upper bound.")
    n = serializers.IntegerField(help_text="Scored items.")
    thin = serializers.BooleanField(help_text="Fewer items than an interval needs (the minimum of cases): no interval.")


class ModelRowSerializer(serializers.Serializer):
    model = serializers.CharField()
    family = serializers.CharField()
    items = serializers.IntegerField(help_text="Items with a final result.")
    scored = serializers.IntegerField()
    excluded = serializers.IntegerField(help_text="Failed or filtered items, excluded from the score.")
    failure_rate = serializers.FloatField()
    overall = ScoreSerializer()
    primary_judge_score = serializers.FloatField(
        allow_null=True, help_text="The primary judge's score; differs from overall when self-preference applies."
    )
    self_preference = serializers.BooleanField(
        help_text="The model shares the primary judge's family: overall uses the secondary judge."
    )
    by_dimension = serializers.DictField(child=ScoreSerializer())
    by_tradition = serializers.DictField(child=ScoreSerializer())
    tie_group = serializers.IntegerField(
        help_text="Rank as a tie group (1 = best): models whose intervals overlap the group leader's share it; 0 unscored "
                  "or not ranked.")
    cases = serializers.IntegerField(help_text="Distinct cases with a scored item (what the minimum counts).")
    ranked = serializers.BooleanField(help_text="False below the minimum of cases (or in a trial run): not ranked.")


class ComparisonSerializer(serializers.Serializer):
    model_a = serializers.CharField()
    model_b = serializers.CharField()
    n_common = serializers.IntegerField(help_text="Cases both models have scored (the pairs).")
    mean_difference = serializers.FloatField(allow_null=True)
    t_statistic = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True, help_text="Paired t-test, uncorrected.")
    p_bonferroni = serializers.FloatField(allow_null=True, help_text="Bonferroni-corrected.")
    cohens_d = serializers.FloatField(allow_null=True, help_text="Cohen's d for paired samples (d_z).")
    significant = serializers.BooleanField(help_text="Corrected p < 0.05 on at least the minimum of pairs.")
    thin = serializers.BooleanField(help_text="Fewer pairs than the minimum: no Cohen's d, never significant.")


class QueryErrorSerializer(serializers.Serializer):
    run = serializers.CharField(help_text="What is wrong with the ?run= value.")


class LeaderboardSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    rubric = serializers.CharField()
    primary_judge = serializers.CharField()
    secondary_judge = serializers.CharField()
    n_resamples = serializers.IntegerField()
    confidence = serializers.FloatField()
    seed = serializers.IntegerField()
    min_cases = serializers.IntegerField(help_text="The minimum of scored cases per model (FAITHBENCH_MIN_CASES_PER_MODEL).")
    trial = serializers.BooleanField(help_text="A trial run: no model has the minimum of cases; nothing is ranked, and it "
                                               "is never the default run.")
    calibration = serializers.CharField(
        help_text="What these numbers are: the judge's own, not corrected by expert scores (the calibrated ones, "
                  "with their expert-label counts, are at `calibrated_url`).")
    calibrated_url = serializers.CharField()
    models = ModelRowSerializer(many=True)
    comparisons = ComparisonSerializer(many=True)


def run_query(request: Request, name: str = "run") -> JudgeRun | None:
    """The judge run a query parameter names (None when absent); a 400 naming the parameter when its value is not a
    whole number ≥ 1 or no run has that id (issue 33: a bad query value is the caller's error, not a missing page)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    run_id = query_whole_number(raw)
    if run_id is None:
        raise serializers.ValidationError({name: f"must be a judge run id (a whole number ≥ 1), got {raw[:20]!r}"})
    run = judge_run_find(run_id=run_id)
    if run is None:
        raise serializers.ValidationError({name: f"there is no judge run {run_id}"})
    return run


class LeaderboardAPIView(APIView):
    """Per-model leaderboard of a judge run (default: the newest finished run)."""

    token_scope = "reports:read"

    @extend_schema(
        operation_id="judge_leaderboard",
        parameters=[OpenApiParameter("run", int, description="Judge run id (default: newest finished run that is not "
                                                           "a trial). Not a whole number ≥ 1, or no such run: 400 "
                                                           "naming the parameter.")],
        responses={200: LeaderboardSerializer, 400: QueryErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        found = run_query(request) or judge_run_latest_finished(skip_trials=True)
        if found is None:
            raise NotFound("no finished judge run yet")
        run: JudgeRun = found
        board = leaderboard_cached(run=run)
        data = {
            "run": run.pk, "rubric": run.rubric.version, "primary_judge": run.primary_model,
            "secondary_judge": run.secondary_model, "n_resamples": board.n_resamples,
            "confidence": board.confidence, "seed": board.seed, "min_cases": board.min_cases, "trial": board.trial,
            "calibration": "judge-only: the judge's own scores, not corrected by expert scores; intervals cover the "
                           "sampling of test cases only (methodology §8.5)",
            "calibrated_url": f"/api/v1/judge-runs/{run.pk}/calibrated/", "models": board.models,
            "comparisons": board.comparisons,
        }
        return Response(LeaderboardSerializer(data).data)


class ConditionBoardSerializer(serializers.Serializer):
    condition = serializers.CharField(source="condition.name")
    is_standard = serializers.BooleanField(source="condition.is_standard")
    settings = serializers.DictField(source="condition.settings_dict")
    repetitions = serializers.IntegerField(help_text="The most repetitions any model has of one case here.")
    responses = serializers.IntegerField()
    models = ModelRowSerializer(many=True, source="board.models",
                                help_text="Per model; `items` counts cases (a case's score is its repetitions' mean).")


class ConditionDeltaSerializer(serializers.Serializer):
    model = serializers.CharField()
    axis = serializers.CharField(help_text="The one setting the two conditions differ in.")
    condition = serializers.CharField()
    baseline = serializers.CharField()
    n_cases = serializers.IntegerField(help_text="Cases both conditions scored for the model.")
    delta = serializers.FloatField(allow_null=True, help_text="Difficulty-weighted mean of per-case differences.")
    ci_low = serializers.FloatField(allow_null=True, help_text="95 % case-bootstrap interval, lower bound.")
    ci_high = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True, help_text="Paired t-test of the case differences.")
    cohens_d = serializers.FloatField(allow_null=True)
    thin = serializers.BooleanField(help_text="Fewer common cases than the minimum: no interval, no Cohen's d.")
    distinguishable = serializers.BooleanField(help_text="False: the interval covers 0 (not distinguishable from zero).")


class ConditionReportSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run_id")
    n_resamples = serializers.IntegerField()
    seed = serializers.IntegerField()
    boards = ConditionBoardSerializer(many=True)
    deltas = ConditionDeltaSerializer(many=True)


class ConditionsAPIView(APIView):
    """A finished judge run's leaderboard per generation condition and paired deltas between conditions."""

    token_scope = "reports:read"

    @extend_schema(operation_id="judge_run_conditions", responses=ConditionReportSerializer)
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(JudgeRun, pk=pk, status=JudgeRun.Status.FINISHED)
        return Response(ConditionReportSerializer(condition_report_cached(run=run)).data)
