"""The help pages (/help/, /help/<topic>/): docs/*.md served to signed-in users through the sanitised renderer, with
GitHub's heading anchors, links between docs pages turned into /help/ links and repository paths left as text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from config.docs import docs_render, docs_topic, docs_topics, heading_slug, heading_slugs
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture
def client_signed_in() -> Client:
    """An admin: every topic is theirs (tests/config/test_help_by_role.py checks what the other roles read)."""
    client = Client()
    client.force_login(person("admin"))
    return client


def test_heading_slug_is_githubs_anchor() -> None:
    assert heading_slug("On one machine: make serve") == "on-one-machine-make-serve"
    assert heading_slug("With Docker: compose.yaml") == "with-docker-composeyaml"
    assert heading_slug("The contradiction rule (§5.3.5 \"flag\")") == "the-contradiction-rule-535-flag"
    assert heading_slugs("# A\n\n## Notes\n\n```\n## not a heading\n```\n\n## Notes\n") == ["a", "notes", "notes-1"]


def test_the_index_lists_every_docs_page(client_signed_in: Client) -> None:
    response = client_signed_in.get("/help/")
    assert response.status_code == 200
    html = response.content.decode()
    for path in DOCS.glob("*.md"):
        assert f'href="/help/{path.stem}/"' in html, f"/help/ does not list docs/{path.name}"


def test_a_topic_renders_with_anchors_help_links_and_no_repository_links(client_signed_in: Client) -> None:
    response = client_signed_in.get("/help/api/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1 id=\"api\">API</h1>" in html
    # docs/api.md links import-export.md, rating-studies.md and reports.md, and the repository file examples/…
    for topic in ("import-export", "rating-studies", "reports"):
        assert f'href="/help/{topic}/"' in html
    assert "examples/push_and_judge.py" in html and 'href="../examples/' not in html
    assert not re.search(r'href="[^"/#][^":]*\.md', html), "a relative .md link was left unrewritten"


def test_an_anchor_into_another_page_points_at_an_id_that_page_has(client_signed_in: Client) -> None:
    html = client_signed_in.get("/help/notifications/").content.decode()
    assert 'href="/help/deployment/#production"' in html
    assert 'id="production"' in client_signed_in.get("/help/deployment/").content.decode()


def test_rendering_is_sanitised(tmp_path: Path, settings) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "probe.md").write_text(
        "# Probe <script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>\n", encoding="utf-8")
    settings.BASE_DIR = tmp_path
    topic = docs_topic("probe")
    assert topic is not None
    html = str(docs_render(topic))
    assert "<script" not in html and "<img" not in html and "href=\"javascript:" not in html


@pytest.mark.parametrize("topic", ["no-such-topic", "..", "README", "_private", "%2e%2e%2fREADME"])
def test_unknown_or_unsafe_topics_are_404(client_signed_in: Client, topic: str) -> None:
    assert client_signed_in.get(f"/help/{topic}/").status_code == 404


def test_help_needs_a_sign_in() -> None:
    response = Client().get("/help/statistics/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_every_docs_page_renders(client_signed_in: Client) -> None:
    topics = docs_topics()
    assert {t.slug for t in topics} == {p.stem for p in DOCS.glob("*.md")}
    for topic in topics:
        response = client_signed_in.get(f"/help/{topic.slug}/")
        assert response.status_code == 200, topic.slug
        assert topic.title.split()[0] in response.content.decode()


def test_help_reads_no_rows_beyond_the_session(client_signed_in: Client, django_assert_max_num_queries) -> None:
    with django_assert_max_num_queries(8):
        client_signed_in.get("/help/judge-pipeline/")
