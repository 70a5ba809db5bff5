"""Admin: every model listed with search and filters; imports through the admin; held-out text read-only."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts.models import User
from evaluations.importing import import_file
from evaluations.models import TestCase

from .test_importing import case, write_json

ADMIN_MODELS = ["tradition", "rubricversion", "rubricdimension", "rubricsubdimension", "testcase",
                "evaluatedmodel", "modelresponse", "theobertcase"]


def superuser(client):
    user = User.objects.create_superuser("root@example.org", "pw-123456789")
    client.force_login(user)
    return user


def test_every_model_has_an_admin_list_with_search_and_filters(db, client, tmp_path):
    superuser(client)
    import_file(path=write_json(tmp_path / "c.json", [case("A-1"), case("A-2", dimension="doctrinal")]), kind="cases")
    for name in ADMIN_MODELS:
        url = reverse(f"admin:evaluations_{name}_changelist")
        assert client.get(url).status_code == 200, name
        assert client.get(url, {"q": "x"}).status_code == 200, name
    filtered = client.get(reverse("admin:evaluations_testcase_changelist"), {"dimension__exact": "doctrinal"})
    assert filtered.context["cl"].result_count == 1


def test_admin_import_lists_every_bad_row_and_writes_nothing(db, client):
    superuser(client)
    url = reverse("admin:evaluations_testcase_import")
    body = b'{"external_id": "B-1", "dimension": "nope", "difficulty": "easy", "question_type": "factual_recall", "prompt": "Q?"}\n' \
           b'{"external_id": "B-2", "dimension": "textual", "difficulty": "easy", "question_type": "nope", "prompt": "Q?"}\n'
    response = client.post(url, {"file": SimpleUploadedFile("bad.jsonl", body)})
    assert response.status_code == 400  # a failed import is a client error, with the rows' problems shown
    content = response.content.decode()
    assert "bad.jsonl:1:dimension" in content and "bad.jsonl:2:question_type" in content
    assert "2 problems; nothing was imported." in content
    errors = response.context["form"].errors["file"]  # the rows' problems are the file field's errors
    assert len(errors) == 2 and errors[0].startswith("bad.jsonl:1:dimension")
    assert re.search(r'<ul class="errorlist" id="id_file_error"><li>bad\.jsonl:1:dimension', content)
    assert TestCase.objects.count() == 0

    good = b'{"external_id": "B-1", "dimension": "textual", "difficulty": "easy", "question_type": "factual_recall", "prompt": "Q?"}\n'
    response = client.post(url, {"file": SimpleUploadedFile("good.jsonl", good)})
    assert response.status_code == 302
    assert TestCase.objects.get().external_id == "B-1"


@pytest.mark.parametrize("name, body", [
    ("empty.jsonl", b""),
    ("binary.json", bytes(range(256)) * 4),
    ("latin1.csv", "external_id,prompt\nB-1,caf\xe9\n".encode("latin-1")),
    ("broken.json", b'[{"external_id": "B-1",'),
    ("object.json", b'{"not": "an array"}'),
    ("program.exe", b"MZ\x90\x00"),
    ("nul.jsonl", b'{"external_id": "B-\x00", "dimension": "textual"}\n'),
])
def test_admin_import_of_a_broken_file_is_a_400_with_the_error_shown(db, client, name, body):
    superuser(client)
    response = client.post(reverse("admin:evaluations_testcase_import"), {"file": SimpleUploadedFile(name, body)})
    assert response.status_code == 400
    assert response.context["form"].errors and 'class="errorlist' in response.content.decode()
    assert TestCase.objects.count() == 0


def test_admin_import_refuses_files_over_the_upload_limit(db, client, settings):
    settings.IMPORT_MAX_UPLOAD_BYTES = 1000
    superuser(client)
    url = reverse("admin:evaluations_testcase_import")
    row = b'{"external_id": "B-1", "dimension": "textual", "difficulty": "easy", "question_type": "factual_recall", "prompt": "Q?"}\n'
    response = client.post(url, {"file": SimpleUploadedFile("big.jsonl", row * 20)})
    assert response.status_code == 400 and TestCase.objects.count() == 0
    assert "imports are limited to" in response.content.decode() and "IMPORT_MAX_UPLOAD_BYTES" in response.content.decode()
    # A body announced as far larger is refused before it is read.
    refused = client.post(url, {"file": SimpleUploadedFile("big.jsonl", row)}, CONTENT_LENGTH=str(50 * 1024 * 1024))
    assert refused.status_code == 413 and b"imports are limited to" in refused.content
    assert client.post(url, {"file": SimpleUploadedFile("ok.jsonl", row)}).status_code == 302


def test_admin_export_action_downloads_the_selected_rows(db, client, tmp_path):
    superuser(client)
    import_file(path=write_json(tmp_path / "c.json", [case("E-1"), case("E-2")]), kind="cases")
    chosen = TestCase.objects.get(external_id="E-2")
    response = client.post(reverse("admin:evaluations_testcase_changelist"),
                           {"action": "export_jsonl", "_selected_action": [chosen.pk]})
    body = b"".join(response.streaming_content).decode()
    assert response["Content-Type"] == "application/x-ndjson"
    assert '"E-2"' in body and '"E-1"' not in body


def test_held_out_text_is_read_only_for_staff_who_are_not_superusers(db, client, tmp_path):
    import_file(path=write_json(tmp_path / "c.json", [case("H-1", visibility="held_out"), case("P-1")]), kind="cases")
    staff = User.objects.create_user("staff@example.org", "pw-123456789", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__in=["view_testcase", "change_testcase"]))
    client.force_login(staff)
    held = TestCase.objects.get(external_id="H-1")
    url = reverse("admin:evaluations_testcase_change", args=[held.pk])
    page = client.get(url)
    assert "prompt" in page.context["adminform"].readonly_fields
    assert 'name="prompt"' not in page.content.decode()
    form = {"external_id": "H-1", "dimension": "textual", "difficulty": "easy", "question_type": "factual_recall",
            "visibility": "public", "is_active": "on", "prompt": "overwritten", "version": 1, "tradition": ""}
    client.post(url, form)
    held.refresh_from_db()
    assert held.prompt != "overwritten" and held.visibility == "held_out"
    public = TestCase.objects.get(external_id="P-1")
    page = client.get(reverse("admin:evaluations_testcase_change", args=[public.pk]))
    assert 'name="prompt"' in page.content.decode()
    # Staff cannot search held-out text either.
    listing = client.get(reverse("admin:evaluations_testcase_changelist"), {"q": "Romans"})
    assert listing.context["cl"].result_count == 0


def test_formula_after_whitespace_cases_export_by_admin_action_and_command(db, client, tmp_path):
    """A prompt stored as "\\r=1+1" left the cases export as a row starting "=1+1": the carriage return was
    written unquoted, and a spreadsheet (like csv.reader) ends the row there."""
    from django.core.management import call_command

    from tests.evaluations.test_spreadsheet import dangerous, spreadsheet_rows

    superuser(client)
    import_file(path=write_json(tmp_path / "c.json", [case("W-1", prompt="\r=1+1", reference_answer=" @SUM(1)")]),
                kind="cases")
    chosen = TestCase.objects.get(external_id="W-1")
    assert chosen.prompt == "\r=1+1"
    response = client.post(reverse("admin:evaluations_testcase_changelist"),
                           {"action": "export_csv", "_selected_action": [chosen.pk]})
    from_admin = b"".join(response.streaming_content)
    call_command("export_data", "cases", str(tmp_path / "cases.csv"), "--format", "csv")
    from_command = (tmp_path / "cases.csv").read_bytes()
    for data in (from_admin, from_command):
        rows = spreadsheet_rows(data)
        assert len(rows) == 2, rows
        assert not [cell for row in rows for cell in row if dangerous(cell)], rows
        record = dict(zip(rows[0], rows[1], strict=True))
        assert record["prompt"] == "'\r=1+1" and record["reference_answer"] == "' @SUM(1)"
