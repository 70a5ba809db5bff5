"""The REST API against its own OpenAPI schema (drf-spectacular), fuzzed by schemathesis in process (WSGI).

Every operation gets generated requests — valid ones and, by schemathesis' negative mode, invalid ones — sent
with a token that has every scope, on a database holding a cycle with a report snapshot. Each answer must not
be a server error, and a documented answer must match its schema. Examples per operation:
SCHEMATHESIS_MAX_EXAMPLES (default 25; the whole file stays well under two minutes on two cores).

`.ci/run` runs it once, in the SQLite pass (marker `schemathesis`).
"""
from __future__ import annotations

import json
import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from accounts.models import ApiToken
from accounts.services import api_token_create
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from config.wsgi import application
from tests.annotations.factories import world_build

pytestmark = [pytest.mark.schemathesis, pytest.mark.django_db]

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))


@pytest.fixture
def token_headers(db) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A world with one computed report, and an admin token holding every scope."""
    world = world_build()
    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    _token, secret = api_token_create(user=world.admin, name="schemathesis", scopes=list(ApiToken.Scope.values))
    return {"Authorization": f"Token {secret}"}




def api_description() -> dict[str, Any]:
    """The document /api/v1/schema/ serves to admins, generated in process (the view needs a signed-in admin or an
    admin's token, and collection has no database to create one; the generator reads none)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    document = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(document, renderer_context={}))


# Loaded when the module is collected. (schemathesis' `from_fixture` does not work with pytest 9's nodes.)
schema = schemathesis.openapi.from_dict(api_description())
schema.app = application
schema.location = "/api/v1/schema/"


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_the_api_answers_every_generated_request_without_a_server_error_and_as_documented(
    case: Any, token_headers: dict[str, str],
) -> None:
    case.call_and_validate(headers=token_headers, checks=[not_a_server_error, response_schema_conformance])


def test_the_schema_lists_every_api_operation() -> None:
    operations = {(op.method.upper(), op.path) for op in (result.ok() for result in schema.get_all_operations())}
    assert {("GET", "/api/v1/gold-labels/"), ("GET", "/api/v1/leaderboard/"),
            ("GET", "/api/v1/reports/cycles/{id}/"), ("GET", "/api/v1/reports/cycles/{id}/versions/"),
            ("POST", "/api/v1/reports/cycles/{id}/versions/")} <= operations


def test_every_write_has_a_request_body_and_every_operation_a_documented_success() -> None:
    """The write API of issue 16 is described with request and response bodies, not free text."""
    document = api_description()
    operations = {(method.upper(), path): op for path, item in document["paths"].items()
                  for method, op in item.items() if method in ("get", "post", "put", "patch", "delete")}
    for key in [("POST", "/api/v1/cases/"), ("POST", "/api/v1/responses/"), ("POST", "/api/v1/judge-runs/"),
                ("GET", "/api/v1/judge-runs/{id}/"), ("POST", "/api/v1/judge-runs/{id}/cancel/"),
                ("POST", "/api/v1/studies/"), ("POST", "/api/v1/studies/{id}/ratings/"),
                ("POST", "/api/v1/studies/{id}/judge-runs/"), ("GET", "/api/v1/studies/judge-runs/{id}/"),
                ("POST", "/api/v1/studies/judge-runs/{id}/cancel/"), ("POST", "/api/v1/reports/"),
                ("GET", "/api/v1/reports/studies/{id}/"), ("GET", "/api/v1/reports/studies/{id}/versions/"),
                ("GET", "/api/v1/reports/studies/{id}/bundle/"), ("GET", "/api/v1/reports/cycles/{id}/bundle/")]:
        assert key in operations, key
    for (method, path), op in operations.items():
        successes = {code: body for code, body in op["responses"].items() if code.startswith("2")}
        assert successes, (method, path)
        for code, body in successes.items():
            assert body.get("content"), f"{method} {path} {code}: no response body described"
        cancel = path.endswith("/cancel/")  # a cancel takes no body: the URL names what stops
        if method == "POST" and not cancel:
            assert op.get("requestBody", {}).get("content"), f"{method} {path}: no request body described"


def test_the_schema_generates_without_a_warning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """drf-spectacular's warnings (an unresolvable field, an enum name collision) fail the deploy check in CI;
    this catches them in the test suite first."""
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
