"""Panels of experts per tradition and calibration cycles: the drawn set of responses they score.

These models moved here from `calibration` so that model-level dependencies point the same way as
imports (evaluations ← annotations ← calibration); their tables keep their original names.
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

DEFAULT_MIN_PANEL_SIZE = 3
RETEST_SHARE_MAX = Decimal("0.5")
RETEST_SHARE_FIELD = "Re-serve share"


def retest_share_default() -> Decimal:
    """settings.RETEST_SHARE (default 0.05) as the cycle field's decimal."""
    return Decimal(str(getattr(settings, "RETEST_SHARE", 0.05))).quantize(Decimal("0.001"))


def retest_min_days_default() -> int:
    return int(getattr(settings, "RETEST_MIN_DAYS", 7))


def retest_settings_errors(*, enabled: bool, share: Decimal | float | None, min_days: int | None) -> dict[str, str]:
    """Why these test–retest settings are refused, by field ({} when they are fine). Off must be said with
    `retest_enabled`, never with a share of 0; more than half of an expert's items re-served is refused."""
    errors: dict[str, str] = {}
    if share is None:
        errors["retest_share"] = f"{RETEST_SHARE_FIELD}: enter a share between 0 and 0.5 (e.g. 0.05 for 5 %)."
    elif Decimal(str(share)) < 0 or Decimal(str(share)) > RETEST_SHARE_MAX:
        errors["retest_share"] = (f"{RETEST_SHARE_FIELD}: {float(share):.1%} is outside 0–50 %: at most half of an "
                                  "expert's submitted items can be re-served.")
    elif enabled and Decimal(str(share)) == 0:
        errors["retest_share"] = (f"{RETEST_SHARE_FIELD}: 0 % would re-serve nothing. To turn test–retest off, "
                                  "untick \u201cRe-serve items for test–retest\u201d instead.")
    if min_days is None or min_days < 1 or min_days > 365:
        errors["retest_min_days"] = "Re-serve after (days): enter a whole number of days from 1 to 365."
    return errors


class PanelQuerySet(models.QuerySet["Panel"]):
    def led_by(self, user: object) -> PanelQuerySet:
        return self.filter(lead=user)


class Panel(models.Model):
    """The experts of one tradition (or a tradition-neutral panel) and their lead (an adjudicator)."""

    name = models.CharField(max_length=120, unique=True)
    tradition = models.ForeignKey(
        "evaluations.Tradition", null=True, blank=True, on_delete=models.PROTECT, related_name="panels",
        help_text="Items of this tradition go to this panel. Empty for a tradition-neutral panel.",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="panels", help_text="The experts who score."
    )
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="led_panels",
        help_text="The adjudicator who leads the panel: reopens submitted annotations, settles disagreements.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Issue 35: a panel of one tradition × one language (BCP 47 primary subtag, e.g. "es", "ko") scores only its
    # tradition's cases in that language; empty: the tradition's panel for every language no other panel takes.
    language = models.CharField(
        max_length=35, blank=True, default="",
        help_text="Language of the cases this panel scores (e.g. es, ko). Empty: every language no other panel of "
                  "the tradition takes.",
    )

    objects = PanelQuerySet.as_manager()

    class Meta:
        db_table = "calibration_panel"
        ordering = ["tradition__order", "language", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["tradition", "language"], condition=Q(tradition__isnull=False),
                name="panel_one_per_tradition_language",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """The language is a BCP 47 tag, kept as its primary subtag (a panel scores "es", whatever the region)."""
        from evaluations.domain import language_tag_clean

        if self.language:
            try:
                self.language = language_tag_clean(self.language).split("-")[0]
            except ValueError as exc:
                raise ValidationError({"language": str(exc)}) from exc

    def takes_language(self, tag: str) -> bool:
        """Whether the panel scores a case in `tag` (any language when it has none)."""
        return not self.language or (tag or "en").split("-")[0].lower() == self.language

    @property
    def min_size(self) -> int:
        """The tradition's minimum (3; 2 for Pentecostal, methodology §6.1.1); 3 for a neutral panel."""
        return self.tradition.min_panel_size if self.tradition else DEFAULT_MIN_PANEL_SIZE


class CalibrationCycle(models.Model):
    """One round of expert scoring over a drawn, stratified set of model responses."""

    class Status(models.TextChoices):
        OPEN = "open", "Open for scoring"
        CLOSED = "closed", "Closed"

    class Kind(models.TextChoices):
        STANDARD = "standard", "Standard (each tradition's panel scores its own cases)"
        CROSS_TRADITION = "cross_tradition", "Cross-tradition (§6.2.3: a panel also scores another tradition's cases)"

    name = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.STANDARD)
    cross_pairs = models.JSONField(
        default=dict, blank=True,
        help_text="Cross-tradition cycles: {scoring tradition key: scored tradition key}; each scored tradition's "
                  "items go to its own panel (in-group) and to the scoring traditions' panels (out-group).")
    rubric = models.ForeignKey("evaluations.RubricVersion", on_delete=models.PROTECT, related_name="+")
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_cycles",
        help_text="The cycle whose anchors are kept and whose other items are 25 % refreshed.",
    )
    seed = models.PositiveBigIntegerField(help_text="Random seed: the same seed and pool reproduce the same draw.")
    min_per_dimension = models.PositiveSmallIntegerField(
        default=50, help_text="Responses per dimension (methodology §6.1.3: at least 50)."
    )
    refresh_fraction = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("0.25"),
        help_text="Share of the previous cycle's non-anchor items replaced by new draws.",
    )
    edge_fraction = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("0.10"),
        help_text="Share of new draws taken from edge cases (unusual length; extreme judge composites later).",
    )
    class DisagreementRule(models.TextChoices):
        SPAN_OR_NO_MAJORITY = "span2_or_no_majority", "Scores span 2+ points, or no majority, on any sub-dimension"
        SPAN = "span2", "Scores span 2+ points on any sub-dimension"
        NO_MAJORITY = "no_majority", "No strict majority on any sub-dimension"
        ANY_DIFFERENCE = "any_difference", "Any difference on any sub-dimension"

    disagreement_rule = models.CharField(
        max_length=30, choices=DisagreementRule.choices, default=DisagreementRule.SPAN_OR_NO_MAJORITY,
        help_text="When an item goes to adjudication once all its experts have scored it (or the cycle closes).",
    )
    show_reference_answers = models.BooleanField(
        default=False, help_text="Show the case's reference answer to experts while they score."
    )
    neutral_panel = models.ForeignKey(
        Panel, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The panel that scores items without a tradition.",
    )
    class DrawStrategy(models.TextChoices):
        PROPORTIONAL = "proportional", "Proportional (n per stratum ∝ its size)"
        ACTIVE = "active", "Active (Neyman: more where the judge's residual error is larger)"

    draw_strategy = models.CharField(
        max_length=20, choices=DrawStrategy.choices, default=DrawStrategy.PROPORTIONAL,
        help_text="How the stratified random places were allocated (docs/active-allocation.md).",
    )
    retest_enabled = models.BooleanField(
        "re-serve items for test–retest", default=True,
        help_text="Re-serve a share of each expert's submitted items to the same expert, blind (never marked), to "
                  "measure intra-rater agreement. Re-served scores never count in any report or estimate.",
    )
    retest_share = models.DecimalField(
        "re-serve share", max_digits=4, decimal_places=3, default=retest_share_default,
        help_text="Share of each expert's submitted items re-served (0.05 = 5 %; more than 0 and at most 0.5).",
    )
    retest_min_days = models.PositiveSmallIntegerField(
        "re-serve after (days)", default=retest_min_days_default,
        help_text="An item is re-served no sooner than this many days after the expert submitted it.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    draw_report = models.JSONField(default=dict, blank=True, help_text="Stratification table and notes of the draw.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "calibration_calibrationcycle"
        ordering = ["-created_at"]
        verbose_name = "calibration cycle"
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["open", "closed"]), name="cycle_status_valid"),
            models.CheckConstraint(condition=Q(min_per_dimension__gte=1), name="cycle_min_per_dimension_positive"),
            models.CheckConstraint(
                condition=Q(refresh_fraction__gte=0, refresh_fraction__lte=1), name="cycle_refresh_fraction_0_1"
            ),
            models.CheckConstraint(condition=Q(edge_fraction__gte=0, edge_fraction__lte=1), name="cycle_edge_fraction_0_1"),
            models.CheckConstraint(condition=Q(draw_strategy__in=["proportional", "active"]),
                                   name="cycle_draw_strategy_valid"),
            # Off is said with retest_enabled, never with a share of 0; at most half re-served.
            models.CheckConstraint(
                condition=Q(retest_share__gte=0, retest_share__lte=RETEST_SHARE_MAX)
                & (Q(retest_enabled=False) | Q(retest_share__gt=0)),
                name="cycle_retest_share_valid",
            ),
            models.CheckConstraint(condition=Q(retest_min_days__gte=1, retest_min_days__lte=365),
                                   name="cycle_retest_min_days_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = retest_settings_errors(enabled=self.retest_enabled, share=self.retest_share,
                                        min_days=self.retest_min_days)
        if errors:
            raise ValidationError(errors, code="retest_settings")


class CycleItem(models.Model):
    """A model response drawn into a cycle; anchors are carried into every following cycle."""

    class Source(models.TextChoices):
        RANDOM = "random", "Stratified random"
        EDGE_LENGTH = "edge_length", "Edge case: unusual length"
        EDGE_JUDGE = "edge_judge", "Edge case: extreme judge composite"
        CARRIED = "carried", "Kept from the previous cycle"
        CROSS = "cross", "Cross-tradition sample"

    cycle = models.ForeignKey(CalibrationCycle, on_delete=models.CASCADE, related_name="items")
    response = models.ForeignKey("evaluations.ModelResponse", on_delete=models.PROTECT, related_name="cycle_items")
    source = models.CharField(max_length=20, choices=Source.choices)
    is_anchor = models.BooleanField(default=False, help_text="Anchors are always kept in the next cycle.")

    class InclusionBasis(models.TextChoices):
        DRAWN = "drawn", "Random draw of this cycle: quota / its stratum's eligible pool (or the exact PPS probability)"
        CARRIED = "carried", "Kept from the previous cycle: the retention probability (anchors 1)"
        RECOMPUTED = "recomputed", "Drawn before inclusion probabilities were recorded; recomputed from the draw report"
        EDGE_CASE = "edge_case", "Edge case picked on purpose: not a random sample (no probability)"
        CROSS = "cross", "Cross-tradition sample: per scored tradition × dimension, picked / responses"
        UNKNOWN = "unknown", "Drawn before inclusion probabilities were recorded; not recomputable"

    inclusion_probability = models.FloatField(
        null=True, blank=True,
        help_text="The item's probability of being in this cycle's draw, given the previous cycle's items and the "
                  "draw's earlier steps (docs/active-allocation.md); empty = unknown or picked on purpose.",
    )
    inclusion_basis = models.CharField(max_length=20, choices=InclusionBasis.choices, default=InclusionBasis.UNKNOWN)
    stratum = models.JSONField(
        default=list, blank=True,
        help_text="The design stratum the probability belongs to: [dimension, difficulty, tradition, model] for a "
                  "random draw, [dimension, \"carried\" | \"anchor\" | \"edge\"], [\"cross\", tradition, dimension].",
    )

    class Meta:
        db_table = "calibration_cycleitem"
        ordering = ["cycle", "response"]
        verbose_name = "cycle item"
        constraints = [
            models.UniqueConstraint(fields=["cycle", "response"], name="cycle_item_unique_response"),
            models.CheckConstraint(
                condition=Q(source__in=["random", "edge_length", "edge_judge", "carried", "cross"]),
                name="cycle_item_source_valid"
            ),
            models.CheckConstraint(
                condition=Q(inclusion_basis__in=["drawn", "carried", "recomputed", "edge_case", "cross", "unknown"]),
                name="cycle_item_inclusion_basis_valid",
            ),
            models.CheckConstraint(
                condition=Q(inclusion_probability__isnull=True)
                | Q(inclusion_probability__gt=0, inclusion_probability__lte=1),
                name="cycle_item_inclusion_probability_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cycle} · response {self.response_id}"


class CycleEvent(models.Model):
    """The audit trail of a cycle's lifecycle: closing, reopening (with a reason), withdrawals, reassignments.

    Written only by annotations/lifecycle.py; never edited or deleted through the admin.
    """

    class Kind(models.TextChoices):
        CLOSED = "closed", "Closed"
        REOPENED = "reopened", "Reopened"
        WITHDRAWN = "withdrawn", "Assignments withdrawn"
        REASSIGNED = "reassigned", "Assignment reassigned"

    cycle = models.ForeignKey(CalibrationCycle, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    reason = models.TextField(blank=True, help_text="Why (required to reopen a closed cycle).")
    details = models.JSONField(default=dict, blank=True, help_text="What changed: assignment ids, counts, the reason code.")

    class Meta:
        ordering = ["cycle", "at", "id"]
        verbose_name = "cycle event"
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["closed", "reopened", "withdrawn", "reassigned"]), name="cycle_event_kind_valid"
            ),
            models.CheckConstraint(condition=~Q(kind="reopened") | ~Q(reason=""), name="cycle_event_reopen_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.cycle}: {self.get_kind_display()} at {self.at:%Y-%m-%d %H:%M}"
