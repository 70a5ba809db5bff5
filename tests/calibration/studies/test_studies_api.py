"""The studies API: create, push ratings (all or nothing, idempotent), read the reliability; who may."""
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


def test_create_push_and_read(admin_client) -> None:  # type: ignore[no-untyped-def]
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
    report = admin_client.get(f"/api/v1/studies/{pk}/report/?bootstrap=0").json()
    coherence = report["dimensions"]["coherence"]
    assert coherence["scale"] == [1.0, 5.0]  # the declared scale, kept by the ratings push
    assert 0.6 < coherence["humans"]["krippendorff_alpha"] < 1
    assert coherence["judges"][0]["mean_signed_difference"] == pytest.approx(5 / 6)  # judge − human mean, by hand


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
    assert Client().get(f"/api/v1/studies/{pk}/report/?bootstrap=0",
                        **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code == 200
    assert admin_client.get(f"/api/v1/studies/{pk}/report/?bootstrap=-1").status_code == 400
    assert admin_client.get(f"/api/v1/studies/{pk}/report/?bootstrap=99999999").status_code == 400
    assert admin_client.get("/api/v1/studies/999999/report/").status_code == 404
    assert post(admin_client, "/api/v1/studies/999999/ratings/", ratings({"a": [1]})).status_code == 404
    assert post(admin_client, f"/api/v1/studies/{pk}/ratings/", []).status_code == 400
    assert admin_client.post("/api/v1/studies/", data="{oops", content_type="application/json").status_code == 400
    bad = post(admin_client, "/api/v1/studies/", {"name": "x", "dimensions": [{"key": "d", "scale_min": 5,
                                                                              "scale_max": 1}]})
    assert bad.status_code == 400 and bad.json()["errors"] == ["dimensions.0.scale_max: must not be below scale_min"]
