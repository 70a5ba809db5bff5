"""The study pages: the list, a study's report (what the stored snapshot says, formatted as the page formats it),
computing a version and judging through the page, downloads, bad parameters, and a query count that does not grow
with the study."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from django.template.defaultfilters import floatformat
from django.test import Client
from django.urls import reverse

from calibration.models import Study, StudyJudgeRun
from calibration.studies.importing import study_import
from evaluations.judge.fake_server import FakeLLMServer
from evidence.models import Snapshot, SnapshotFile
from tests.annotations.factories import person
from tests.calibration.studies.test_study_judging import judge_bench_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin() -> Client:
    client = Client()
    client.force_login(person("admin", name="Study Page Admin"))
    return client


def compute(client: Client, study: Study, django_capture_on_commit_callbacks, **form: object) -> Snapshot:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("calibration:study_report_compute", args=[study.pk]),
                               {"seed": 1, "n_resamples": 100, **form})
    assert response.status_code == 302, response.content.decode()[:2000]
    snapshot = Snapshot.objects.of("study_report", study.pk).order_by("-version").first()
    assert snapshot is not None and snapshot.status == "ready", snapshot and snapshot.error
    return snapshot


def test_the_report_page_shows_the_stored_numbers_and_serves_the_stored_files(  # type: ignore[no-untyped-def]
        tmp_path: Path, admin: Client, settings, django_capture_on_commit_callbacks, immediate_tasks) -> None:
    study_import(path=judge_bench_file(tmp_path / "mini.json", n=10), study="mini", fmt="judge-bench")
    study = Study.objects.get(name="mini")
    page = admin.get(reverse("calibration:study_report", args=[study.pk]))
    assert page.status_code == 200 and b'data-testid="no-snapshot"' in page.content
    listing = admin.get(reverse("calibration:studies")).content.decode()
    assert "mini" in listing and "none yet" in listing

    with FakeLLMServer() as server:  # judge through the page: the worker runs it when the request commits
        settings.FAITHBENCH = {**getattr(settings, "FAITHBENCH", {}), "LLM_BASE_URL": server.base_url}
        with django_capture_on_commit_callbacks(execute=True):
            started = admin.post(reverse("calibration:study_judge", args=[study.pk]),
                                 {"model": "page-judge", "dimensions": ["coherence"]})
        assert started.status_code == 302
    run = StudyJudgeRun.objects.get()
    assert (run.status, run.scored, run.total) == ("finished", 10, 10)
    refused = admin.post(reverse("calibration:study_judge", args=[study.pk]), {"model": "human-1"})
    assert refused.status_code == 422 and "is a human rater of this study" in refused.content.decode()

    snapshot = compute(admin, study, django_capture_on_commit_callbacks)
    html = admin.get(reverse("calibration:study_report", args=[study.pk])).content.decode()
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    coherence = snapshot.payload["dimensions"]["coherence"]
    humans = coherence["humans"]
    low, high = humans["alpha_ci"]
    assert (f"Krippendorff's α {floatformat(humans['krippendorff_alpha'], 3)} "
            f"[{floatformat(low, 3)}, {floatformat(high, 3)}]") in text
    judge = coherence["judges"][0]
    assert f"page-judge 10 {floatformat(judge['spearman_rho'], 3)}" in text
    assert html.count('data-testid="confusion"') == 1  # the judge rated one dimension
    assert f"#{run.pk} page-judge Finished 10 0 10" in text
    for fmt, stored_format in (("zip", "bundle"), ("pdf", "pdf"), ("csv", "csv"), ("json", "json"),
                               ("ratings", "ratings")):
        response = admin.get(reverse("calibration:study_report_export", args=[study.pk, fmt]) + "?version=1")
        assert response.status_code == 200
        assert response.content == bytes(SnapshotFile.objects.get(snapshot=snapshot, format=stored_format).content)
        assert response["X-Input-Hash"] == snapshot.input_hash
    bad = reverse("calibration:study_report", args=[study.pk])
    assert admin.get(bad + "?version=abc").status_code == 400
    assert admin.get(bad + "?version=9").status_code == 404
    assert admin.get(reverse("calibration:study_report_export", args=[study.pk, "exe"])).status_code == 404
    assert admin.get(reverse("calibration:study_report", args=[999_999])).status_code == 404
    assert admin.post(reverse("calibration:study_report_compute", args=[study.pk]),
                      {"seed": -1, "n_resamples": 100}).status_code == 422


@pytest.mark.parametrize("n_items", [5, 60])
def test_study_pages_query_counts_do_not_grow_with_the_study(  # type: ignore[no-untyped-def]
        n_items: int, tmp_path: Path, admin: Client, django_assert_max_num_queries,
        django_capture_on_commit_callbacks, immediate_tasks) -> None:
    study_import(path=judge_bench_file(tmp_path / "s.json", n=n_items), study="s", fmt="judge-bench")
    study = Study.objects.get(name="s")
    compute(admin, study, django_capture_on_commit_callbacks, n_resamples=0)
    for _ in range(3):
        StudyJudgeRun.objects.create(study=study, model=f"m{_}", base_url="http://127.0.0.1:9/v1")
    with django_assert_max_num_queries(14):
        assert admin.get(reverse("calibration:study_report", args=[study.pk])).status_code == 200
    with django_assert_max_num_queries(10):
        assert admin.get(reverse("calibration:studies")).status_code == 200
    with django_assert_max_num_queries(10):
        assert admin.get(reverse("calibration:study_report_export", args=[study.pk, "zip"])).status_code == 200


def test_the_snapshot_admin_lists_study_versions_with_a_link_to_their_page(  # type: ignore[no-untyped-def]
        tmp_path: Path, django_capture_on_commit_callbacks, immediate_tasks) -> None:
    from tests.annotations.factories import person as make

    study_import(path=judge_bench_file(tmp_path / "s.json", n=4), study="s", fmt="judge-bench")
    study = Study.objects.get(name="s")
    superuser = make("admin", name="Snapshot Superuser")
    superuser.is_superuser = True
    superuser.save()
    client = Client()
    client.force_login(superuser)
    compute(client, study, django_capture_on_commit_callbacks, n_resamples=0)
    page = client.get(reverse("admin:evidence_snapshot_changelist"))
    assert page.status_code == 200
    assert f'href="/calibration/studies/{study.pk}/report/?version=1"' in page.content.decode()
    assert "study: s" in page.content.decode()
