"""Factories and a small scoring world, built through the real services, shared by my test packages.

Marker strings are seeded into everything an expert must never see (model name, provider, family,
other experts' identities and rationales, held-out text of other panels) so blinding tests can fail.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import factory
import pytest

from accounts.models import User
from accounts.services import user_create
from annotations.models import Assignment, CalibrationCycle, Panel
from calibration.cycles.sampling import DrawParams
from calibration.cycles.services import cycle_commit
from evaluations.models import EvaluatedModel, ModelResponse, TestCase, Tradition, Visibility

_seq = itertools.count(1)

MODEL_NAME_MARKER = "zqmodelname-7731"
MODEL_PROVIDER_MARKER = "ZqProviderCorp-4410"
MODEL_FAMILY_MARKER = "zqfamily-5529"
OTHER_EXPERT_EMAIL = "zq.other.expert.9182@example.org"
OTHER_EXPERT_NAME = "Zq Otherexpert Namemarker"
OTHER_RATIONALE_MARKER = "ZQ-OTHER-RATIONALE-6612"
HELD_OUT_MARKER = "ZQ-HELDOUT-ORTHODOX-3391"
REFERENCE_MARKER = "ZQ-REFERENCE-ANSWER-2207"


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TestCase

    external_id = factory.Sequence(lambda n: f"case-{n:05d}")
    dimension = "doctrinal"
    difficulty = "medium"
    question_type = "factual_recall"
    prompt = factory.Sequence(lambda n: f"Question {n}: explain the doctrine in a short answer.")
    reference_answer = f"{REFERENCE_MARKER}: the reference answer."


class EvaluatedModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EvaluatedModel
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"vendor/model-{n}")
    provider = "Vendor"
    family = "vendorfam"


class ModelResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ModelResponse

    test_case = factory.SubFactory(CaseFactory)
    model = factory.SubFactory(EvaluatedModelFactory)
    text = factory.Sequence(lambda n: f"Answer {n}. The doctrine holds that grace precedes faith.")


def person(role: str = User.Role.EXPERT, *, tradition: Tradition | None = None, email: str | None = None,
           name: str = "", password: str = "pw-test-1234") -> User:
    """A user with a verified email address and (non-admins) an expert profile, via the service."""
    n = next(_seq)
    return user_create(
        email=email or f"{role}{n}@faithbench.test", password=password, role=role, display_name=name or f"Zq Person {n:04d}",
        tradition=tradition, is_staff=role == User.Role.ADMIN, is_superuser=role == User.Role.ADMIN,
    )


def tradition(key: str) -> Tradition:
    return Tradition.objects.get(key=key)


@dataclass
class World:
    expert: User                 # Catholic panel: the expert whose pages we test
    other_expert: User           # Catholic panel: same items, markers in identity and rationale
    other_panel_expert: User     # Orthodox panel
    lead: User                   # Catholic panel lead (adjudicator)
    other_lead: User             # Orthodox panel lead
    admin: User
    catholic: Panel
    orthodox: Panel
    cycle: CalibrationCycle
    models: list[EvaluatedModel] = field(default_factory=list)

    def assignments(self, user: User) -> list[Assignment]:
        return list(Assignment.objects.filter(expert=user).order_by("position"))


def world_build(*, show_reference_answers: bool = False, catholic_cases: int = 2) -> World:
    """Two panels, two marked models, Catholic, Orthodox (one held-out) and neutral cases; one committed cycle."""
    catholic_t, orthodox_t = tradition("catholic"), tradition("orthodox")
    marked = EvaluatedModelFactory(name=MODEL_NAME_MARKER, provider=MODEL_PROVIDER_MARKER, family=MODEL_FAMILY_MARKER)
    plain = EvaluatedModelFactory(name="qxplainvendor/qx-model-3318", provider="QxPlainCo-8812", family="qxfam-2291")
    cases = [CaseFactory(tradition=catholic_t, dimension="doctrinal") for _ in range(catholic_cases)]
    cases.append(CaseFactory(tradition=orthodox_t, dimension="historical", visibility=Visibility.HELD_OUT,
                                 prompt=f"{HELD_OUT_MARKER} Which council?"))
    cases.append(CaseFactory(tradition=None, dimension="textual",
                                 prompt="What does λόγος mean in John 1:1, and בְּרֵאשִׁית in Genesis 1:1?"))
    for case in cases:
        for model in (marked, plain):
            ModelResponseFactory(test_case=case, model=model)

    expert = person(tradition=catholic_t, name="Alice Expert", email="alice@faithbench.test")
    other = person(tradition=catholic_t, name=OTHER_EXPERT_NAME, email=OTHER_EXPERT_EMAIL)
    third = person(tradition=catholic_t, name="Carol Third")
    orthodox_expert = person(tradition=orthodox_t, name="Olga Orthodox", email="olga@faithbench.test")
    lead = person(User.Role.ADJUDICATOR, tradition=catholic_t, name="Larry Lead", email="lead@faithbench.test")
    other_lead = person(User.Role.ADJUDICATOR, tradition=orthodox_t, name="Otto Lead")
    admin = person(User.Role.ADMIN, name="Ada Admin", email="ada@faithbench.test")

    catholic = Panel.objects.create(name="Catholic panel", tradition=catholic_t, lead=lead)
    catholic.members.set([expert, other, third])
    orthodox = Panel.objects.create(name="Orthodox panel", tradition=orthodox_t, lead=other_lead)
    orthodox.members.set([orthodox_expert, person(tradition=orthodox_t), person(tradition=orthodox_t)])
    neutral = Panel.objects.create(name="Neutral panel", tradition=None, lead=lead)
    neutral.members.set([expert, other, orthodox_expert])

    cycle, _ = cycle_commit(
        name="Test cycle", params=DrawParams(seed=7, min_per_dimension=50), neutral_panel=neutral,
        show_reference_answers=show_reference_answers, created_by=admin,
    )
    return World(expert=expert, other_expert=other, other_panel_expert=orthodox_expert, lead=lead,
                 other_lead=other_lead, admin=admin, catholic=catholic, orthodox=orthodox, cycle=cycle,
                 models=[marked, plain])


@pytest.fixture
def world(db) -> World:  # type: ignore[no-untyped-def]
    return world_build()
