"""Model answers as safe HTML: Markdown → nh3 allow-list → Hebrew runs marked right-to-left, Greek marked.

Model output is untrusted input. It is parsed as CommonMark with the GitHub-flavoured extensions
models write (tables, strikethrough, footnotes, task lists) by markdown-it-py — so a list that follows
a paragraph line without a blank line, or is nested by two spaces, stays a list, as the model meant it —
then cleaned by nh3 (ammonia) with a small allow-list, and only then are runs of Hebrew wrapped in <span dir="rtl" lang="he"> and
runs of Greek in <span lang="grc"> — after sanitising, so the wrapping cannot be abused and the
allow-list need not admit `dir`/`lang` from the input.
"""
from __future__ import annotations

import functools
import re

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "b", "i", "u", "s", "sub", "sup", "blockquote", "code", "pre",
    "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a", "abbr",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}

# Hebrew block (letters, points, cantillation, maqaf, sof pasuq) and presentation forms.
HEBREW = "\u0590-\u05ff\ufb1d-\ufb4f"
# Greek and Coptic, Greek Extended (polytonic), combining diacritics used with them.
GREEK = "\u0370-\u03ff\u1f00-\u1fff"
# Syriac (Aramaic in Syriac script; Aramaic in square script is in the Hebrew block above).
SYRIAC = "\u0700-\u074f"
_HEBREW_RUN = re.compile(rf"[{HEBREW}]+(?:[\s\u0300-\u036f.,;:·׃־\-]+[{HEBREW}]+)*")
_GREEK_RUN = re.compile(rf"[{GREEK}]+(?:[\s\u0300-\u036f.,;:·\-]+[{GREEK}]+)*")
_SYRIAC_RUN = re.compile(rf"[{SYRIAC}]+(?:[\s.,:\-]+[{SYRIAC}]+)*")
# A tag of nh3's output: attribute values are always double-quoted and may contain ">" (and Hebrew).
_TAG = re.compile(r'(<[^>"]*(?:"[^"]*"[^>"]*)*>)')


def _wrap_scripts(text: str) -> str:
    # A `dir` attribute isolates the run (HTML's default style: unicode-bidi: isolate), so a Hebrew phrase inside an
    # English sentence neither reorders the words around it nor is reordered by them (issue 35).
    text = _HEBREW_RUN.sub(lambda m: f'<span dir="rtl" lang="he">{m.group(0)}</span>', text)
    text = _SYRIAC_RUN.sub(lambda m: f'<span dir="rtl" lang="syc">{m.group(0)}</span>', text)
    return _GREEK_RUN.sub(lambda m: f'<span lang="grc">{m.group(0)}</span>', text)


def mark_scripts(html: str) -> str:
    """Wrap Hebrew and Greek runs found in text nodes (never inside tags or attributes) of sanitised HTML."""
    parts = _TAG.split(html)
    inside_code = 0
    out = []
    for part in parts:
        if part.startswith("<"):
            name = part.strip("</>").split()[0].lower() if part.strip("</>") else ""
            if name in ("code", "pre"):
                inside_code += -1 if part.startswith("</") else 1
            out.append(part)
        else:
            out.append(part if inside_code > 0 else _wrap_scripts(part))
    return "".join(out)


_ALIGN = re.compile(r"text-align:\s*(left|right|center)")
_TASK_BOX = re.compile(r'^<input class="task-list-item-checkbox"( checked="checked")?')


def _keep_within_allow_list(state: StateCore) -> None:
    """Say what the renderer would say with markup the allow-list keeps.

    Table alignment becomes `align` (the allow-list drops `style`), and a task list's checkbox — an
    `<input>` the allow-list drops — becomes the ballot box ☐ or ☑ as text.
    """
    for token in state.tokens:
        if token.type in ("th_open", "td_open"):
            match = _ALIGN.search(str(token.attrGet("style") or ""))
            if match:
                token.attrs.pop("style", None)
                token.attrSet("align", match.group(1))
        for child in token.children or ():
            if child.type == "html_inline":
                box = _TASK_BOX.match(child.content)
                if box:
                    child.type, child.content = "text", ("\u2611" if box.group(1) else "\u2610")


def _footnote_ref(self: object, tokens: list[Token], idx: int, options: object, env: dict) -> str:
    # A plain superscript: the allow-list drops the ids a footnote link would jump to.
    label = int(tokens[idx].meta["id"]) + 1
    sub = f":{tokens[idx].meta['subId']}" if tokens[idx].meta.get("subId", 0) > 0 else ""
    return f"<sup>[{label}{sub}]</sup>"


def _build_renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(footnote_plugin).use(tasklists_plugin)
    md.core.ruler.push("keep_within_allow_list", _keep_within_allow_list)
    md.add_render_rule("footnote_ref", _footnote_ref)
    md.add_render_rule("footnote_anchor", lambda *args: "")
    return md


_RENDERER = _build_renderer()


def sanitise(html: str) -> str:
    """Clean HTML with the allow-list: tags, attributes and URL schemes not listed are removed."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def markdown_to_safe_html(text: str) -> SafeString:
    """Render untrusted Markdown (CommonMark + GFM tables, strikethrough, footnotes, task lists) to
    sanitised HTML with Hebrew marked right-to-left and Greek marked."""
    return mark_safe(_markdown_clean(text or ""))  # noqa: S308 - sanitised by nh3 in _markdown_clean


# Every member of a panel opens the same items, and a submit renders the next item that the page then opens
# again: the same texts are rendered over and over (6 % of the web processes' time under load,
# benchmarks/README.md). The result depends on the text alone, so a per-process cache is safe.
@functools.lru_cache(maxsize=1024)
def _markdown_clean(text: str) -> str:
    return str(mark_scripts(sanitise(_RENDERER.render(text)).strip()))
