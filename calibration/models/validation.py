"""Results of the judge validation programme (methodology §6.2–6.5): each bias check, computed from a judge run (and
the experts of a cycle when it has one), stored with what it read, so the validation page can say what was checked,
when, on how many responses, and whether it passed."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class BiasCheck(models.Model):
    class Kind(models.TextChoices):
        POSITION = "position", "Position bias (§6.2.1)"
        VERBOSITY = "verbosity", "Verbosity (§6.2.2)"
        TRADITION = "tradition", "Tradition fairness (§6.2.3)"
        JUDGES = "judges", "Judge comparison (§6.3.2)"
        RUNS = "runs", "Run-to-run (§8.4)"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    judge_run = models.ForeignKey("evaluations.JudgeRun", null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+", help_text="The run checked (the first of those compared).")
    pairwise_run = models.ForeignKey("evaluations.PairwiseRun", null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+", help_text="The pairwise run a position check read.")
    cycle = models.ForeignKey("annotations.CalibrationCycle", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+", help_text="Whose experts gave the reference scores (none: judge only).")
    flagged = models.BooleanField(help_text="Any dimension (or the whole) over the threshold.")
    n = models.PositiveIntegerField(help_text="Responses analysed.")
    payload = models.JSONField(help_text="Per dimension and overall: the statistics and the flag.")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    computed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-computed_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["position", "verbosity", "tradition", "judges", "runs"]),
                                   name="bias_check_kind_valid"),
            models.CheckConstraint(condition=Q(kind="position", pairwise_run__isnull=False)
                                   | Q(kind="tradition", cycle__isnull=False)
                                   | (~Q(kind__in=["position", "tradition"]) & Q(judge_run__isnull=False)),
                                   name="bias_check_has_its_run"),
        ]

    def __str__(self) -> str:
        run = (f"pairwise run {self.pairwise_run_id}" if self.pairwise_run_id else
               f"cycle {self.cycle_id}" if self.kind == self.Kind.TRADITION else f"judge run {self.judge_run_id}")
        return f"{self.get_kind_display()} · {run} · {self.computed_at:%Y-%m-%d}"
