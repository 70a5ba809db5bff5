"""The API's description (/api/v1/schema/) and its docs page are for those who may use the API (admins): an
outside probe found an expert reading the schema. Experts and visitors are refused; an admin's token with any
scope reads it (tools fetch the schema with the token they use); the docs page sends a visitor to sign in."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import ApiToken
from tests.accounts.api import token_auth
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_an_expert_and_a_visitor_cannot_read_the_api_schema_or_its_docs() -> None:
    expert, lead = person("expert"), person("adjudicator")
    for client in (Client(), signed_in(expert), signed_in(lead)):
        response = client.get(reverse("api-schema"), {"format": "json"})
        assert response.status_code in (401, 403)  # a visitor: 401 (the token scheme asks for credentials)
        assert b"openapi" not in response.content and b"components" not in response.content
    assert signed_in(expert).get(reverse("api-docs")).status_code == 403
    visitor = Client().get(reverse("api-docs"))
    assert visitor.status_code == 302 and reverse("account_login") in visitor["Location"]


def test_an_expert_token_is_refused_and_an_admin_token_of_any_scope_reads_the_schema() -> None:
    expert, admin = person("expert"), person("admin")
    refused = Client().get(reverse("api-schema"), {"format": "json"}, **token_auth(expert, ApiToken.Scope.REPORTS_READ))
    assert refused.status_code == 403
    for scope in ApiToken.Scope.values:
        answer = Client().get(reverse("api-schema"), {"format": "json"}, **token_auth(admin, scope))
        assert answer.status_code == 200 and answer.json()["openapi"].startswith("3.")
    assert signed_in(admin).get(reverse("api-docs")).status_code == 200


def test_a_profile_field_too_long_is_refused_with_its_error_as_422_and_nothing_stored() -> None:
    """A 5,000-character degree used to answer 200 with nothing stored, which looked like a save."""
    from accounts.models import ExpertProfile

    expert = person("expert")
    client = signed_in(expert)
    before = list(ExpertProfile.objects.filter(user=expert).values_list("degree", flat=True))
    response = client.post(reverse("accounts:profile"), {"degree": "x" * 5000, "institution": "Tyndale House",
                                                         "languages": "Greek", "qualifications": ""})
    assert response.status_code == 422
    assert "at most 200 characters" in response.content.decode()
    assert list(ExpertProfile.objects.filter(user=expert).values_list("degree", flat=True)) == before
    saved = client.post(reverse("accounts:profile"), {"degree": "Th.D.", "institution": "", "languages": "",
                                                      "qualifications": ""})
    assert saved.status_code == 302
    assert ExpertProfile.objects.get(user=expert).degree == "Th.D."
