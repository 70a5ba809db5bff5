"""Model answers are untrusted: Markdown is sanitised by an allow-list; Hebrew runs right-to-left; Greek marked."""
from __future__ import annotations

from annotations.rendering import markdown_to_safe_html


def test_script_handlers_and_javascript_urls_are_removed() -> None:
    html = markdown_to_safe_html(
        'Hi <script>alert(1)</script><img src=x onerror="alert(2)"> <a href="javascript:alert(3)">x</a> '
        '<iframe src="https://evil.example"></iframe><style>body{}</style>'
        '<div style="position:fixed" data-model="secret">d</div> [ok](https://example.org)'
    )
    for forbidden in ("<script", "onerror", "javascript:", "<iframe", "<style", "style=", "data-model", "<img"):
        assert forbidden not in html
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>' in html


def test_markdown_structure_is_kept() -> None:
    html = markdown_to_safe_html("# Title\n\n**bold** and *it*\n\n- one\n- two\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    for tag in ("<h1>", "<strong>bold</strong>", "<em>it</em>", "<li>one</li>", "<blockquote>", "<table>", "<td>1</td>"):
        assert tag in html


def test_hebrew_runs_are_wrapped_right_to_left() -> None:
    html = markdown_to_safe_html("Genesis 1:1 reads בְּרֵאשִׁית בָּרָא אֱלֹהִים in Hebrew.")
    assert '<span dir="rtl" lang="he">בְּרֵאשִׁית בָּרָא אֱלֹהִים</span>' in html
    assert html.count('dir="rtl"') == 1


def test_greek_is_marked_and_displayed_unchanged() -> None:
    html = markdown_to_safe_html("John 1:1: Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν.")
    assert '<span lang="grc">Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν</span>' in html


def test_scripts_inside_links_and_code_are_left_alone() -> None:
    html = markdown_to_safe_html("`λόγος` and [λόγος](https://example.org/λόγος)")
    assert "<code>λόγος</code>" in html
    assert 'href="https://example.org/λόγος"' in html or 'href="https://example.org/%CE%BB' in html
    assert '<a href="https://example.org/<span' not in html


def test_hebrew_cannot_be_used_to_smuggle_markup() -> None:
    html = markdown_to_safe_html("שָׁלוֹם <b onclick=x>שָׁלוֹם</b> &lt;script&gt;")
    assert "onclick" not in html and "<script" not in html
    assert html.count('<span dir="rtl" lang="he">') == 2


def test_attribute_values_with_angle_brackets_and_hebrew_are_not_touched() -> None:
    html = markdown_to_safe_html('<a href="https://example.org/?q=>שָׁלוֹם" title="a>שָׁלוֹם">link</a> שָׁלוֹם')
    assert html.count('<span dir="rtl" lang="he">') == 1
    assert html.endswith('<span dir="rtl" lang="he">שָׁלוֹם</span></p>')
    assert 'title="a&gt;' in html or 'title="a>שָׁלוֹם"' in html
