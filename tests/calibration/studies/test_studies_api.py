"""The studies API: create, push ratings (all or nothing, idempotent), request and read the report (a stored
snapshot, through POST /api/v1/reports/); who may."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.models import ApiToken
from calibration.models import Study, StudyScore
from tests.accounts.api import token_auth
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db
STUDY = {"name": "hanna-mini", "source": "a test", "dimensions": [
    {"key": "coherence", "level": "ordinal", "scale_min": 1, "scale_max": 5}]}


def post(client: Client, url: str, body: object, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(url, data=json.dumps(body), content_type="application/json", **extra)


def ratings(values: dict[str, list[int]], judge: list[int] | None = None) -> list[dict]:
    rows = [{"item": f"s{i}", "dimension": "coherence", "rater": rater, "rater_kind": "human", "score": v}
            for rater, scores in values.items() for i, v in enumerate(scores)]
    rows += [{"item": f"s{i}", "dimension": "coherence", "rater": "judge", "rater_kind": "judge", "score": v}
             for i, v in enumerate(judge or [])]
    return rows


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(person("admin", name="Study Admin"))
    return client


def request_report(client: Client, django_capture_on_commit_callbacks, body: dict, **extra: str):  # type: ignore[no-untyped-def]
    """POST /api/v1/reports/ and let the worker's task run (the test settings' backend runs it at once)."""
    with django_capture_on_commit_callbacks(execute=True):
        return post(client, "/api/v1/reports/", body, **extra)


def test_create_push_and_read(admin_client, django_capture_on_commit_callbacks, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    created = post(admin_client, "/api/v1/studies/", STUDY)
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    assert post(admin_client, "/api/v1/studies/", STUDY).json()["id"] == pk  # the same again: 200, the same study
    assert post(admin_client, "/api/v1/studies/", {**STUDY, "source": "other"}).status_code == 409
    body = ratings({"a": [1, 2, 3, 4, 5, 3], "b": [1, 2, 3, 5, 5, 2], "c": [2, 2, 3, 4, 4, 3]}, judge=[2, 3, 4, 5, 5, 4])
    pushed = post(admin_client, f"/api/v1/studies/{pk}/ratings/", body)
    assert pushed.status_code == 200 and pushed.json()["created"] == 24
    again = post(admin_client, f"/api/v1/studies/{pk}/ratings/", {"ratings": body}).json()
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 24)
    assert admin_client.get(f"/api/v1/reports/studies/{pk}/").status_code == 404  # nothing computed yet
    queued = request_report(admin_client, django_capture_on_commit_callbacks, {"study": pk, "n_resamples": 0})
    assert queued.status_code == 202, queued.content
    assert queued.json()["version"] == 1 and queued.json()["url"].endswith(f"/api/v1/reports/studies/{pk}/?version=1")
    snapshot = admin_client.get(queued.json()["url"]).json()
    assert snapshot["status"] == "ready" and snapshot["input_counts"]["ratings"] == 24
    coherence = snapshot["report"]["dimensions"]["coherence"]
    assert coherence["scale"] == [1.0, 5.0]  # the declared scale, kept by the ratings push
    assert 0.6 < coherence["humans"]["krippendorff_alpha"] < 1
    assert coherence["judges"][0]["mean_signed_difference"] == pytest.approx(5 / 6)  # judge − human mean, by hand
    # the judge's confusion matrix against the lower human median: medians 1 2 3 4 5 3, judge 2 3 4 5 5 4
    matrix = coherence["judges"][0]["confusion"]["matrix"]
    assert [(j + 1, h + 1) for j, row in enumerate(matrix) for h, n in enumerate(row) for _ in range(n)] == sorted(
        [(2, 1), (3, 2), (4, 3), (5, 4), (5, 5), (4, 3)])
    bundle = admin_client.get(queued.json()["bundle_url"])
    assert bundle.status_code == 200 and bundle["Content-Type"] == "application/zip"
    assert bundle["Content-Disposition"] == f'attachment; filename="irr-report-study-{pk}-v1.zip"'
    versions = admin_client.get(f"/api/v1/reports/studies/{pk}/versions/").json()
    assert [(v["version"], v["status"], v["report"]) for v in versions] == [(1, "ready", None)]


def test_a_bad_rating_writes_nothing_and_is_named(admin_client) -> None:  # type: ignore[no-untyped-def]
    pk = post(admin_client, "/api/v1/studies/", STUDY).json()["id"]
    body = ratings({"a": [1, 2], "b": [2, 9]})  # 9 is off the 1–5 scale
    body.append({"item": "s0", "dimension": "coherence", "rater": "c", "rater_kind": "robot", "score": 1})
    response = post(admin_client, f"/api/v1/studies/{pk}/ratings/", body)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any("row 4" in e and "outside" in e for e in errors) and any("row 5" in e and "rater_kind" in e for e in errors)
    assert not StudyScore.objects.exists()


def test_who_may_and_bad_parameters(admin_client) -> None:  # type: ignore[no-untyped-def]
    admin = person("admin", name="Token Admin")
    assert post(Client(), "/api/v1/studies/", STUDY).status_code in (401, 403)
    expert = Client()
    expert.force_login(person(name="Plain Expert"))
    assert post(expert, "/api/v1/studies/", STUDY).status_code == 403
    assert post(Client(), "/api/v1/studies/", STUDY, **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code == 403
    assert post(Client(), "/api/v1/studies/", STUDY, **token_auth(admin, ApiToken.Scope.DATA_WRITE)).status_code == 201
    pk = Study.objects.get().pk
    assert Client().get(f"/api/v1/reports/studies/{pk}/", **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code \
        == 404  # allowed in; no version yet
    assert admin_client.get(f"/api/v1/reports/studies/{pk}/?version=abc").status_code == 400
    assert admin_client.get("/api/v1/reports/studies/999999/").status_code == 404
    assert post(admin_client, "/api/v1/studies/999999/ratings/", ratings({"a": [1]})).status_code == 404
    assert post(admin_client, f"/api/v1/studies/{pk}/ratings/", []).status_code == 400
    assert admin_client.post("/api/v1/studies/", data="{oops", content_type="application/json").status_code == 400
    bad = post(admin_client, "/api/v1/studies/", {"name": "x", "dimensions": [{"key": "d", "scale_min": 5,
                                                                              "scale_max": 1}]})
    assert bad.status_code == 400 and bad.json()["errors"] == ["dimensions.0.scale_max: must not be below scale_min"]


def test_report_requests_are_checked_and_scoped(admin_client, django_capture_on_commit_callbacks, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    admin = person("admin", name="Report Admin")
    pk = post(admin_client, "/api/v1/studies/", STUDY).json()["id"]
    post(admin_client, f"/api/v1/studies/{pk}/ratings/", ratings({"a": [1, 2, 3], "b": [1, 3, 3]}))
    for body, field in (({}, "non_field_errors"), ({"study": pk, "cycle": 1}, "non_field_errors"),
                        ({"study": pk, "run": 3}, "run"), ({"study": pk, "n_resamples": 10_001}, "n_resamples"),
                        ({"study": pk, "seed": -1}, "seed")):
        response = post(admin_client, "/api/v1/reports/", body)
        assert response.status_code == 400 and field in response.json(), (body, response.content)
    assert post(admin_client, "/api/v1/reports/", {"study": 999_999}).status_code == 404
    assert post(admin_client, "/api/v1/reports/", {"cycle": 999_999}).status_code == 404
    read_only = token_auth(admin, ApiToken.Scope.REPORTS_READ)
    assert post(Client(), "/api/v1/reports/", {"study": pk}, **read_only).status_code == 403  # a write
    expert = Client()
    expert.force_login(person(name="Curious Expert"))
    assert post(expert, "/api/v1/reports/", {"study": pk}).status_code == 403
    from evidence.models import Snapshot
    assert not Snapshot.objects.exists()  # nothing refused left a row
    writer = token_auth(admin, ApiToken.Scope.DATA_WRITE)
    first = request_report(Client(), django_capture_on_commit_callbacks, {"study": pk, "n_resamples": 0, "seed": 5},
                           **writer)
    second = request_report(Client(), django_capture_on_commit_callbacks, {"study": pk, "n_resamples": 0}, **writer)
    assert (first.json()["version"], first.json()["seed"], second.json()["version"], second.json()["seed"]) == (1, 5, 2, 0)
    one = admin_client.get(f"/api/v1/reports/studies/{pk}/?version=1").json()
    newest = admin_client.get(f"/api/v1/reports/studies/{pk}/").json()
    assert newest["version"] == 2 and one["input_hash"] == newest["input_hash"]  # the same rows, the same hash
