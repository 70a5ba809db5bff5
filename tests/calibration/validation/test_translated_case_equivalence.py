"""Issue 35, the translation-equivalence check: for a case and its translation(s), do the experts' scores and the
judge's agree across languages? Known truths by simulation (equal scores: the interval covers 0; a shifted
translation: detected), too few pairs in words, then the admins' page on real rows, and who may see it."""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from django.urls import reverse

from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.validation.translation import (
    MIN_PAIRS,
    TranslationPair,
    translation_equivalence_build,
    translation_pairs,
)
from evaluations.models import JudgeResult, JudgeRun, ModelResponse
from evaluations.models import TestCase as Case

DIMENSIONS = ("doctrinal", "textual")


def simulated_pairs(n: int, *, seed: int, expert_shift: float = 0.0, judge_shift: float = 0.0,
                    noise: float = 0.05) -> list[TranslationPair]:
    """n source cases with one translation each, answered by one model: the translation's true score is the
    source's plus `expert_shift` (what the experts see) and the judge's reads the translation `judge_shift` higher."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        truth = float(rng.uniform(0.3, 0.8))
        translated = truth + expert_shift
        pairs.append(TranslationPair(
            source_case=i, translated_case=1000 + i, model="m", dimension=DIMENSIONS[i % 2],
            difficulty=("easy", "medium", "hard", "expert")[i % 4], source_language="en",
            language=("es", "ko")[i % 2], method="human", verified=True,
            expert_source=truth + rng.normal(0, noise), expert_translated=translated + rng.normal(0, noise),
            judge_source=truth + rng.normal(0, noise),
            judge_translated=translated + judge_shift + rng.normal(0, noise)))
    return pairs


def _row(check, facet: str = "overall", value: str = "all"):
    return next(r for r in check.rows if r.facet == facet and r.value == value)


def test_translated_case_equivalence_equal_scores_interval_covers_zero() -> None:
    """Equal scores in both languages: over 200 simulated checks the experts' interval covers 0 about 95 % of the
    time (t interval on 40 pairs), and a large check is called equivalent within ±0.05."""
    covered = 0
    for seed in range(200):
        d = _row(translation_equivalence_build(simulated_pairs(40, seed=seed))).experts
        covered += d.lower <= 0 <= d.upper
    assert 0.90 <= covered / 200 <= 0.99
    big = translation_equivalence_build(simulated_pairs(300, seed=1))
    overall = _row(big)
    assert overall.experts.verdict == overall.judge.verdict == overall.gap.verdict == "equivalent"
    assert "Equivalent within ±0.05" in overall.experts.words


def test_translated_case_equivalence_shifted_translation_detected() -> None:
    """A translation the experts score 0.10 lower (a worse answer in that language) is detected by both; a judge
    that alone reads translations 0.10 higher is detected in the judge and gap columns, not the experts'."""
    harder = _row(translation_equivalence_build(simulated_pairs(40, seed=3, expert_shift=-0.10)))
    assert harder.experts.verdict == "differs" and harder.experts.upper < 0
    assert harder.judge.verdict == "differs" and harder.gap.lower <= 0 <= harder.gap.upper
    assert "Translations score lower" in harder.experts.words
    biased = _row(translation_equivalence_build(simulated_pairs(40, seed=3, judge_shift=0.10)))
    assert biased.experts.lower <= 0 <= biased.experts.upper
    assert biased.judge.verdict == "differs" and biased.gap.verdict == "differs" and biased.gap.lower > 0


def test_translated_case_equivalence_per_dimension_and_language_rows() -> None:
    check = translation_equivalence_build(simulated_pairs(40, seed=5))
    assert {(r.facet, r.value) for r in check.rows} == {("overall", "all"), ("dimension", "doctrinal"),
                                                        ("dimension", "textual"), ("language", "es"),
                                                        ("language", "ko")}
    assert _row(check, "language", "es").experts.n == 20


def test_translated_case_equivalence_too_few_pairs_in_words() -> None:
    check = translation_equivalence_build(simulated_pairs(MIN_PAIRS - 1, seed=2, expert_shift=-0.5))
    d = _row(check).experts
    assert d.verdict == "too few pairs" and f"{MIN_PAIRS - 1} pairs: too few" in d.words
    empty = translation_equivalence_build([])
    assert empty.rows == [] and "nothing to compare" in empty.notes[0]
    unverified = [TranslationPair(**{**p.__dict__, "verified": False}) for p in simulated_pairs(6, seed=1)]
    assert "nobody verified" in translation_equivalence_build(unverified).notes[0]


@pytest.fixture
def translated_world(db):
    """The scored world with a Spanish translation of two of its Catholic cases, answered by the same models; the
    experts score the translations' answers and the judge scores every answer (translations one point lower)."""
    from tests.annotations.factories import CaseFactory, ModelResponseFactory
    from tests.calibration.reports.test_report_views import scored_world

    world, run = scored_world()
    sources = list(Case.objects.filter(tradition__key="catholic").order_by("pk")[:2])
    for i, source in enumerate(sources):
        translation = CaseFactory(
            external_id=f"{source.external_id}-es", tradition=source.tradition, dimension=source.dimension,
            difficulty=source.difficulty, prompt=f"¿Traducción {i}?", language="es", source_case=source,
            translation_method="machine_expert", translator="DeepL", verified_by="Dra. Ruiz")
        for response in ModelResponse.objects.filter(test_case=source):
            ModelResponseFactory(test_case=translation, model=response.model)
    return world, run, sources


def test_translated_case_equivalence_pairs_from_rows_and_page(translated_world, client) -> None:
    world, run, sources = translated_world
    translated = ModelResponse.objects.filter(test_case__source_case__in=sources)
    for response in translated:  # the judge scores each translation's answer 0.2 below its source's answer
        source = ModelResponse.objects.get(test_case=response.test_case.source_case, model=response.model)
        JudgeResult.objects.create(run=run, response=response, judge_model=run.primary_model, role="primary",
                                   status="scored", composite=Decimal("0.3"), attempts=1)
        assert JudgeResult.objects.filter(run=run, response=source, composite=Decimal("0.5")).exists()
    pairs = translation_pairs(run=run)
    assert len(pairs) == 4 and {p.language for p in pairs} == {"es"}
    assert all(p.judge_source == 0.5 and p.judge_translated == 0.3 for p in pairs)
    assert all(p.expert_source is not None and p.expert_translated is None for p in pairs)  # not scored yet
    client.force_login(world.admin)
    page = client.get(reverse("calibration:translation_equivalence"), {"run": run.pk})
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-testid="translation-equivalence"' in body and "4 pairs: too few" in body
    assert "0 pairs: too few" in body  # the experts have scored no translation yet
    export = client.get(reverse("calibration:translation_equivalence_export"), {"run": run.pk}).content.decode()
    assert "overall,all,judge,-0.2" in export
    assert client.get(reverse("calibration:translation_equivalence"), {"run": "x"}).status_code == 400


def test_translated_case_equivalence_defaults_to_the_newest_run_that_judged_a_translation(translated_world,
                                                                                            client) -> None:  # type: ignore[no-untyped-def]
    """A newer run over the sources only has no judge side: the page's default is the run that judged a translation;
    the pairs name how each case was translated in words, never by the stored key."""
    from calibration.validation.translation import translation_judge_run_default

    world, run, sources = translated_world
    assert translation_judge_run_default() == run  # nothing judged a translation yet: the newest finished run
    response = ModelResponse.objects.filter(test_case__source_case__in=sources).first()
    JudgeResult.objects.create(run=run, response=response, judge_model=run.primary_model, role="primary",
                               status="scored", composite=Decimal("0.3"), attempts=1)
    newer = JudgeRun.objects.create(rubric=run.rubric, primary_model="j", base_url="http://127.0.0.1:9/v1",
                                    status=JudgeRun.Status.FINISHED, scored_items=3, processed_items=3,
                                    total_items=3)
    assert translation_judge_run_default() == run != newer
    client.force_login(world.admin)
    body = client.get(reverse("calibration:translation_equivalence")).content.decode()
    assert f"judge run #{run.pk}" in body
    assert "Machine translation checked by an expert" in body and "machine_expert" not in body


def test_translated_case_equivalence_page_is_for_admins_only(translated_world, client) -> None:
    world, _run, _ = translated_world
    for user, expected in ((world.expert, 403), (world.lead, 403), (world.admin, 200)):
        client.force_login(user)
        assert client.get(reverse("calibration:translation_equivalence")).status_code == expected


def test_translated_case_equivalence_page_query_count(translated_world, client, django_assert_max_num_queries) -> None:
    world, run, _ = translated_world
    client.force_login(world.admin)
    with django_assert_max_num_queries(20):
        assert client.get(reverse("calibration:translation_equivalence"), {"run": run.pk}).status_code == 200


def test_translated_case_equivalence_expert_scores_across_cycles(translated_world) -> None:
    """A translation scored in a later (Spanish) cycle pairs with its source's truth from the first cycle."""
    from annotations.models import CalibrationCycle, CycleItem

    world, run, sources = translated_world
    later = CalibrationCycle.objects.create(name="Spanish cycle", rubric=world.cycle.rubric, seed=1,
                                            created_by=world.admin)
    scored = 0
    for response in ModelResponse.objects.filter(test_case__source_case__in=sources):
        item = CycleItem.objects.create(cycle=later, response=response, source="random", inclusion_probability=1,
                                        inclusion_basis="drawn")
        assignment = Assignment.objects.create(cycle=later, item=item, expert=world.expert, panel=world.catholic,
                                               position=scored + 1)
        keys = sub_dimension_keys(assignment=assignment)
        annotation_submit(assignment=assignment, actor=world.expert,
                          data=AnnotationInput(scores=dict.fromkeys(keys, 1), rationale="menos precisa"))
        scored += 1
    pairs = translation_pairs(run=run)
    assert scored == 4 and all(p.expert_translated == pytest.approx(1 / 3) for p in pairs)
