"""Issue 32 part 3: a rating study's scale is declared or inferred and shown; values outside it are refused with
their lines; a design that cannot give agreement is flagged before import; a semicolon file is named."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from calibration.models import Study, StudyDimension, StudyScore
from calibration.studies.importing import StudyImportFailed, study_import
from calibration.studies.scales import delimiter_named, scale_infer
from tests.annotations.factories import person

GOOD = [(r, i, (i + (r == "b")) % 5 + 1) for i in range(6) for r in "ab"]  # two raters, scores 1–5


def csv_text(rows: list[tuple[str, int, object]]) -> str:
    return "rater,item,score\n" + "".join(f"{r},i{i},{v}\n" for r, i, v in rows)


def test_declared_scale_inference_keeps_the_common_scale_and_drops_implausible_values() -> None:
    scale = scale_infer([1, 2, 3, 5, 4, 1e308, 99999999999999999999999, -5], level="ordinal")
    assert (scale.minimum, scale.maximum, scale.categories) == (1, 5, (1, 2, 3, 4, 5))
    assert scale.describe() == "ordinal, 1–5 (categories 1, 2, 3, 4, 5), inferred"
    assert (scale_infer([0.1, 0.95, 0.4], level="interval").minimum,
            scale_infer([0.1, 0.95, 0.4], level="interval").maximum) == (0, 1)
    bipolar = scale_infer([-3, -1, 0, 2, 3, -2], level="ordinal")  # many negatives: a bipolar scale keeps them
    assert (bipolar.minimum, bipolar.maximum) == (-3, 3)
    assert (scale_infer([12, 40, 87], level="ratio").minimum, scale_infer([12, 40, 87], level="ratio").maximum) \
        == (0, 100)


@pytest.mark.django_db
def test_declared_scale_refuses_out_of_scale_values_with_their_lines(tmp_path: Path) -> None:
    rows = [*GOOD[:4], ("a", 9, "1e308"), ("b", 9, "99999999999999999999999"), ("a", 10, "-5"), *GOOD[4:]]
    path = tmp_path / "r.csv"
    path.write_text(csv_text(rows))
    with pytest.raises(StudyImportFailed) as info:
        study_import(path=path, study="s", label="r.csv")
    errors = info.value.errors
    assert [e.split(": ")[0] for e in errors] == ["r.csv:6", "r.csv:7", "r.csv:8"]
    assert "1e+308 is outside 'score''s scale (ordinal, 1–5 (categories 1, 2, 3, 4, 5), inferred)" in errors[0]
    assert "-5 is outside" in errors[2]
    assert not Study.objects.exists() and not StudyScore.objects.exists()


@pytest.mark.django_db
def test_declared_scale_is_stored_stated_and_can_be_widened_by_the_uploader(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(csv_text([*GOOD, ("a", 7, 7), ("b", 7, 6)]))
    with pytest.raises(StudyImportFailed):  # inferred 1–7 would hold 6 and 7 … but a declared 1–5 does not
        study_import(path=path, study="s", scale={"scale_min": 1, "scale_max": 5})
    summary = study_import(path=path, study="s", scale={"scale_min": 0, "scale_max": 10})
    assert summary.scales == {"score": "ordinal, 0–10 (categories 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), declared"}
    dim = StudyDimension.objects.get()
    assert (dim.scale_min, dim.scale_max) == (0, 10)
    inferred = study_import(path=path, study="t")
    assert inferred.scales == {"score": "ordinal, 1–7 (categories 1, 2, 3, 4, 5, 6, 7), inferred"}
    assert StudyDimension.objects.get(study__name="t").scale_max == 7


@pytest.mark.django_db
def test_declared_scale_flags_one_rater_per_item_and_one_category_before_import(tmp_path: Path) -> None:
    once = tmp_path / "once.csv"
    once.write_text(csv_text([(f"r{i}", i, i % 5 + 1) for i in range(20)]))
    dry = study_import(path=once, study="once", dry_run=True)
    assert len(dry.warnings) == 1 and "rated by one human rater only" in dry.warnings[0]
    assert "add a second rater's ratings" in dry.warnings[0]
    same = tmp_path / "same.csv"
    same.write_text(csv_text([(r, i, 3) for i in range(5) for r in "ab"]))
    dry = study_import(path=same, study="same", dry_run=True)
    assert len(dry.warnings) == 1 and "every human rating is 3, one category" in dry.warnings[0]
    assert study_import(path=tmp_path / "good.csv" if (tmp_path / "good.csv").write_text(csv_text(GOOD)) else None,
                        study="good", dry_run=True).warnings == []


@pytest.mark.django_db
def test_declared_scale_names_a_semicolon_or_tab_separated_file(tmp_path: Path) -> None:
    for mark, name in ((";", "semicolon"), ("\t", "tab")):
        path = tmp_path / f"{name}.csv"
        path.write_text(csv_text(GOOD).replace(",", mark))
        with pytest.raises(StudyImportFailed) as info:
            study_import(path=path, study="s", label="x.csv")
        assert info.value.errors == [delimiter_named(path, label="x.csv")]
        assert f"x.csv:1: the file is {name}-separated" in info.value.errors[0]
    assert delimiter_named(tmp_path / "semicolon.csv", label="x") and not Study.objects.exists()


@pytest.mark.django_db
def test_declared_scale_on_the_upload_pages(settings, tmp_path: Path) -> None:
    settings.STUDY_UPLOAD_DIR = str(tmp_path / "uploads")
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}  # the worker's jobs
    client = Client()
    client.force_login(person("admin", name="Scale Admin"))

    def text(response) -> str:  # type: ignore[no-untyped-def]
        return unescape(re.sub(r"\s+", " ", response.content.decode()))

    rows = [*GOOD, ("a", 9, "1e308")]
    body = csv_text(rows).encode()
    client.post(reverse("calibration:study_upload"),
                {"study": "Up", "fmt": "long", "file": SimpleUploadedFile("r.csv", body, content_type="text/csv")})
    mapping = text(client.get(reverse("calibration:study_upload_mapping")))
    assert "Scale minimum" in mapping
    form = {"item": "item", "rater": "rater", "score": "score", "default_dimension": "score",
            "default_kind": "human", "level": "ordinal"}
    client.post(reverse("calibration:study_upload_mapping"), form)
    confirm = text(client.get(reverse("calibration:study_upload_confirm")))
    assert "r.csv:14: score: 1e+308 is outside 'score''s scale (ordinal, 1–5" in confirm
    client.post(reverse("calibration:study_upload_mapping"), {**form, "scale_min": "0", "scale_max": "1e308"})
    confirm = text(client.get(reverse("calibration:study_upload_confirm")))
    assert "Scale of score: ordinal, 0–1e+308, declared" in confirm
    client.post(reverse("calibration:study_upload_confirm"), {"action": "import"})
    assert client.get(reverse("calibration:study_upload_confirm")).status_code == 302  # the worker is done
    assert StudyDimension.objects.get().scale_max == 1e308


@pytest.mark.django_db
def test_declared_scale_in_the_import_command(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.csv"
    path.write_text(csv_text(GOOD))
    call_command("import_ratings", str(path), "--study", "cmd", "--scale-min", "0", "--scale-max", "6",
                 "--no-progress")
    out = capsys.readouterr().out
    assert "scale of score: ordinal, 0–6 (categories 0, 1, 2, 3, 4, 5, 6), declared" in out
    assert (StudyDimension.objects.get().scale_min, StudyDimension.objects.get().scale_max) == (0, 6)


def test_trial_run_study_report_gives_no_interval_from_too_few_items() -> None:
    """Issue 32 part 2 in study reports: α's interval only from enough items rated by two or more humans."""
    from calibration.studies.report import DimensionInfo, StudyRow, study_report_build, summary_interval

    def rows(n: int) -> list[StudyRow]:
        return [StudyRow(f"i{i}", "score", r, "human", float((i + (r == "b") * (i % 3 == 0)) % 5 + 1))
                for i in range(n) for r in "ab"]

    few = study_report_build(rows(3), dimensions=[DimensionInfo("score")], n_resamples=200, seed=1)
    humans = few.dimensions["score"].humans
    assert humans is not None and humans.get("krippendorff_alpha") is not None
    assert summary_interval(humans, "krippendorff_alpha") == (None, None)
    assert "No intervals: too few cases for an interval (n = 3; needs at least 10)." in humans["warnings"]
    enough = study_report_build(rows(12), dimensions=[DimensionInfo("score")], n_resamples=200, seed=1)
    low, high = summary_interval(enough.dimensions["score"].humans, "krippendorff_alpha")  # type: ignore[arg-type]
    assert low is not None and high is not None


@pytest.mark.django_db
def test_declared_scale_in_the_ratings_api() -> None:
    import json

    client = Client()
    client.force_login(person("admin", name="Api Scale Admin"))

    def post(url: str, body: object):  # type: ignore[no-untyped-def]
        return client.post(url, data=json.dumps(body), content_type="application/json")

    pk = post("/api/v1/studies/", {"name": "api", "source": "t", "dimensions": [{"key": "q", "level": "ordinal"}]}
              ).json()["id"]
    rows = [{"item": f"s{i}", "dimension": "q", "rater": r, "rater_kind": "human", "score": (i % 4) + 1}
            for i in range(6) for r in "ab"]
    bad = post(f"/api/v1/studies/{pk}/ratings/", [*rows, {"item": "s9", "dimension": "q", "rater": "a",
                                                           "rater_kind": "human", "score": 1e308}])
    assert bad.status_code == 400 and any("row 13" in e and "outside" in e for e in bad.json()["errors"])
    assert post(f"/api/v1/studies/{pk}/ratings/", rows).status_code == 200
    # a scale inferred from one request is not stored: a later request may hold a 5
    assert StudyDimension.objects.get(study_id=pk).scale_max is None
    assert post(f"/api/v1/studies/{pk}/ratings/", [{**rows[0], "item": "s7", "score": 5}]).status_code == 200
