"""The PDF report at realistic sizes, read back with pdftotext (Debian's poppler-utils).

Checked: it renders for the demo cycle and for 6 dimensions × 8 traditions × 60 raters (where the old
renderer raised LayoutError); every α the report page shows is in the text, formatted as the page
formats it (Django's floatformat), most of them on the very line of their group; every page carries the
cycle, the snapshot version and the input hash; long tables repeat their header; Greek and Hebrew
survive; the same report gives the same bytes.
"""
from __future__ import annotations

import hashlib
import html
import re
import shutil
import subprocess

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from calibration.reports.pdf import report_pdf as typed_report_pdf
from calibration.reports.schema import Report
from evaluations.labels import group_label
from evidence.kit import pdfkit as pdf_module
from evidence.kit.numbers import method_label
from tests.calibration.synthetic import synthetic_cycle


def report_pdf(report: dict, **kwargs) -> bytes:
    """The PDF of a report's JSON (read back into the typed tree, as a stored snapshot is)."""
    return typed_report_pdf(Report.from_json(report), **kwargs)


def overall(report: dict) -> dict:
    return next(g for g in report["groups"] if g["kind"] == "overall")


CYCLE_NAME = "Κύκλος 3 — λόγος / דבר אלהים"  # Hebrew last: pdftotext reorders neutrals around it
INPUT_HASH = hashlib.sha256(b"the exact input rows").hexdigest()
NUMBER = re.compile(r"-?\d+\.\d+")


def pdf_pages(pdf: bytes) -> list[str]:
    """The text of each page, laid out (`pdftotext -layout`), spaces collapsed and RTL marks dropped."""
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is missing: apt-get install -y poppler-utils (the PDF tests must not be skipped)")
    text = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", "-", "-"], input=pdf, capture_output=True,
                          check=True).stdout.decode("utf-8")
    text = re.sub("[\u202a-\u202e]", "", text)  # poppler wraps right-to-left runs in embedding marks
    pages = text.split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    return ["\n".join(re.sub(r"\s+", " ", line).strip() for line in page.splitlines()) for page in pages]


def shown(value: float | None, digits: int = 3) -> str:
    """A number as the report page's template shows it."""
    return "—" if value is None else str(floatformat(value, digits))


def ci(interval, digits: int) -> str:
    return f"[{shown(interval[0], digits)}, {shown(interval[1], digits)}]" if interval else ""


def label(group) -> str:
    """A group as the page and (issue 32) the PDF name it: labels, never keys ("Sub-dimension: Allusion Detection")."""
    return group_label(group["kind"], group["value"])


def page_alpha_values(report) -> list[str]:
    """Every α (and α interval) the report page shows: summary cards, groups table, forest plots, raters."""
    top = overall(report)
    e, m, g = top["experts"], top["judge_vs_majority"], top["judge_vs_gold"]
    values = [shown(e["krippendorff_alpha"]), ci(e["alpha_ci"], 3), shown(m["alpha"]), ci(m["alpha_ci"], 3),
              shown(g["alpha"]), ci(g["alpha_ci"], 3), shown(top["panel_alpha_without_judge"]),
              shown(top["panel_alpha_with_judge"])]
    for group in report["groups"]:
        values += [shown(group["experts"]["krippendorff_alpha"]), ci(group["experts"]["alpha_ci"], 2),
                   shown(group["judge_vs_majority"]["alpha"]), ci(group["judge_vs_majority"]["alpha_ci"], 2),
                   shown(group["judge_vs_gold"]["alpha"])]
    for rater in e["leave_one_rater_out"]:
        values += [shown(rater["alpha_without"]), shown(rater["change"])]
    return [v for v in values if v and v != "—"]


@pytest.fixture(scope="module")
def large():
    cycle = synthetic_cycle(cycle_name=CYCLE_NAME)  # 6 dimensions × 8 traditions × 60 raters
    report = cycle.report(n_resamples=200).to_json()
    pdf = report_pdf(report, version=12, input_hash=INPUT_HASH)
    return report, pdf, pdf_pages(pdf)


def test_large_cycle_renders_on_many_pages_with_every_alpha_of_the_page(large):
    report, pdf, pages = large
    assert pdf.startswith(b"%PDF") and len(pages) >= 8
    assert report["n_experts"] == 60 and len(report["groups"]) == 1 + 24 + 6 + 8 + 4
    text = "\n".join(pages)
    tokens = set(NUMBER.findall(text))
    for value in page_alpha_values(report):
        assert (value in text) if value.startswith("[") else (value in tokens), value


def test_every_group_is_a_row_of_the_table_and_of_both_forest_plots(large):
    report, _, pages = large
    lines = {line for page in pages for line in page.splitlines()}
    for group in report["groups"]:
        e, m, g = group["experts"], group["judge_vs_majority"], group["judge_vs_gold"]
        row = [label(group), str(e["n_pairable_units"]), shown(e["krippendorff_alpha"]), ci(e["alpha_ci"], 2),
               e["verdicts"]["alpha"], shown(e["percent_agreement"]), shown(m["alpha"]), ci(m["alpha_ci"], 2),
               m["verdicts"]["alpha"], shown(m["quadratic_kappa"]), shown(g["alpha"]), str(g["n_units"])]
        # a long label is shortened to fit the table's first column ("Sub-dimension: Cross-Reference Accur…")
        figures = " ".join(part for part in row[1:] if part)
        assert any(line.endswith(" " + figures) and (line == f"{row[0]} {figures}" or (
            "…" in line and row[0].startswith(line.split("…")[0]))) for line in lines), label(group)
        for block, alpha, n in ((e, e["krippendorff_alpha"], e["n_pairable_units"]), (m, m["alpha"], m["n_units"])):
            plotted = f"{label(group)} {shown(alpha)} {ci(block['alpha_ci'], 2)} " \
                      f"n = {n} pairable units {block['verdicts']['alpha']}"
            assert plotted in lines, plotted


def test_the_forest_plot_is_split_into_page_sized_chunks(large):
    _, _, pages = large
    captions = [line for page in pages for line in page.splitlines() if "(ordinal) (" in line]
    assert any("Experts among themselves: α (ordinal) (2 of" in c for c in captions)
    assert any("Judge against the expert majority: α (ordinal) (2 of" in c for c in captions)
    assert all(sum("α (ordinal) (" in line for line in page.splitlines()) <= 2 for page in pages)


def test_every_page_carries_cycle_version_and_input_hash(large):
    _, _, pages = large
    for number, page in enumerate(pages, start=1):
        assert f"cycle: {CYCLE_NAME}" in page, number
        assert f"snapshot version 12 · input hash {INPUT_HASH}" in page, number
        assert f"page {number}" in page


def test_without_a_snapshot_the_header_shows_dashes_and_hebrew_labels_read_back():
    report = synthetic_cycle(n_raters=8, n_dimensions=1, n_traditions=2, items_per_cell=3, seed=2,
                             cycle_name="tiny").report(n_resamples=20).to_json()
    tradition = next(g for g in report["groups"] if g["kind"] == "tradition")
    tradition["value"] = "מסורת"  # a tradition named in Hebrew, in the table and the forest plots
    pages = pdf_pages(report_pdf(report))
    assert pages and all("cycle: tiny" in p and "snapshot version — · input hash —" in p for p in pages)
    lines = [line for page in pages for line in page.splitlines()]
    assert sum(line.startswith("Tradition: מסורת ") for line in lines) == 3  # table, both forest plots


def test_long_tables_continue_across_pages_and_columns_with_their_header(large):
    report, _, pages = large
    pairs = overall(report)["experts"]["pairwise_kappa"]
    assert len(pairs) > 150
    with_header = [p for p in pages if "Pair common units κ exact" in p]
    assert len(with_header) >= 2 and all(p.count("Pair common units κ exact") == 3 for p in with_header[:-1])
    lines = [line for page in pages for line in page.splitlines()]  # three columns of pairs side by side
    for pair in pairs:
        row = f"{pair['raters'][0]} · {pair['raters'][1]} {pair['n_units']} {shown(pair['quadratic_kappa'])} " \
              f"{shown(pair['exact_agreement'])}"
        assert any(row in line for line in lines), row
    for rater in overall(report)["experts"]["leave_one_rater_out"]:
        row = f"{rater['rater']} {shown(rater['alpha_without'])} {shown(rater['change'])}"
        assert any(row in line for line in lines), row


def test_greek_and_hebrew_are_set_in_dejavu_and_read_back(large):
    _, pdf, pages = large
    if pdf_module.report_fonts().unicode:
        assert b"DejaVuSans" in pdf
        assert "IRR report: " + CYCLE_NAME in pages[0]  # Hebrew comes back in its logical order
    # דָּבָר is dalet+dagesh+qamats, bet+qamats, resh: drawn resh, bet+qamats, dalet+dagesh+qamats.
    davar = "\u05d3\u05bc\u05b8\u05d1\u05b8\u05e8"
    assert pdf_module.visual_order(f"cycle {davar} 3") == "cycle \u05e8\u05d1\u05b8\u05d3\u05bc\u05b8 3"


def test_same_report_same_bytes(large):
    report, pdf, _ = large
    assert report_pdf(report, version=12, input_hash=INPUT_HASH) == pdf


def test_without_dejavu_the_builtin_font_spells_the_signs_out(monkeypatch, large):
    report, _, _ = large
    monkeypatch.setattr(pdf_module, "_dejavu_files", lambda: None)
    pages = pdf_pages(report_pdf(report, version=3, input_hash="abc"))
    text = "\n".join(pages)
    assert "alpha = " + shown(overall(report)["experts"]["krippendorff_alpha"]) in text
    tokens = set(NUMBER.findall(text))
    assert all(v in text if v.startswith("[") else v in tokens for v in page_alpha_values(report))


def _page_text(body: str) -> str:
    """The visible text of an HTML page: no style or script content, no tags, entities decoded."""
    body = re.sub(r"(?is)<(style|script)\b.*?</\1>", " ", body)
    return html.unescape(re.sub(r"(?s)<[^>]+>", " ", body))


@pytest.mark.django_db
def test_demo_cycle_pdf_carries_every_number_of_the_report_page(client):
    from django.db import transaction

    from accounts.models import User
    from annotations.models import CalibrationCycle
    from calibration.demo import (
        DEMO_CYCLE_NAME,
        demo_people_create,
        demo_report_snapshot_create,
        demo_scores_create,
    )
    from evaluations.demo import demo_benchmark_load
    from evaluations.judge.demo import judge_demo_run

    with transaction.atomic():
        demo_benchmark_load()
    judge_demo_run()
    demo_people_create()
    assert demo_scores_create() > 0
    cycle = CalibrationCycle.objects.get(name=DEMO_CYCLE_NAME)
    snapshot = demo_report_snapshot_create()  # version 1, computed as the worker computes it
    assert snapshot is not None and snapshot.status == "ready", snapshot and snapshot.error
    client.force_login(User.objects.get(email="admin@faithbench.test"))
    page = client.get(reverse("calibration:report", args=[cycle.pk]))
    pdf = client.get(reverse("calibration:report_export", args=[cycle.pk, "pdf"]))
    assert page.status_code == pdf.status_code == 200
    report = page.context["report"].to_json()
    assert report["n_experts"] >= 10 and overall(report)["judge_vs_gold"]["n_units"] > 0

    pages = pdf_pages(pdf.content)
    text = "\n".join(pages)
    page_numbers = set(NUMBER.findall(_page_text(page.content.decode())))
    assert len(page_numbers) > 100
    assert page_numbers <= set(NUMBER.findall(text)), sorted(page_numbers - set(NUMBER.findall(text)))
    tokens = set(NUMBER.findall(text))
    assert all(v in text if v.startswith("[") else v in tokens for v in page_alpha_values(report))
    assert all(f"cycle: {DEMO_CYCLE_NAME}" in p and f"snapshot version 1 · input hash {snapshot.input_hash[:16]}" in p
               for p in pages), pages[0][:400]
    assert "@faithbench.test" not in text  # the rater key stays on the page


def test_every_interval_and_every_rater_diagnostic_is_in_the_pdf(large):
    """Statistics v2 at a realistic size (60 raters): each overall coefficient's interval and each rater's bias."""
    from calibration.reports.render import interval_rows

    report, _, pages = large
    lines = [line for page in pages for line in page.splitlines()]
    top = overall(report)
    checked = 0
    for comparison in ("experts", "judge_vs_majority", "judge_vs_gold"):
        for row in interval_rows(getattr(Report.from_json(report).overall, comparison), comparison):
            interval = row.interval
            if interval and interval.low is not None:
                cells = f"{row.label} {shown(row.value)} {ci([interval.low, interval.high], 3)} {method_label(interval.method)}"
                assert any(cells in line for line in lines), cells
                checked += 1
    assert checked >= 10
    diagnostics = top["experts"]["rater_diagnostics"]
    assert len(diagnostics) == 60
    for d in diagnostics:
        interval = ci([d["low"], d["high"]], 2) if d["low"] is not None else "—"
        row = f"{d['rater']} {d['n_units']} {shown(d['mean_difference'], 2)} {interval}"
        assert any(row in line for line in lines), row
    assert any(line.startswith("Judge − expert median (Bland–Altman") for line in lines)
