"""Model answers as safe HTML: Markdown → nh3 allow-list → Hebrew runs marked right-to-left, Greek marked.

Model output is untrusted input. It is rendered with python-markdown, then cleaned by nh3 (ammonia)
with a small allow-list, and only then are runs of Hebrew wrapped in <span dir="rtl" lang="he"> and
runs of Greek in <span lang="grc"> — after sanitising, so the wrapping cannot be abused and the
allow-list need not admit `dir`/`lang` from the input.
"""
from __future__ import annotations

import re

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

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
_HEBREW_RUN = re.compile(rf"[{HEBREW}]+(?:[\s\u0300-\u036f.,;:·׃־\-]+[{HEBREW}]+)*")
_GREEK_RUN = re.compile(rf"[{GREEK}]+(?:[\s\u0300-\u036f.,;:·\-]+[{GREEK}]+)*")
# A tag of nh3's output: attribute values are always double-quoted and may contain ">" (and Hebrew).
_TAG = re.compile(r'(<[^>"]*(?:"[^"]*"[^>"]*)*>)')


def _wrap_scripts(text: str) -> str:
    text = _HEBREW_RUN.sub(lambda m: f'<span dir="rtl" lang="he">{m.group(0)}</span>', text)
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


def markdown_to_safe_html(text: str) -> SafeString:
    """Render untrusted Markdown to sanitised HTML with Hebrew marked right-to-left."""
    html = markdown.markdown(text or "", extensions=["extra", "sane_lists"], output_format="html")
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return mark_safe(mark_scripts(clean))  # noqa: S308 - sanitised by nh3 just above
