"""POST /api/v1/cases/ and /api/v1/responses/: who may write, the importers' rules, all or nothing, idempotent."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.models import ApiToken
from evaluations.models import ModelResponse, TestCase
from tests.accounts.api import token_auth
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db

CASES = "/api/v1/cases/"
RESPONSES = "/api/v1/responses/"


def case(external_id: str, **changes: object) -> dict:
    record = {"external_id": external_id, "dimension": "doctrinal", "difficulty": "medium", "tradition": "catholic",
              "question_type": "factual_recall", "prompt": f"What does the Church teach about {external_id}?"}
    record.update(changes)
    return record


@pytest.fixture
def admin():  # type: ignore[no-untyped-def]
    return person("admin", name="Api Admin")


def post(client: Client, url: str, body: object, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(url, data=json.dumps(body), content_type="application/json", **extra)


def signed_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_who_may_write(admin) -> None:  # type: ignore[no-untyped-def]
    body = [case("API-1")]
    assert post(Client(), CASES, body).status_code in (401, 403)
    assert post(signed_in(person(name="Plain Expert")), CASES, body).status_code == 403
    assert post(Client(), CASES, body, **token_auth(admin, ApiToken.Scope.REPORTS_READ)).status_code == 403
    assert not TestCase.objects.exists()
    response = post(Client(), CASES, body, **token_auth(admin, ApiToken.Scope.DATA_WRITE))
    assert response.status_code == 200, response.content
    assert response.json() == {"kind": "cases", "rows": 1, "created": 1, "updated": 0, "unchanged": 0,
                               "dry_run": False}
    assert post(signed_in(admin), CASES, [case("API-2")]).status_code == 200  # a session works as well


def test_a_bad_record_writes_nothing_and_every_problem_is_named(admin) -> None:  # type: ignore[no-untyped-def]
    client = signed_in(admin)
    body = [case("API-1"), case("API-2", dimension="dogma"), case("API-3", difficulty=None, surprise=1)]
    response = post(client, CASES, body)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {(e["row"], e["field"]) for e in errors} == {(2, "dimension"), (3, "difficulty"), (3, "surprise")}
    assert "nothing was written" in response.json()["detail"]
    assert not TestCase.objects.exists()  # not even API-1


def test_the_same_records_twice_change_nothing_and_a_change_is_an_update(admin) -> None:  # type: ignore[no-untyped-def]
    client = signed_in(admin)
    body = [case("API-1"), case("API-2")]
    assert post(client, CASES, body).json()["created"] == 2
    again = post(client, CASES, body).json()
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 2)
    changed = post(client, CASES, [case("API-1", prompt="A new question?"), case("API-2")]).json()
    assert (changed["created"], changed["updated"], changed["unchanged"]) == (0, 1, 1)
    assert TestCase.objects.get(external_id="API-1").prompt == "A new question?"


def test_responses_need_their_case_and_dry_run_writes_nothing(admin) -> None:  # type: ignore[no-untyped-def]
    client = signed_in(admin)
    post(client, CASES, [case("API-1")])
    record = {"case": "API-1", "model": "acme/model-7", "provider": "Acme", "family": "acme", "text": "Grace precedes faith.", "temperature": 0.7}
    missing = post(client, RESPONSES, [record, {**record, "case": "NO-SUCH-CASE"}])
    assert missing.status_code == 400
    assert [(e["row"], e["field"]) for e in missing.json()["errors"]] == [(2, "case")]
    checked = post(client, RESPONSES, {"records": [record], "dry_run": True})
    assert checked.status_code == 200 and checked.json()["dry_run"] is True and checked.json()["created"] == 1
    assert not ModelResponse.objects.exists()
    written = post(client, RESPONSES, {"records": [record]})
    assert written.json()["created"] == 1
    assert ModelResponse.objects.get().text == "Grace precedes faith."


@pytest.mark.parametrize("body, field", [
    ({"cases": []}, "cases"),
    ("not a list", "records"),
    ([], "records"),
    ({"records": [1]}, ""),
    ({"records": [{}], "dry_run": "yes"}, "dry_run"),
])
def test_malformed_bodies_get_a_400_naming_the_problem(admin, body, field) -> None:  # type: ignore[no-untyped-def]
    response = post(signed_in(admin), CASES, body)
    assert response.status_code == 400
    assert field in {e["field"] for e in response.json()["errors"]}


def test_not_json_and_too_many_records(admin, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    client = signed_in(admin)
    assert client.post(CASES, data="{not json", content_type="application/json").status_code == 400
    monkeypatch.setattr("evaluations.api.MAX_RECORDS", 2)
    response = post(client, CASES, [case("A-1"), case("A-2"), case("A-3")])
    assert response.status_code == 400 and "at most 2" in response.json()["errors"][0]["message"]
    assert not TestCase.objects.exists()


def test_the_schema_describes_request_and_response_bodies(admin) -> None:  # type: ignore[no-untyped-def]
    schema = signed_in(admin).get("/api/v1/schema/?format=json").json()
    components = schema["components"]["schemas"]
    for path, record in (("/api/v1/cases/", "CasesRecord"), ("/api/v1/responses/", "ResponsesRecord")):
        operation = schema["paths"][path]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body["type"] == "array" and body["items"]["$ref"].endswith(record)
        assert set(operation["responses"]) >= {"200", "400"}
        assert operation["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("ImportErrors")
    assert {"external_id", "dimension", "prompt"} <= set(components["CasesRecord"]["properties"])
    assert "external_id" in components["CasesRecord"]["required"]
    assert "tradition" not in components["CasesRecord"].get("required", [])
