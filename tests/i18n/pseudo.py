"""Finding strings nobody marked for translation: render a page in the accented pseudo-locale (config/catalogues.py)
and list every visible English word outside ⟦…⟧. Data (names, case text, numbers) is told apart by the caller's
allowlist and by `translate="no"` on the element that holds it."""
from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

from config.catalogues import PSEUDO_CLOSE, PSEUDO_OPEN

VISIBLE_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")
_SKIP = {"script", "style", "template", "noscript", "kbd"}  # <kbd>: key caps (Tab, Shift), named as printed
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_WORD = re.compile(r"[A-Za-z]{2,}")


class _Collector(HTMLParser):
    def __init__(self, scope: tuple[str, str] | None) -> None:
        super().__init__(convert_charrefs=True)
        self.scope = scope
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, in scope, skipped)
        self.found: list[str] = []

    def _state(self) -> tuple[bool, bool]:
        if not self.stack:
            return self.scope is None, False
        return self.stack[-1][1], self.stack[-1][2]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        in_scope, skipped = self._state()
        if self.scope and tag == self.scope[0] and self.scope[1] in (values.get("class") or "").split():
            in_scope = True
        skipped = skipped or tag in _SKIP or values.get("translate") == "no" or "hidden" in values
        if in_scope and not skipped:
            for name in VISIBLE_ATTRIBUTES:
                if values.get(name):
                    self.found.append(values[name] or "")
            if tag == "input" and values.get("type") in ("submit", "button") and values.get("value"):
                self.found.append(values["value"] or "")
        if tag not in _VOID:
            self.stack.append((tag, in_scope, skipped))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        in_scope, skipped = self._state()
        if in_scope and not skipped and data.strip():
            self.found.append(data.strip())


def unmarked_strings(html: str, *, allow: Iterable[str] = (), scope: tuple[str, str] | None = None) -> list[str]:
    """Visible texts with an English word outside every ⟦…⟧ (the pseudo-locale's marks); `allow`: data strings
    (names, case text) that may appear as they are; `scope`: (tag, class) of the only element to look in."""
    allowed = [a for a in allow if a]
    collector = _Collector(scope)
    collector.feed(html)
    problems = []
    for text in collector.found:
        rest = re.sub(re.escape(PSEUDO_OPEN) + ".*?" + re.escape(PSEUDO_CLOSE), " ", text, flags=re.S)
        for data in allowed:
            rest = rest.replace(data, " ")
        if rest.strip() and any(rest.strip() in data for data in allowed):
            continue  # a piece of a data string (e.g. a question split around an isolated Hebrew or Greek phrase)
        if _WORD.search(rest):
            problems.append(text)
    return problems
