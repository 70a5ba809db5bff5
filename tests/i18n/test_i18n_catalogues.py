"""The shipped catalogues (issue 35 goal: 0 untranslated strings): every message the code marks is in es, de and ko,
translated, not fuzzy, with the same placeholders; the committed .mo is the compiled .po."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from config.catalogues import mo_bytes, read_po

SHIPPED = ("es", "de", "ko")
LOCALE = Path(settings.BASE_DIR) / "locale"
PLACEHOLDER = re.compile(r"%\([^)]+\)[sd]|%[sd]|\{[^{}]*\}|<[^>]+>")
IGNORE = ["tests", "benchmarks", "staticfiles", "static", "examples", "fixtures", "docs", "build"]  # as `make messages`


def _problems(po: Path) -> list[str]:
    header, entries = read_po(po)
    problems = []
    for entry in entries:
        name = f"{po.parent.parent.name}: {entry.msgid[:60]!r}"
        if entry.fuzzy:
            problems.append(f"{name} is fuzzy")
        if not entry.translated:
            problems.append(f"{name} is not translated")
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        for text in entry.msgstr:
            if text and sorted(PLACEHOLDER.findall(text)) != wanted:
                problems.append(f"{name}: placeholders {sorted(PLACEHOLDER.findall(text))} differ from {wanted}")
    return problems


def test_i18n_shipped_catalogues_are_complete_and_compiled():  # type: ignore[no-untyped-def]
    problems = []
    for code in SHIPPED:
        po = LOCALE / code / "LC_MESSAGES" / "django.po"
        problems += _problems(po)
        header, entries = read_po(po)
        if po.with_suffix(".mo").read_bytes() != mo_bytes(header, entries):
            problems.append(f"{code}: django.mo is not the compiled django.po (manage.py compile_catalogues)")
    assert problems == []


def test_i18n_catalogue_check_catches_a_fuzzy_and_a_missing_entry(tmp_path):  # type: ignore[no-untyped-def]
    po = tmp_path / "de" / "LC_MESSAGES" / "django.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid ""\nmsgstr "Language: de\\n"\n\n#, fuzzy\nmsgid "Sign in"\nmsgstr "Anmelden"\n\n'
                  'msgid "Sign out"\nmsgstr ""\n\nmsgid "%(n)s left"\nmsgstr "noch %(k)s"\n', encoding="utf-8")
    assert _problems(po) == ["de: 'Sign in' is fuzzy", "de: 'Sign out' is not translated",
                             "de: '%(n)s left': placeholders ['%(k)s'] differ from ['%(n)s']"]


def test_i18n_every_marked_string_is_in_the_shipped_catalogues(tmp_path, settings, monkeypatch):  # type: ignore[no-untyped-def]
    """Extract the messages afresh (xgettext, as `make messages`) into a copy of the catalogues: nothing new.

    makemessages writes to the catalogue of the directory a source file is under, so it runs in a scratch directory
    of symbolic links to the sources (followed: --symlinks) beside the copied catalogues; the real ones are not
    touched."""
    if shutil.which("xgettext") is None:
        pytest.fail("GNU gettext is missing: `make test-tools` installs it (apt-get install -y gettext)")
    root = Path(settings.BASE_DIR)
    for entry in root.iterdir():
        if entry.name in (*IGNORE, "locale") or entry.name.startswith(".") or not entry.is_dir():
            continue
        (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(LOCALE, tmp_path / "locale")
    monkeypatch.chdir(tmp_path)
    settings.LOCALE_PATHS = [str(tmp_path / "locale")]
    call_command("makemessages", locale=list(SHIPPED), no_obsolete=True, ignore_patterns=IGNORE, symlinks=True,
                 verbosity=0)
    problems = []
    for code in SHIPPED:
        problems += _problems(tmp_path / "locale" / code / "LC_MESSAGES" / "django.po")
    assert problems == [], "run `make messages` and translate the new entries"


def test_i18n_catalogues_follow_the_glossary():  # type: ignore[no-untyped-def]
    """Every glossary term is a message (evaluations.domain.TERMS) and each language renders it as the glossary says."""
    import csv

    from evaluations.domain import TERMS

    with (Path(settings.BASE_DIR) / "docs" / "glossary.csv").open(encoding="utf-8") as handle:
        glossary = list(csv.DictReader(handle))
    assert {row["english"] for row in glossary} == set(TERMS)
    problems = []
    for code in SHIPPED:
        _, entries = read_po(LOCALE / code / "LC_MESSAGES" / "django.po")
        rendered = {e.msgid: e.msgstr[0] for e in entries if e.msgid_plural is None}
        for row in glossary:
            if rendered.get(row["english"]) != row[code]:
                problems.append(f"{code}: {row['english']!r} is {rendered.get(row['english'])!r}, glossary {row[code]!r}")
    assert problems == []
