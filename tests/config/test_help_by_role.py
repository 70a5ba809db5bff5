"""Help pages by role (issue 33, part 5): experts read the experts' topics only, and none of the pages an expert can
open names an evaluated model, a judge or another person; leads read theirs too; admins read everything."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts.models import User
from config.help import HELP_AUDIENCE, help_audience
from evaluations.models import EvaluatedModel
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# Model and judge names as the docs and the demo spell them (a family name alone counts: it names the model).
MODEL_NAMES = re.compile(r"\b(gpt-?\d|gpt-[a-z]|o\d-mini|claude|gemini|llama|mistral|qwen|deepseek|sonnet|opus|haiku"
                         r"|grok|command-r|phi-\d)", re.IGNORECASE)


def signed_in(role: str) -> Client:
    client = Client()
    client.force_login(person(role))
    return client


def topics() -> list[str]:
    return sorted(path.stem for path in DOCS.glob("*.md"))


def judge_and_demo_model_names() -> set[str]:
    names = {str(django_settings.FAITHBENCH[key]) for key in ("JUDGE_PRIMARY_MODEL", "JUDGE_FALLBACK_MODEL")
             if django_settings.FAITHBENCH.get(key)} if hasattr(django_settings, "FAITHBENCH") else set()
    names |= set(EvaluatedModel.objects.values_list("name", flat=True))
    from evaluations import demo

    source = Path(demo.__file__).read_text(encoding="utf-8")
    names |= {m for m in re.findall(r'"([a-z0-9-]+/[a-z0-9.-]+)"', source)}
    return {name for name in names if name}


def test_help_by_role_an_expert_sees_the_experts_topics_only() -> None:
    client = signed_in(User.Role.EXPERT)
    index = client.get("/help/").content.decode()
    for slug in topics():
        listed = f'href="/help/{slug}/"' in index
        status = client.get(f"/help/{slug}/").status_code
        if help_audience(slug) == "expert":
            assert listed and status == 200, slug
        else:
            assert not listed and status == 404, slug
    for slug in ("judge-pipeline", "conditions", "import-export", "deployment", "panels-and-cycles", "development"):
        assert help_audience(slug) != "expert", slug


def test_help_by_role_no_page_an_expert_can_open_names_a_model_a_judge_or_a_person() -> None:
    client = signed_in(User.Role.EXPERT)
    readable = [slug for slug in topics() if client.get(f"/help/{slug}/").status_code == 200]
    assert "scoring-and-blinding" in readable and "data-protection" in readable
    names = judge_and_demo_model_names()
    assert names, "the judge's and the demo's model names should be known to this check"
    for slug in [*readable, ""]:
        html = client.get(f"/help/{slug}/" if slug else "/help/").content.decode()
        text = re.sub(r"<[^>]+>", " ", html)
        assert not EMAIL.search(text), (slug, EMAIL.search(text))
        assert not MODEL_NAMES.search(text), (slug, MODEL_NAMES.search(text))
        for name in names:
            assert name.lower() not in text.lower(), (slug, name)
        # Links from an expert's page to a topic they may not open are left as text.
        for target in re.findall(r'href="/help/([a-z0-9-]+)/', html):
            assert help_audience(target) == "expert", (slug, target)


def test_help_by_role_the_check_would_catch_the_admin_topics() -> None:
    """The same check finds models, judges and addresses on the pages experts no longer get (so it can fail)."""
    client = signed_in(User.Role.ADMIN)
    found = {slug for slug in ("judge-pipeline", "conditions", "import-export", "deployment", "panels-and-cycles")
             if MODEL_NAMES.search(re.sub(r"<[^>]+>", " ", client.get(f"/help/{slug}/").content.decode()))
             or EMAIL.search(re.sub(r"<[^>]+>", " ", client.get(f"/help/{slug}/").content.decode()))}
    assert found == {"judge-pipeline", "conditions", "import-export", "deployment", "panels-and-cycles"}


def test_help_by_role_leads_read_their_topics_and_admins_everything() -> None:
    lead, admin = signed_in(User.Role.ADJUDICATOR), signed_in(User.Role.ADMIN)
    for slug in topics():
        audience = help_audience(slug)
        assert lead.get(f"/help/{slug}/").status_code == (200 if audience in ("expert", "lead") else 404), slug
        assert admin.get(f"/help/{slug}/").status_code == 200, slug
    assert set(HELP_AUDIENCE) <= set(topics()), "HELP_AUDIENCE names a topic that has no docs page"
