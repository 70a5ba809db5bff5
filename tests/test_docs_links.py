"""The README stays short and the documentation stays whole: README.md ≤ 250 lines with the two commands CI looks
for, every relative link and image of README.md and docs/*.md points at a file that exists (and at a heading that
exists, when the link names one), and every docs/*.md page is linked from the README's list."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from config.docs import heading_slugs

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 250
PAGES = [README, *sorted(DOCS.glob("*.md"))]
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)  # http:, https:, mailto:, //host


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image of a Markdown file, code spans and blocks excluded."""
    found: list[tuple[int, str]] = []
    for token in MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8")):
        line = token.map[0] + 1 if token.map else 0
        for child in token.children or ():
            if child.type == "link_open":
                found.append((line, str(child.attrGet("href"))))
            elif child.type == "image":
                found.append((line, str(child.attrGet("src"))))
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """'file:line: link ...: what is wrong' for each relative link or image that does not resolve."""
    problems = []
    for line, target in links(path):
        if EXTERNAL.match(target):
            continue
        where = f"{path.relative_to(root)}:{line}: link {target!r}"
        file_part, _, anchor = target.partition("#")
        destination = path if not file_part else (path.parent / unquote(file_part)).resolve()
        if not destination.exists():
            problems.append(f"{where}: no file {destination}")
            continue
        if anchor:
            if destination.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif anchor not in heading_slugs(destination.read_text(encoding="utf-8")):
                problems.append(f"{where}: {destination.name} has no heading #{anchor}")
    return problems


def test_readme_is_at_most_250_lines_and_shows_the_two_commands_ci_runs() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; at most {MAX_README_LINES}: move detail to docs/"
    # .ci/run greps the README for lines that start with these and runs `make -n` of each.
    for command in ("make run ", "make test "):
        assert any(line.startswith(command) for line in lines), f"README.md has no line starting with {command!r}"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for _, target in links(README)
              if not EXTERNAL.match(target)}
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert unlinked == [], f"docs pages missing from README.md's Documentation list: {unlinked}"


def test_the_checker_finds_a_broken_file_a_broken_anchor_and_ignores_code(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Readme\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "probe.md"
    page.write_text("# Probe\n\n## A heading: `with code`\n\n[ok](#a-heading-with-code) [gone](no-such-file.md)\n"
                    "[bad anchor](../README.md#no-such-heading) ![img](screenshots/none.png)\n\n"
                    "`[not a link](nowhere.md)`\n\n```\n[nor this](nowhere.md)\n```\n", encoding="utf-8")
    problems = broken_links(page, root=tmp_path)
    assert len(problems) == 3, problems
    assert "no-such-file.md" in problems[0] and "no heading #no-such-heading" in problems[1]
    assert "screenshots/none.png" in problems[2]
