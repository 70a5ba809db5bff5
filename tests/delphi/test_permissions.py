"""Every Delphi URL × anonymous, panelist, expert not on the study, adjudicator, admin (tests/accounts helper)."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import get_resolver, reverse

from access.policy import URL_ACTIONS
from delphi.models import DelphiResponse
from tests.access.permission_matrix import Case, extra_identities, matrix_failures, roles
from tests.delphi.factories import allocation, close, delphi_world_build, form_data, submit_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):  # type: ignore[no-untyped-def]
    """A study in round 2 (round 1 closed); a second study whose round 1 has answers (for the close actions)."""
    world = delphi_world_build()
    submit_all(world, world.round(1), [-15, -5, 5, 15, 0])
    close(world.round(1), world)
    return world


@pytest.fixture
def clients(world) -> dict[str, Client]:  # type: ignore[no-untyped-def]
    result = {"anonymous": Client()}
    for role, user in (("expert", world.expert), ("other_panel_expert", world.outsider),
                       ("adjudicator", world.adjudicator), ("admin", world.admin), *extra_identities().items()):
        client = Client()
        client.force_login(user)
        result[role] = client
    return result


def build_cases(world) -> list[Case]:  # type: ignore[no-untyped-def]
    pk = world.study.pk

    def u(name: str, **kwargs: object) -> str:
        return reverse(f"delphi:{name}", kwargs={"pk": pk, **kwargs})

    signed_in = roles("login", "allow", "allow", "allow", "allow")
    staff_only = roles("login", "403", "403", "403", "allow")
    study_page = roles("login", "allow", "404", "404", "allow")
    study_admin_action = roles("login", "403", "404", "404", "allow")
    valid = form_data(world.structure, allocation(world.structure))
    return [
        Case("delphi:index", reverse("delphi:index"), signed_in),
        Case("delphi:create", reverse("delphi:create"), staff_only),
        Case("delphi:create", reverse("delphi:create"), staff_only, method="post", data={"name": ""}),  # 422
        Case("delphi:study", u("study"), study_page),
        Case("delphi:respond", u("respond"), study_page),  # admins get a read-only preview
        # panelists: a valid answer redirects, an invalid one is a 422; staff who are not panelists get 403
        Case("delphi:respond", u("respond"), roles("login", "allow", "404", "404", "403"), method="post",
             data={"w__textual": "99.5"}),
        Case("delphi:respond", u("respond"), roles("login", "allow", "404", "404", "403"), method="post", data=valid),
        Case("delphi:report_json", u("report_json"), study_admin_action),
        Case("delphi:rescore", u("rescore"), study_admin_action, method="post"),  # not approved: message, redirect
        Case("delphi:round_close", u("round_close", number=2), study_admin_action, method="post"),
        Case("delphi:study_close", u("study_close"), study_admin_action, method="post"),
        Case("delphi:approve", u("approve"), study_admin_action, method="post"),
        # POST-only URLs answer GET with 405 to anyone signed in, whether or not the study exists
        Case("delphi:round_close", u("round_close", number=2), roles("login", "405", "405", "405", "405")),
        Case("delphi:approve", u("approve"), roles("login", "405", "405", "405", "405")),
        # a study that does not exist looks like a study one may not see
        Case("delphi:study", reverse("delphi:study", kwargs={"pk": 999_999}), roles("login", "404", "404", "404", "404")),
        Case("delphi:respond", reverse("delphi:respond", kwargs={"pk": 999_999}),
             roles("login", "404", "404", "404", "404")),
    ]


def test_every_delphi_url_is_in_the_matrix(world) -> None:  # type: ignore[no-untyped-def]
    covered = {case.name for case in build_cases(world)}
    ours = {f"delphi:{name}" for name in get_resolver().namespace_dict["delphi"][1].reverse_dict
            if isinstance(name, str)}
    assert ours - covered == set(), "add these URLs to the permission matrix"
    assert {name for name in URL_ACTIONS if name.startswith("delphi:")} == ours


def test_delphi_permission_matrix(world, clients) -> None:  # type: ignore[no-untyped-def]
    failures = matrix_failures(build_cases(world), clients)
    assert failures == [], "\n" + "\n".join(failures)
    # Only the panelist's own answer was stored; the 403/404 attempts wrote nothing.
    assert list(DelphiResponse.objects.filter(round__number=2).values_list("expert", flat=True)) == [world.expert.pk]


def test_a_panelist_cannot_run_the_study(world) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world.expert)
    for name, kwargs in (("round_close", {"number": 2}), ("study_close", {}), ("approve", {}), ("rescore", {})):
        assert client.post(reverse(f"delphi:{name}", kwargs={"pk": world.study.pk, **kwargs})).status_code == 403
    world.study.refresh_from_db()
    assert world.study.status == "running" and world.round(2).is_open
