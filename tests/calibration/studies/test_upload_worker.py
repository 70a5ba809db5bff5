"""Study uploads on the task worker (issue 33, part 4): the page stores the file and answers at once; the check (dry
run) and the import run on the worker with progress and a cancel; a row limit per import; NUL characters, unknown
fields and over-long values refused with line and field; every API error JSON, oversize bodies included; pending
files removed when an import fails and after their retention time (a failed check keeps its file for a corrected mapping)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from calibration.models import Study, StudyScore
from calibration.studies import importing, uploads
from calibration.studies.importing import StudyImportFailed, study_import
from calibration.studies.tasks import study_upload_task
from calibration.studies.uploads import SESSION_KEY, upload_dir
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
CONFIRM = "calibration:study_upload_confirm"
MAPPING = {"item": "item", "rater": "rater", "score": "score", "default_dimension": "quality",
           "default_kind": "human", "level": "ordinal"}
RATINGS = "item,rater,score\n" + "".join(f"i{i},r{r},{(i + r) % 4}\n" for i in range(10) for r in range(3))


@pytest.fixture
def admin(settings, tmp_path: Path) -> Client:
    settings.STUDY_UPLOAD_DIR = str(tmp_path / "uploads")  # the database backend: nothing runs until the worker does
    client = Client()
    client.force_login(person("admin", name="Upload Admin"))
    return client


def uploaded(client: Client, content: bytes | str, study: str = "W") -> None:
    body = content.encode() if isinstance(content, str) else content
    from django.core.files.uploadedfile import SimpleUploadedFile
    response = client.post(reverse("calibration:study_upload"), {
        "study": study, "fmt": "long", "file": SimpleUploadedFile("w.csv", body, content_type="text/csv")})
    assert response.status_code == 302, response.content
    assert client.post(reverse("calibration:study_upload_mapping"), MAPPING).status_code == 302


def run_worker_queue() -> list[str]:
    """What `manage.py run_worker` does with the queued upload jobs: each task called with its stored arguments."""
    done = []
    for result in DBTaskResult.objects.filter(status="READY").order_by("enqueued_at"):
        done.append(study_upload_task.call(*result.args_kwargs["args"], **result.args_kwargs["kwargs"]))
        result.delete()
    return done


def test_upload_worker_page_answers_at_once_then_the_worker_checks_and_imports(admin: Client) -> None:
    uploaded(admin, RATINGS)
    page = admin.get(reverse(CONFIRM))
    body = page.content.decode()
    assert page.status_code == 200 and 'data-testid="upload-progress"' in body and "waiting for the worker" in body
    assert '<meta http-equiv="refresh"' in body and not Study.objects.exists()
    assert run_worker_queue() == ["checked"]
    checked = admin.get(reverse(CONFIRM)).content.decode()
    assert "10 items, 3 raters, 30 scores — 30 new" in " ".join(checked.split()) and not Study.objects.exists()
    assert admin.post(reverse(CONFIRM), {"action": "import"})["Location"] == reverse(CONFIRM)
    assert "Importing on the task worker" in " ".join(admin.get(reverse(CONFIRM)).content.decode().split())
    assert run_worker_queue() == ["imported"]
    done = admin.get(reverse(CONFIRM))
    study = Study.objects.get(name="W")
    assert done["Location"] == reverse("calibration:study_report", args=[study.pk])
    assert StudyScore.objects.filter(item__study=study).count() == 30
    assert list(upload_dir().iterdir()) == [] and SESSION_KEY not in admin.session  # file and state removed


def test_upload_worker_cancel_stops_the_job_writes_nothing_and_removes_the_file(admin: Client) -> None:
    uploaded(admin, RATINGS)
    admin.get(reverse(CONFIRM))  # the check is queued
    assert admin.post(reverse(CONFIRM), {"action": "cancel"}).status_code == 302
    assert run_worker_queue() == ["cancelled"]
    page = admin.get(reverse(CONFIRM)).content.decode()
    assert 'data-testid="upload-cancelled"' in page and not Study.objects.exists()
    assert [p.name for p in upload_dir().iterdir() if p.suffix == ".csv"] == []


def test_upload_worker_reports_progress_while_it_reads_and_writes(admin: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(importing, "PROGRESS_EVERY", 7)
    monkeypatch.setattr(uploads, "PROGRESS_SECONDS", 0)
    seen: list[tuple[str, int]] = []
    real = uploads._state_write

    def spy(token: str, state: dict) -> None:  # type: ignore[type-arg]
        seen.append((state.get("phase", ""), state.get("rows", 0)))
        real(token, state)

    monkeypatch.setattr(uploads, "_state_write", spy)
    uploaded(admin, RATINGS)
    admin.get(reverse(CONFIRM))
    run_worker_queue()
    phases = {phase for phase, _ in seen}
    assert {"reading", "writing"} <= phases
    assert [rows for phase, rows in seen if phase == "reading" and rows] == [7, 14, 21, 28]


@pytest.mark.parametrize(("content", "message"), [
    ("item,rater,score\ni1,r1,1\ni2,r\x002,2\n", "w.csv:3:rater: contains a NUL character"),
    ("item,rater,score\ni1,r1,1\n" + "x" * 201 + ",r1,2\n", "w.csv:3: item: is 201 characters long; at most 200"),
    ("item,rater,score\ni1,r1,1\ni2," + "r" * 201 + ",2\n", "w.csv:3: rater: is 201 characters long; at most 200"),
])
def test_upload_worker_refuses_nul_and_over_long_values_with_line_and_field(admin: Client, content: str,
                                                                             message: str) -> None:
    uploaded(admin, content)
    admin.get(reverse(CONFIRM))
    assert run_worker_queue() == ["failed"]
    page = admin.get(reverse(CONFIRM))
    assert page.status_code == 422 and message in page.content.decode().replace("&#x27;", "'")
    assert not Study.objects.exists()
    assert len(list(upload_dir().glob("*.csv"))) == 1  # a failed check keeps the file: the mapping can be corrected


def test_upload_worker_row_limit_is_a_setting(tmp_path: Path, settings) -> None:
    settings.STUDY_MAX_ROWS = 25
    path = tmp_path / "r.csv"
    path.write_text(RATINGS, encoding="utf-8")
    with pytest.raises(StudyImportFailed) as refused:
        study_import(path=path, study="limit")
    assert refused.value.errors == ["r.csv:27: more than 25 ratings: the limit of one import (setting STUDY_MAX_ROWS); "
                                    "split the file"] or "more than 25 ratings" in refused.value.errors[0]
    settings.STUDY_MAX_ROWS = 30
    assert study_import(path=path, study="limit").scores == 30


def test_upload_worker_sweeps_pending_files_after_their_retention_time(admin: Client, settings) -> None:
    settings.STUDY_UPLOAD_RETENTION_SECONDS = 3600
    old = upload_dir() / ("a" * 32 + ".csv")
    old.write_text(RATINGS)
    state = upload_dir() / ("a" * 32 + ".state.json")
    state.write_text("{}")
    for path in (old, state):
        os.utime(path, (time.time() - 3700, time.time() - 3700))
    uploaded(admin, RATINGS)  # any new upload (and any job) sweeps
    assert not old.exists() and not state.exists()
    assert len(list(upload_dir().glob("*.csv"))) == 1


# --- the API ---------------------------------------------------------------------------------------------------


def post(client: Client, url: str, body: object) -> object:
    return client.post(url, data=json.dumps(body) if not isinstance(body, bytes) else body,
                       content_type="application/json")


@pytest.fixture
def api_study(admin: Client) -> int:
    created = post(admin, "/api/v1/studies/", {"name": "api-study"})
    assert created.status_code == 201  # type: ignore[attr-defined]
    return int(created.json()["id"])  # type: ignore[attr-defined]


def test_upload_worker_api_oversize_body_is_a_json_413(admin: Client, api_study: int, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = [{"item": f"i{i}", "rater": "r", "score": 1} for i in range(100)]
    response = post(admin, f"/api/v1/studies/{api_study}/ratings/", body)
    assert response.status_code == 413 and response["Content-Type"] == "application/json"  # type: ignore[index, attr-defined]
    assert "at most 1,000 bytes" in response.json()["detail"]  # type: ignore[attr-defined]
    assert not StudyScore.objects.exists()


def test_upload_worker_api_refuses_unknown_keys_and_nul_with_json(admin: Client, api_study: int) -> None:
    rating = {"item": "i1", "rater": "r", "score": 1, **{f"extra{k}": k for k in range(10_000)}}
    unknown = post(admin, f"/api/v1/studies/{api_study}/ratings/", [rating])
    assert unknown.status_code == 400, unknown.content  # type: ignore[attr-defined]
    error = unknown.json()["errors"][0]  # type: ignore[attr-defined]
    assert error.startswith("request: row 1: 'extra0', 'extra1'") and "and 9995 more: unknown field(s)" in error
    nul = post(admin, f"/api/v1/studies/{api_study}/ratings/", [{"item": "i\x001", "rater": "r", "score": 1}])
    assert nul.status_code == 400 and "[0].item: contains a NUL character" in nul.json()["detail"]  # type: ignore[attr-defined]
    named = post(admin, "/api/v1/studies/", {"name": "bad\x00name"})
    assert named.status_code == 400 and named["Content-Type"] == "application/json"  # type: ignore[index, attr-defined]
    long = post(admin, f"/api/v1/studies/{api_study}/ratings/", [{"item": "i" * 300, "rater": "r", "score": 1}])
    assert long.status_code == 400 and "item: is 300 characters long; at most 200" in long.json()["errors"][0]  # type: ignore[attr-defined]
    assert not StudyScore.objects.exists()


def test_upload_worker_a_large_upload_is_moved_not_copied(admin: Client, settings) -> None:
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 100  # this file is spooled to a temporary file, which is moved
    uploaded(admin, RATINGS)
    [stored] = upload_dir().glob("*.csv")
    assert stored.read_text() == RATINGS and oct(stored.stat().st_mode & 0o777) == "0o600"
    admin.get(reverse(CONFIRM))
    assert run_worker_queue() == ["checked"]


# --- the bulk write (issue 33 part 4's goals: a million rows, columns instead of row objects, COPY on PostgreSQL) ---


def test_upload_worker_reimport_upserts_new_changed_and_unchanged_scores_exactly(tmp_path: Path) -> None:
    first = tmp_path / "first.csv"
    first.write_text(RATINGS, encoding="utf-8")
    assert study_import(path=first, study="U").created == 30
    lines = RATINGS.splitlines()
    changed = [lines[0], *lines[1:11]]  # ten scores as they were …
    changed += [line.rsplit(",", 1)[0] + f",{(int(line.rsplit(',', 1)[1]) + 1) % 4}" for line in lines[11:16]]  # … five changed
    changed += ["new-item,r0,2", "i0,new-rater,1"]  # two new scores (a new item, a new rater)
    second = tmp_path / "second.csv"
    second.write_text("\n".join(changed) + "\n", encoding="utf-8")
    summary = study_import(path=second, study="U")
    assert (summary.created, summary.updated, summary.unchanged, summary.scores) == (2, 5, 10, 17)
    stored = {(s.item.external_id, s.rater.name): s.value for s in StudyScore.objects.select_related("item", "rater")}
    assert len(stored) == 32
    for line in changed[1:]:
        item, rater, value = line.split(",")
        assert stored[(item, rater)] == float(value), line
    assert stored[("i9", "r2")] == float((9 + 2) % 4)  # a score the second file does not name is left alone


def test_upload_worker_import_failing_in_a_later_batch_writes_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(importing, "WRITE_BATCH", 7)
    real, calls = importing.bulk_insert, []

    def failing(model, fields, rows):  # type: ignore[no-untyped-def]
        calls.append(model)
        if len([m for m in calls if m is StudyScore]) == 3:
            raise RuntimeError("the database went away")
        real(model, fields, rows)

    monkeypatch.setattr(importing, "bulk_insert", failing)
    path = tmp_path / "r.csv"
    path.write_text(RATINGS, encoding="utf-8")
    with pytest.raises(RuntimeError):
        study_import(path=path, study="half")
    assert not Study.objects.exists() and not StudyScore.objects.exists()


def test_upload_worker_cancel_while_writing_leaves_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(importing, "WRITE_BATCH", 7)
    path = tmp_path / "r.csv"
    path.write_text(RATINGS, encoding="utf-8")

    def cancel_at_the_second_batch(phase: str, rows: int) -> None:
        if phase == "writing" and rows >= 14:
            raise uploads.UploadCancelled

    with pytest.raises(uploads.UploadCancelled):
        study_import(path=path, study="cancelled", on_progress=cancel_at_the_second_batch)
    assert not Study.objects.exists() and not StudyScore.objects.exists()


def test_upload_worker_conflicts_are_found_in_row_order_across_many_rows(tmp_path: Path) -> None:
    body = "item,rater,rater_kind,score\n" + "".join(f"i{i},r{i % 7},human,{i % 4}\n" for i in range(5000))
    body += "i17,r3,human,1\n"  # line 5002: a second score of (i17, r3); the first is line 19
    body += "i5001,r2,judge,1\n"  # line 5003: r2 was a human at line 4
    path = tmp_path / "c.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(StudyImportFailed) as refused:
        study_import(path=path, study="C", label="c.csv")
    assert refused.value.errors == [
        "c.csv:5002: score: a second score of rater 'r3' for item 'i17' on 'score' (the first: c.csv:19)",
        "c.csv:5003: rater_kind: 'r2' is human at c.csv:4"]
    assert not Study.objects.exists()


def test_upload_worker_keys_of_code_triples_stay_exact_past_int64() -> None:
    import numpy as np

    a, b, c = (np.array(v, dtype=np.int64) for v in ([0, 1, 2**31 - 1, 0, 1], [5, 5, 2**31 - 1, 5, 5], [7, 0, 3, 7, 0]))
    for sizes in ((2**31, 2**31, 2**31), (2**31, 2**31, 8)):  # the first overflows one int64: numbered instead
        (keys,) = importing._keys([(a, b, c)], sizes)
        assert [keys[i] == keys[j] for i, j in ((0, 3), (1, 4), (0, 1), (2, 3))] == [True, True, False, False]
