"""Uploading a rating study in the browser's forms (upload → preview and mapping → confirm), and the services
under it: the preview, the column mapping, line-numbered errors, all or nothing, the file kept server-side."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from calibration.models import Study, StudyDimension, StudyRater, StudyScore
from calibration.studies.importing import StudyImportFailed, study_file_preview, study_import
from calibration.studies.uploads import SESSION_KEY, upload_dir
from tests.annotations.factories import person
from tests.calibration.studies.test_study_judging import judge_bench_file

pytestmark = pytest.mark.django_db

RATER_ITEM_SCORE = "rater,item,score\n" + "".join(f"{r},i{i},{(i + (r == 'c')) % 4}\n" for i in range(8) for r in "abc")


@pytest.fixture
def admin(settings, tmp_path: Path) -> Client:
    settings.STUDY_UPLOAD_DIR = str(tmp_path / "uploads")
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}  # the worker's jobs
    client = Client()
    client.force_login(person("admin", name="Upload Admin"))
    return client


def upload(client: Client, content: str | bytes, name: str = "r.csv", fmt: str = "long", study: str = "Up"):  # type: ignore[no-untyped-def]
    body = content.encode() if isinstance(content, str) else content
    return client.post(reverse("calibration:study_upload"),
                       {"study": study, "fmt": fmt, "file": SimpleUploadedFile(name, body, content_type="text/csv")})


def text(response) -> str:  # type: ignore[no-untyped-def]
    return unescape(re.sub(r"\s+", " ", response.content.decode()))


def confirm_and_import(client: Client) -> None:
    """Step 3: the check (shown), the import (asked for), the page once the worker is done (to the study)."""
    assert client.get(reverse("calibration:study_upload_confirm")).status_code == 200
    client.post(reverse("calibration:study_upload_confirm"), {"action": "import"})
    assert client.get(reverse("calibration:study_upload_confirm")).status_code == 302


# --- services ------------------------------------------------------------------------------------------------


def test_a_bad_row_writes_nothing_and_every_problem_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    lines = RATER_ITEM_SCORE.splitlines()
    lines[3] = "a,i1,high"  # file line 4
    lines[9] = "b,i3,"      # file line 10
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(StudyImportFailed) as info:
        study_import(path=path, study="s", label="r.csv")
    assert info.value.errors == ["r.csv:4: score: must be a number, not 'high'", "r.csv:10: score: is required"]
    with pytest.raises(StudyImportFailed):
        study_import(path=path, study="s", label="r.csv", dry_run=True)
    assert not Study.objects.exists() and not StudyScore.objects.exists()


def test_a_dry_run_counts_exactly_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(RATER_ITEM_SCORE)
    dry = study_import(path=path, study="s", dry_run=True)
    assert (dry.items, dry.raters, dry.scores, dry.created) == (8, 3, 24, 24)
    assert not Study.objects.exists()
    study_import(path=path, study="s")
    again = study_import(path=path, study="s", dry_run=True)
    assert (again.created, again.unchanged) == (0, 24)


def test_mapped_columns_and_defaults_read_any_header(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("annot,text_id,grade,crit\nx,t1,2,clarity\ny,t1,3,clarity\nx,t2,1,depth\n")
    summary = study_import(path=path, study="m", columns={"item": "text_id", "rater": "annot", "score": "grade",
                                                          "dimension": "crit", "rater_kind": ""},
                           rater_kind="judge", level="interval")
    assert (summary.items, summary.scores) == (2, 3)
    assert set(StudyDimension.objects.values_list("key", "level")) == {("clarity", "interval"), ("depth", "interval")}
    assert set(StudyRater.objects.values_list("kind", flat=True)) == {"judge"}


def test_the_preview_shows_the_first_rows_and_guesses_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(RATER_ITEM_SCORE)
    preview = study_file_preview(path=path, fmt="long", label="r.csv", n=5)
    assert preview.header == ["rater", "item", "score"] and len(preview.rows) == 5
    assert preview.rows[0] == ("r.csv:2", ["a", "i0", "0"]) and preview.header_error == ""
    assert preview.guess == {"rater": "rater", "item": "item", "score": "score"}
    path.write_text("who,what,grade\na,i0,1\n")
    bad = study_file_preview(path=path, fmt="long", label="r.csv")
    assert bad.header_error.startswith("r.csv:1: wrong header: expected the columns item,rater,score")
    judge = study_file_preview(path=judge_bench_file(tmp_path / "j.json", n=3), fmt="judge-bench", label="j.json")
    assert judge.rows and {d.key for d in judge.dimensions} >= {"coherence"}


# --- pages -----------------------------------------------------------------------------------------------------


def test_uploading_rater_item_score_through_the_three_steps(admin: Client) -> None:
    response = upload(admin, RATER_ITEM_SCORE)
    assert response.status_code == 302 and response["Location"] == reverse("calibration:study_upload_mapping")
    stored = admin.session[SESSION_KEY]
    assert "path" not in stored and re.fullmatch(r"[0-9a-f]{32}", stored["token"])
    assert [p.name for p in upload_dir().iterdir()] == [f"{stored['token']}.csv"]

    page = admin.get(reverse("calibration:study_upload_mapping"))
    body = text(page)
    assert page.status_code == 200 and 'data-testid="preview"' in body and "r.csv:2" in body
    assert "Ordinal — ordered categories whose distances are unknown" in body and 'data-testid="header-error"' not in body
    assert re.search(r'<option value="item" selected>item</option>', page.content.decode())

    response = admin.post(reverse("calibration:study_upload_mapping"), {
        "item": "item", "rater": "rater", "score": "score", "dimension": "", "rater_kind": "", "group": "",
        "default_dimension": "quality", "default_kind": "human", "level": "ordinal"})
    assert response.status_code == 302 and response["Location"] == reverse("calibration:study_upload_confirm")
    confirm = admin.get(reverse("calibration:study_upload_confirm"))
    assert "8 items, 3 raters, 24 scores — 24 new" in text(confirm) and not Study.objects.exists()

    started = admin.post(reverse("calibration:study_upload_confirm"), {"action": "import"})
    assert started["Location"] == reverse("calibration:study_upload_confirm")  # the worker imports; the page follows
    done = admin.get(started["Location"])
    study = Study.objects.get(name="Up")
    assert done.status_code == 302 and done["Location"] == reverse("calibration:study_report", args=[study.pk])
    assert StudyScore.objects.filter(item__study=study, dimension__key="quality").count() == 24
    assert study.source == "upload: r.csv"
    assert SESSION_KEY not in admin.session and list(upload_dir().iterdir()) == []
    report = admin.get(done["Location"])
    assert reverse("calibration:study_report_compute", args=[study.pk]) in report.content.decode()


def test_a_bad_header_shows_one_message_and_a_bad_row_writes_nothing(admin: Client) -> None:
    upload(admin, "who,what,grade\n" + "".join(f"r{i % 3},i{i},x{i}\n" for i in range(120)))
    page = text(admin.get(reverse("calibration:study_upload_mapping")))
    assert page.count("wrong header") == 1
    assert "expected the columns item,rater,score (optional: study,dimension,rater_kind,group); found: who,what,grade" in page
    twice = admin.post(reverse("calibration:study_upload_mapping"), {
        "item": "what", "rater": "what", "score": "grade", "default_dimension": "score", "default_kind": "human",
        "level": "nominal"})
    assert twice.status_code == 400 and "The column 'what' is chosen for two roles." in text(twice)
    admin.post(reverse("calibration:study_upload_mapping"), {
        "item": "what", "rater": "who", "score": "grade", "default_dimension": "score", "default_kind": "human",
        "level": "nominal"})
    confirm = admin.get(reverse("calibration:study_upload_confirm"))
    body = text(confirm)
    assert confirm.status_code == 422 and "120 problems; nothing was written" in body
    assert len(list(upload_dir().glob("*.csv"))) == 1  # a failed check keeps the file: the mapping can be corrected
    assert "r.csv:2: grade: must be a number, not 'x0'" in body and "… and" not in body
    assert not Study.objects.exists()


def test_wide_and_judge_bench_uploads(admin: Client, tmp_path: Path) -> None:
    upload(admin, "id,ann1,ann2,llm\nA,1,2,3\nB,3,3,\n", name="w.csv", fmt="wide", study="W")
    page = admin.get(reverse("calibration:study_upload_mapping")).content.decode()
    assert re.search(r'value="ann1"[^>]*checked', page)
    admin.post(reverse("calibration:study_upload_mapping"), {
        "id_column": "id", "rater_columns": ["ann1", "ann2", "llm"], "judge_columns": ["llm"],
        "default_dimension": "quality", "level": "interval"})
    confirm_and_import(admin)
    assert StudyRater.objects.get(name="llm").kind == "judge" and StudyScore.objects.count() == 5

    upload(admin, judge_bench_file(tmp_path / "j.json", n=4).read_bytes(), name="j.json", fmt="judge-bench", study="J")
    assert admin.post(reverse("calibration:study_upload_mapping"), {}).status_code == 302
    confirm_and_import(admin)
    assert Study.objects.get(name="J").items.count() == 4


def test_the_upload_form_refuses_large_and_mismatched_files(admin: Client, settings) -> None:
    settings.IMPORT_MAX_UPLOAD_BYTES = 50
    too_big = upload(admin, RATER_ITEM_SCORE)
    assert too_big.status_code == 400 and "IMPORT_MAX_UPLOAD_BYTES" in too_big.content.decode()
    settings.IMPORT_MAX_UPLOAD_BYTES = 10_000
    wrong = upload(admin, "{}", name="x.json", fmt="long")
    assert wrong.status_code == 400 and "choose that format" in text(wrong)
    assert SESSION_KEY not in admin.session
    assert admin.get(reverse("calibration:study_upload_confirm"))["Location"] == reverse("calibration:study_upload")


def test_the_upload_pages_query_count_does_not_grow_row_by_row(admin: Client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    mapping = {"item": "item", "rater": "rater", "score": "score", "default_dimension": "q", "default_kind": "human",
               "level": "ordinal"}
    counts = {}
    for n_items in (8, 800):
        content = "rater,item,score\n" + "".join(f"{r},i{i},{i % 4}\n" for i in range(n_items) for r in "abc")
        upload(admin, content, study=f"q{n_items}")
        with django_assert_max_num_queries(8):
            assert admin.get(reverse("calibration:study_upload_mapping")).status_code == 200
        admin.post(reverse("calibration:study_upload_mapping"), mapping)
        with CaptureQueriesContext(connection) as queries:  # the dry run writes in bulk batches and rolls back
            confirm = admin.get(reverse("calibration:study_upload_confirm"))
        assert f"{n_items} items, 3 raters, {3 * n_items} scores" in text(confirm)
        counts[n_items] = len(queries)
    assert counts[800] - counts[8] <= 3 * 800 / 100, counts  # batches, not a query per row (2,400 rows)
    assert not Study.objects.exists()
