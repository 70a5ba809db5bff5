"""The PDF kit with an English sentence quoting Hebrew and Greek (issue 35 §4), read back with pdftotext: the words
come out in logical order — the Hebrew letters in the order they are written, the Greek exactly, the English around
them in place. Known limit, asserted so a change shows: pdftotext puts each Hebrew vowel point (niqqud) before its
letter instead of after it (reportlab draws right-to-left runs pre-reversed, without the bidi algorithm or
/ActualText), so the letters are compared without their points."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import unicodedata

import pytest
from reportlab.platypus import SimpleDocTemplate

from evidence.kit.pdfkit import Styles, report_fonts

HEBREW = "בְּרֵאשִׁית בָּרָא אֱלֹהִים"
GREEK = "Ἐν ἀρχῇ ἦν ὁ λόγος"
SENTENCE = f"Genesis 1:1 opens with {HEBREW}, and John 1:1 answers it with {GREEK}, 3 words later."
BIDI_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _letters(text: str) -> str:
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def test_bidi_pdf_reads_back_in_logical_order():  # type: ignore[no-untyped-def]
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is missing: apt-get install -y poppler-utils (the PDF tests must not be skipped)")
    fonts = report_fonts()
    if not fonts.unicode:
        pytest.fail("DejaVu Sans is missing: apt-get install -y fonts-dejavu-core (the PDF needs Hebrew and Greek)")
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer).build([Styles(fonts).paragraph(SENTENCE)])
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", "-", "-"], input=buffer.getvalue(), capture_output=True,
                          check=True).stdout.decode("utf-8")
    text = " ".join(BIDI_MARKS.sub("", text).split())
    assert GREEK in text
    assert _letters(text) == _letters(SENTENCE)  # every letter, in logical order, English around it in place
