"""ARCHITECTURE.md and NOTES.md name only paths that exist: every code span that looks like a repository path
(it contains a `/`, or ends in a file extension such as .py, .md or .html) must name a file or directory of this
repository. A module that moves fails this test until the documents say where it went.

How a span is read:
- its first word only (`manage.py irr` names manage.py; `benchmarks/coverage.py --full` names the benchmark), with a
  trailing `:12`, `:12-30` or `::test_name` dropped;
- a path whose first part is a top-level entry of the repository (`calibration/...`, `tests/...`) must exist exactly
  there; any other path (`models/review.py`, `cycles/`, said in the context of an app) must be the end of some
  existing path, and a bare file name (`services.py`) the name of some file;
- URLs (`/healthz`, `http://...`), placeholders and patterns (`<app>`, `*`, `…`, `{`), attributes
  (`Model.field/other`) and NOT_REPOSITORY_FILES (what a download contains, what `make` creates) are not checked.
"""
from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("ARCHITECTURE.md", "NOTES.md")
EXTENSIONS = (".py", ".md", ".html", ".txt", ".toml", ".json", ".csv", ".yml", ".yaml", ".js", ".css", ".lock",
              ".cfg", ".ini", ".sh", ".in", ".template", ".conf", ".pdf", ".zip", ".xlsx", ".svg")
PLACEHOLDER = re.compile(r"[<>*…{}$?\[\]]|\.\.\.")
LOCATION = re.compile(r"(?:::[\w\[\]-]+|:\d+(?:-\d+)?)$")  # file.py::test_name, file.py:12, file.py:12-30
SKIPPED_DIRECTORIES = {".git", ".venv", ".theobert", "node_modules", "__pycache__", ".ruff_cache", ".mypy_cache",
                       ".pytest_cache", ".import_linter_cache", "artifacts"}
# Names the documents mention that are not files of the committed repository: what a download or an upload contains,
# what a make target creates.
NOT_REPOSITORY_FILES = {
    "ratings.csv": "the ratings file of a report bundle and of `manage.py irr`",
    "inputs.csv": "the inputs file inside a snapshot's bundle",
    "variance_budget.csv": "the variance budget file inside a calibrated snapshot's bundle",
    "manifest.json": "the manifest inside a backup directory (`manage.py backup`)",
    ".theobert/": "the TheoBERT extra that `make test` installs",
}


@cache
def repository_paths() -> frozenset[str]:
    """Every file and directory of the working tree, relative to ROOT (directories end in /)."""
    found: set[str] = set()
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")]
        base = Path(directory).relative_to(ROOT).as_posix()
        prefix = "" if base == "." else base + "/"
        found.update(prefix + d + "/" for d in subdirectories)
        found.update(prefix + f for f in files)
    return frozenset(found)


def candidate(span: str) -> str | None:
    """The repository path a code span names, or None when it names none."""
    words = span.split()
    if not words:
        return None
    word = LOCATION.sub("", words[0].strip("()\"',;"))
    if not word or PLACEHOLDER.search(word) or word.startswith(("/", "~", "-")) or "://" in word:
        return None
    if "/" not in word and not word.endswith(EXTENSIONS):
        return None
    first = word.split("/", 1)[0]
    if "." in first[1:] and not first.endswith(EXTENSIONS):
        return None  # `Model.field/other_field`: attributes, not a path
    return None if word in NOT_REPOSITORY_FILES else word


def exists(path: str) -> bool:
    """Whether `path` names a file or directory of the repository (see the module's docstring)."""
    wanted = path.removeprefix("./")
    if (ROOT / wanted).exists():
        return True
    if (ROOT / wanted.split("/", 1)[0]).exists():
        return False  # rooted at a top-level entry (or a bare top-level name): it must exist exactly there
    return any(("/" + known).endswith("/" + wanted) for known in repository_paths())


def named_paths(document: Path) -> list[tuple[int, str]]:
    """(line, path) for each code span of a Markdown document that names a repository path."""
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str]] = []
    for token in MarkdownIt("commonmark").enable("table").parse("\n".join(lines)):
        if not token.map:
            continue
        start, end = token.map
        searched_from = start
        for child in token.children or ():
            if child.type != "code_inline":
                continue
            path = candidate(child.content)
            if path is None:
                continue
            line = next((i for i in range(searched_from, end) if path in lines[i]), start)
            searched_from = line
            found.append((line + 1, path))
    return found


def missing_paths(documents: tuple[str, ...] = DOCUMENTS) -> list[str]:
    return [f"{name}:{line}: `{path}` does not exist" for name in documents
            for line, path in named_paths(ROOT / name) if not exists(path)]


def test_every_path_architecture_and_notes_name_exists() -> None:
    missing = missing_paths()
    assert not missing, "paths named in the documents that do not exist (fix the document):\n" + "\n".join(missing)


def test_the_check_finds_paths_and_tells_a_missing_one_from_an_existing_one(tmp_path: Path) -> None:
    document = tmp_path / "DOC.md"
    document.write_text("Intro.\n\nThe policy is `access/policy.py` and the kit `calibration/nowhere.py:12`;\n"
                        "run `manage.py irr`, see `models/pairwise.py`, `<app>/views.py`, `/healthz` and `ratings.csv`.\n"
                        "Also `evaluations.methodology` and `no_such_file.py`.\n", encoding="utf-8")
    named = named_paths(document)
    assert named == [(3, "access/policy.py"), (3, "calibration/nowhere.py"), (4, "manage.py"),
                     (4, "models/pairwise.py"), (5, "no_such_file.py")]
    assert [path for _, path in named if not exists(path)] == ["calibration/nowhere.py", "no_such_file.py"]
