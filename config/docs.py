"""The user documentation, `docs/*.md`, as the application serves it at /help/ (signed in).

One file per topic; the README links them for readers of the repository, and pages link `/help/<topic>/` for
readers of the running site. A page is rendered by the same sanitised Markdown renderer as model answers
(`annotations.rendering.markdown_to_safe_html`: markdown-it, then nh3's allow-list), then two things the
allow-list cannot know about are added to its output: each heading gets the anchor GitHub gives it (so
`judge-pipeline.md#leaderboard` works in both places), links between docs pages become /help/ links (a link to a
repository file that the site does not serve is left as its text). Wide tables scroll in their own box on a
phone, as on every page (static/js/tables.js).
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from annotations.rendering import markdown_to_safe_html

TOPIC = re.compile(r"^[a-z0-9][a-z0-9-]*$")  # a docs file's name without `.md`, as it appears in /help/<topic>/
_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)
_LINK = re.compile(r'<a href="([^"]*)"([^>]*)>(.*?)</a>', re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
_EXTERNAL = re.compile(r"^(?:https?:|mailto:)", re.IGNORECASE)
_DOC_LINK = re.compile(r"^(?:\./)?([a-z0-9][a-z0-9-]*)\.md(#[\w-]*)?$")
_README_LINK = re.compile(r"^\.\./README\.md(#[\w-]*)?$")


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


@dataclass(frozen=True)
class Topic:
    slug: str
    title: str
    path: Path


def heading_slug(text: str) -> str:
    """GitHub's anchor of a heading's text: lower case, everything but letters, digits, `-`, `_` and spaces
    dropped, spaces turned into `-`. Example: "On one machine: make serve" → "on-one-machine-make-serve"."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _unique(slugs: list[str]) -> list[str]:
    """GitHub numbers repeated anchors: `notes`, `notes-1`, `notes-2`."""
    seen: dict[str, int] = {}
    result = []
    for slug in slugs:
        count = seen.get(slug, 0)
        result.append(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return result


def heading_slugs(markdown: str) -> list[str]:
    """The anchors of every heading of a Markdown text (headings inside code blocks are not headings)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    texts = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            texts.append("".join(child.content for child in inline.children or ()
                                 if child.type in ("text", "code_inline")))
    return _unique([heading_slug(text) for text in texts])


def docs_topics() -> list[Topic]:
    """Every docs page, by title."""
    topics = []
    for path in sorted(docs_dir().glob("*.md")):
        if TOPIC.match(path.stem):
            topics.append(Topic(slug=path.stem, title=_title(path.read_text(encoding="utf-8"), path.stem), path=path))
    return sorted(topics, key=lambda t: t.title.lower())


def docs_topic(slug: str) -> Topic | None:
    """The docs page `docs/<slug>.md`, or None (an unknown name, or one that is not a plain file name)."""
    if not TOPIC.match(slug):
        return None
    path = docs_dir() / f"{slug}.md"
    if not path.is_file():
        return None
    return Topic(slug=slug, title=_title(path.read_text(encoding="utf-8"), slug), path=path)


def _title(markdown: str, fallback: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].replace("`", "").strip()
    return fallback


def _help_href(target: str, readable: Callable[[str], bool] | None = None) -> str | None:
    """Where a docs page's relative link points on the site, or None when the site does not serve it (or not to
    this reader: `readable(slug)` is False)."""
    if target.startswith("#") or _EXTERNAL.match(target):
        return target
    doc = _DOC_LINK.match(target)
    if doc and (docs_dir() / f"{doc.group(1)}.md").is_file() and (readable is None or readable(doc.group(1))):
        return f"/help/{doc.group(1)}/{doc.group(2) or ''}"
    readme = _README_LINK.match(target)
    if readme:
        return "/help/"
    return None


def docs_render(topic: Topic, *, readable: Callable[[str], bool] | None = None) -> SafeString:
    """A docs page as safe HTML for the help view; links to topics the reader may not open (`readable`) are text."""
    body = str(markdown_to_safe_html(topic.path.read_text(encoding="utf-8")))
    texts = [html.unescape(_TAGS.sub("", m.group(2))) for m in _HEADING.finditer(body)]
    anchors = iter(_unique([heading_slug(text) for text in texts]))
    body = _HEADING.sub(lambda m: f'<h{m.group(1)} id="{next(anchors)}">{m.group(2)}</h{m.group(1)}>', body)

    def link(m: re.Match[str]) -> str:
        href = _help_href(html.unescape(m.group(1)), readable)
        return m.group(3) if href is None else f'<a href="{html.escape(href)}"{m.group(2)}>{m.group(3)}</a>'

    body = _LINK.sub(link, body)
    return mark_safe(body)  # noqa: S308 - nh3-sanitised; ids are heading_slug output (\w and -), hrefs escaped
