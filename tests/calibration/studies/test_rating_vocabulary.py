"""One rating-file vocabulary for `manage.py irr`, `manage.py import_ratings` and the studies API: the same shapes
are read alike, old files still work, and a wrong header is one message (never one per row)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from calibration.models import Study, StudyDimension, StudyRater, StudyScore
from calibration.studies.importing import StudyImportFailed, study_import
from tests.annotations.factories import person

# 40 units × 3 raters = 120 rows, the size of the file in the report.
SCORES = {(u, r): (u + (r == "C") * (u % 2)) % 4 for u in range(40) for r in "ABC"}


def rows_csv(header: str) -> str:
    """The same ratings under a header; its columns are taken from the header's order."""
    names = header.split(",")
    lines = [header]
    for (unit, rater), value in SCORES.items():
        cells = {"unit": f"u{unit}", "item": f"u{unit}", "rater": rater, "value": str(value), "score": str(value),
                 "who": rater, "what": f"u{unit}", "grade": str(value)}
        lines.append(",".join(cells[n] for n in names))
    return "\n".join(lines) + "\n"


def irr_json(path: object) -> dict:
    out = io.StringIO()
    call_command("irr", str(path), "--bootstrap", "0", "--format", "json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("header", ["item,rater,score", "rater,item,score", "unit,rater,score", "rater,unit,value"])
def test_irr_reads_every_common_shape_as_its_own_unit_rater_value(tmp_path, header: str) -> None:  # type: ignore[no-untyped-def]
    reference = tmp_path / "ref.csv"
    reference.write_text(rows_csv("unit,rater,value"))
    other = tmp_path / "other.csv"
    other.write_text(rows_csv(header))
    ours, theirs = irr_json(reference), irr_json(other)
    assert ours.pop("file") != theirs.pop("file")
    assert ours == theirs and ours["n_ratings"] == 120


def test_irr_with_a_wrong_header_fails_with_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.csv"
    path.write_text(rows_csv("who,what,grade"))
    with pytest.raises(CommandError) as info:
        irr_json(path)
    message = str(info.value)
    assert message.count("\n") == 0
    assert "line 1: wrong header: expected the columns item,rater,score; found: who,what,grade" in message


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["rater,item,score", "item,rater,score", "unit,rater,value"])
def test_import_ratings_takes_the_common_shapes_with_defaults(tmp_path, header: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.csv"
    path.write_text(rows_csv(header))
    out = io.StringIO()
    call_command("import_ratings", str(path), "--study", "s", "--dimension", "quality", "--no-progress", stdout=out)
    assert "s: 40 items, 3 raters, 120 scores — 120 created" in out.getvalue()
    assert list(StudyDimension.objects.values_list("key", "level")) == [("quality", "ordinal")]
    assert set(StudyRater.objects.values_list("kind", flat=True)) == {"human"}
    assert StudyScore.objects.get(item__external_id="u3", rater__name="C").value == SCORES[(3, "C")]


@pytest.mark.django_db
def test_import_ratings_with_a_wrong_header_gives_one_message_not_one_per_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.csv"
    path.write_text(rows_csv("who,what,grade"))
    with pytest.raises(StudyImportFailed) as info:
        study_import(path=path, study="s")
    assert info.value.errors == [
        f"{path}:1: wrong header: expected the columns item,rater,score (optional: study,dimension,rater_kind,group); "
        "found: who,what,grade — no column for item (or unit, item_id, unit_id); no column for rater (or rater_id, "
        "annotator, coder); no column for score (or value, rating). Rename the columns (see docs/rating-files.md) "
        "or map them on the upload page."]
    with pytest.raises(CommandError, match=r"^1 error\(s\); nothing was imported"):
        call_command("import_ratings", str(path), "--study", "s", "--no-progress", stdout=io.StringIO())
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_the_old_long_header_still_imports_exactly_as_before(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "old.csv"
    path.write_text("study,item,dimension,rater,rater_kind,score,group\n,i1,d,a,human,1,g1\ns,i1,d,j,judge,2,\n"
                    "s,i2,d,a,human,3,g1\n")
    summary = study_import(path=path, study="s")
    assert (summary.items, summary.raters, summary.scores) == (2, 2, 3)
    assert StudyRater.objects.get(name="j").kind == "judge" and StudyRater.objects.get(name="a").group == "g1"


@pytest.mark.django_db
def test_wide_files_find_their_item_column_by_the_vocabulary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "w.csv"
    path.write_text("Unit,a,b\nx,1,2\ny,2,2\n")
    summary = study_import(path=path, study="w", fmt="wide", rater_columns=["a", "b"])
    assert (summary.items, summary.scores) == (2, 4)


@pytest.mark.django_db
def test_the_api_takes_aliases_and_answers_a_wrong_field_set_with_one_error() -> None:
    client = Client()
    client.force_login(person("admin", name="Vocabulary Admin"))
    study = Study.objects.create(name="api")
    url = f"/api/v1/studies/{study.pk}/ratings/"
    good = [{"unit": f"u{u}", "rater": r, "value": v, "dimension": "d"} for (u, r), v in SCORES.items()]
    response = client.post(url, data=json.dumps(good), content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 120 and StudyRater.objects.filter(kind="human").count() == 3
    bad = [{"who": r, "what": f"u{u}", "grade": v} for (u, r), v in SCORES.items()]
    response = client.post(url, data=json.dumps(bad), content_type="application/json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error.startswith("request: the ratings' fields: wrong header: expected the columns item,rater,score")
    assert "found: who,what,grade" in error
