"""The translation-equivalence check (issue 35): for a case and its translation(s), do the experts' scores and the
judge's agree across languages?

A *pair* is one model's answer to a source case and its answer to a translation of that case (a case whose
`source_case` is it). Per pair three paired differences, each translation − source on the composite's 0–1 scale:

* **experts**: the experts' truth composite (gold where adjudicated, else the panel's mean; `cycles.truth`, over
  every standard cycle on the rubric: the translation is usually scored by another panel, in another cycle);
* **judge**: the judge run's decisive composite;
* **gap**: judge Δ − experts Δ, on pairs that have both — the part of the judge's difference the experts do not see
  (a judge that reads Spanish answers more harshly than the Spanish panel does).

A model with several responses to one case stands for its mean on that case, over its responses under the
standard condition when it has any (repetitions of it are averaged; other conditions are left out). Each
difference is the difficulty-weighted mean over pairs with its t interval (`stats.score_history.paired_change`,
Cochran 1977 §6.3), overall, per dimension and per translation language. The words: "differs" when the 95 %
interval excludes 0; "equivalent within ±margin" when it lies inside ±margin; "inconclusive" otherwise; and with
fewer than `MIN_PAIRS` pairs no verdict, only how many there are. Small enough to compute when the page is read.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotations.models import CalibrationCycle
from evaluations.domain import TranslationMethod
from evaluations.judge.selectors import judge_decisive_scored, judge_run_latest_finished
from evaluations.methodology import DIFFICULTY_WEIGHTS
from evaluations.models import JudgeRun, ModelResponse, RubricVersion, TestCase
from stats.score_history import Change, paired_change

from ..cycles.truth import response_truths_over

MIN_PAIRS = 5  # fewer pairs than this: no verdict, words
DEFAULT_MARGIN = 0.05  # composite points: the calibrated board's equivalence margin


@dataclass(frozen=True)
class TranslationPair:
    """One model on a source case and on its translation: each side's expert and judge composite (None: none)."""

    source_case: int
    translated_case: int
    model: str
    dimension: str
    difficulty: str
    source_language: str
    language: str  # the translation's
    method: str  # human, machine, machine_expert
    verified: bool
    expert_source: float | None
    expert_translated: float | None
    judge_source: float | None
    judge_translated: float | None

    @property
    def method_label(self) -> str:
        """How it was translated, in words ("Machine translation checked by an expert"), never the stored key."""
        return TranslationMethod(self.method).label if self.method in TranslationMethod.values else self.method


@dataclass(frozen=True)
class Difference:
    """A paired difference (translation − source) with its interval, its pairs and its verdict in words."""

    estimate: float | None
    lower: float | None
    upper: float | None
    n: int
    verdict: str  # differs / equivalent / inconclusive / too few pairs
    words: str


@dataclass(frozen=True)
class EquivalenceRow:
    """One row of the check: overall, a dimension or a translation language."""

    facet: str  # overall, dimension, language
    value: str
    experts: Difference
    judge: Difference
    gap: Difference


@dataclass(frozen=True)
class TranslationEquivalence:
    rows: list[EquivalenceRow]
    pairs: list[TranslationPair]
    margin: float
    translated_cases: int
    judge_run: int | None
    notes: list[str] = field(default_factory=list)


def _difference(pairs: list[TranslationPair], side: str, margin: float) -> Difference:
    """The paired difference of one side ("experts", "judge" or "gap") over the pairs that have it."""
    before, after, weights = [], [], []
    for p in pairs:
        es, et, js, jt = p.expert_source, p.expert_translated, p.judge_source, p.judge_translated
        if side == "experts" and es is not None and et is not None:
            before.append(es)
            after.append(et)
        elif side == "judge" and js is not None and jt is not None:
            before.append(js)
            after.append(jt)
        elif side == "gap" and None not in (es, et, js, jt):
            before.append(0.0)
            after.append((jt - js) - (et - es))  # type: ignore[operator]
        else:
            continue
        weights.append(float(DIFFICULTY_WEIGHTS[p.difficulty]))
    change = paired_change(before, after, weights)
    return _verdict(change, side, margin)


def _verdict(change: Change, side: str, margin: float) -> Difference:
    who = {"experts": "the experts' scores", "judge": "the judge's scores",
           "gap": "the judge's difference beyond the experts'"}[side]
    n = change.n
    if n < MIN_PAIRS:
        words = (f"{n} pair{'s' if n != 1 else ''}: too few to say whether {who} agree across languages "
                 f"(at least {MIN_PAIRS} needed).")
        return Difference(change.estimate, change.lower, change.upper, n, "too few pairs", words)
    assert change.lower is not None and change.upper is not None and change.estimate is not None
    interval = f"{change.estimate:+.3f} ({change.lower:+.3f} to {change.upper:+.3f}, 95 %, {n} pairs)"
    if change.exceeds_interval:
        direction = "higher" if change.estimate > 0 else "lower"
        words = f"Translations score {direction}: {who} differ by {interval}."
        verdict = "differs"
    elif -margin <= change.lower and change.upper <= margin:
        words = f"Equivalent within ±{margin:g}: {who} differ by {interval}."
        verdict = "equivalent"
    else:
        words = f"Inconclusive: {interval} neither excludes 0 nor lies within ±{margin:g}; more pairs would settle it."
        verdict = "inconclusive"
    return Difference(change.estimate, change.lower, change.upper, n, verdict, words)


def translation_equivalence_build(pairs: Iterable[TranslationPair], *, margin: float = DEFAULT_MARGIN,
                                  judge_run: int | None = None) -> TranslationEquivalence:
    """The check from its pairs (no database): overall, per dimension, per translation language."""
    pairs = sorted(pairs, key=lambda p: (p.translated_case, p.model))
    groups: dict[tuple[str, str], list[TranslationPair]] = defaultdict(list)
    for p in pairs:
        groups[("overall", "all")].append(p)
        groups[("dimension", p.dimension)].append(p)
        groups[("language", p.language.split("-")[0].lower())].append(p)
    order = {"overall": 0, "dimension": 1, "language": 2}
    rows = [EquivalenceRow(facet=facet, value=value, experts=_difference(members, "experts", margin),
                           judge=_difference(members, "judge", margin), gap=_difference(members, "gap", margin))
            for (facet, value), members in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]
    notes = []
    if not pairs:
        notes.append("No translated case has an answer by the same model as its source yet: nothing to compare.")
    unverified = sum(1 for p in pairs if not p.verified)
    if unverified:
        notes.append(f"{unverified} pair(s) come from translations nobody verified: a difference may be the "
                     "translation's, not the language's.")
    return TranslationEquivalence(rows=rows, pairs=pairs, margin=margin, judge_run=judge_run, notes=notes,
                                  translated_cases=len({p.translated_case for p in pairs}))


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def translation_judge_run_default() -> JudgeRun | None:
    """The check's default judge run: the newest finished run that judged an answer to a translated case (a run
    over the sources only has no judge side to compare), else the newest finished run."""
    run = (JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED, scored_items__gt=0,
                                   results__response__test_case__source_case__isnull=False)
           .select_related("rubric").order_by("-created_at", "-id").distinct().first())
    return run or judge_run_latest_finished()


def translation_pairs(*, run: JudgeRun | None) -> list[TranslationPair]:
    """Every (translated case, model) with an answer to the case and to its source, with both sides' expert truth
    (every standard cycle on the run's rubric, or every rubric without a run) and the run's judge composites."""
    translated = list(TestCase.objects.filter(source_case__isnull=False).select_related("source_case"))
    if not translated:
        return []
    case_ids = {c.pk for c in translated} | {c.source_case_id for c in translated}
    # A model's answers to a case under the standard condition stand for it when there are any (like with like:
    # a reasoning or repeated variant of the source has no counterpart in the translation); else all its answers.
    rows = list(ModelResponse.objects.filter(test_case_id__in=case_ids).values_list(
        "pk", "test_case_id", "model__name", "condition__is_standard"))
    standard = {(case, model) for _, case, model, is_standard in rows if is_standard}
    responses = [(pk, case, model) for pk, case, model, is_standard in rows
                 if is_standard or (case, model) not in standard]
    truths: dict[int, float] = {}
    cycles = CalibrationCycle.objects.filter(kind=CalibrationCycle.Kind.STANDARD)
    rubrics = [run.rubric] if run is not None else list(RubricVersion.objects.filter(
        pk__in=cycles.values("rubric_id")).order_by("pk"))
    for rubric in rubrics:
        for response_id, truth in response_truths_over(cycles=cycles.filter(rubric=rubric), rubric=rubric).items():
            truths[response_id] = truth.composite
    judged = {} if run is None else {
        r: float(d.composite) for r, d in judge_decisive_scored(run=run, response_ids=[pk for pk, _, _ in responses])
        .items() if d.composite is not None}
    expert: dict[tuple[int, str], list[float]] = defaultdict(list)
    judge: dict[tuple[int, str], list[float]] = defaultdict(list)
    models: dict[int, set[str]] = defaultdict(set)
    for pk, case_id, model in responses:
        models[case_id].add(model)
        if pk in truths:
            expert[(case_id, model)].append(truths[pk])
        if pk in judged:
            judge[(case_id, model)].append(judged[pk])
    pairs = []
    for case in translated:
        source = case.source_case
        assert source is not None
        for model in sorted(models[case.pk] & models[source.pk]):
            pairs.append(TranslationPair(
                source_case=source.pk, translated_case=case.pk, model=model, dimension=source.dimension,
                difficulty=source.difficulty, source_language=source.language, language=case.language,
                method=case.translation_method, verified=bool(case.verified_by),
                expert_source=_mean(expert[(source.pk, model)]), expert_translated=_mean(expert[(case.pk, model)]),
                judge_source=_mean(judge[(source.pk, model)]), judge_translated=_mean(judge[(case.pk, model)])))
    return pairs
