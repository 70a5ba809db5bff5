"""access.policy: every URL has an action; who may do what, stated as a table; the old disagreements settled.

The views' behaviour for each URL × identity is the permission matrix (test_permission_matrix.py, and
tests/delphi/test_permissions.py); here the policy itself is checked against an expected table written out
by hand, and each place where the earlier checks disagreed has a test of its own.
"""
from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from access.policy import URL_ACTIONS, Action, allowed, panels_adjudicated, panels_led, url_action
from accounts.models import User
from annotations.models import Panel
from evaluations.models import Visibility
from evaluations.selectors import cases_visible_to
from tests.annotations.factories import CaseFactory, person, tradition

pytestmark = pytest.mark.django_db


def _urls(resolver: URLResolver, namespace: str = "", prefix: str = "") -> list[tuple[str | None, str, str]]:
    """(namespaced name, route, view module) of every URL pattern, nested includes included."""
    found: list[tuple[str | None, str, str]] = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else (entry.namespace or namespace)
            found += _urls(entry, inner or "", prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name
            callback = entry.callback
            module = getattr(callback, "__module__", "") or ""
            view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
            if view_class is not None:
                module = view_class.__module__
            found.append((name, prefix + str(entry.pattern), module))
    return found


def test_every_url_of_the_project_has_an_action_in_the_policy() -> None:
    urls = _urls(get_resolver())
    assert len(urls) > 100  # ours, allauth's and the admin site's
    uncovered = [f"{name or '(unnamed)'} /{route} ({module})" for name, route, module in urls
                 if url_action(name=name, view_module=module, route=route) is None]
    assert uncovered == [], "add these URLs to access.policy.URL_ACTIONS:\n" + "\n".join(uncovered)


def test_the_policy_table_names_no_url_that_is_gone() -> None:
    names = {name for name, _route, _module in _urls(get_resolver()) if name}
    assert set(URL_ACTIONS) - names == set()


def test_a_view_of_another_package_is_not_covered_by_accident() -> None:
    assert url_action(name="not-a-url", view_module="evaluations.views") is None
    assert url_action(name=None, view_module="allauth.account.views") == Action.PUBLIC
    assert url_action(name="admin:index", view_module="django.contrib.admin.sites", route="admin/") == Action.ADMIN_SITE
    assert url_action(name="x", view_module="django.contrib.admin.sites", route="judge/") is None


# --- the table ---------------------------------------------------------------------------------------------

IDENTITIES = ("anonymous", "expert", "adjudicator", "panel_lead", "staff", "role_admin", "superuser",
              "inactive_admin")
Y, N = True, False
# Actions without an object, as designed: one row per action, one column per identity (in IDENTITIES' order).
EXPECTED = {
    Action.PUBLIC:              (Y, Y, Y, Y, Y, Y, Y, Y),
    Action.USE_ACCOUNT:         (N, Y, Y, Y, Y, Y, Y, N),
    Action.LEAD:                (N, N, Y, Y, Y, Y, Y, N),
    Action.ADJUDICATE:          (N, N, Y, Y, Y, Y, Y, N),
    Action.TAKE_PART_IN_DELPHI: (N, Y, Y, Y, Y, Y, Y, N),  # the study list; a study itself: its panelists
    Action.RUN_DELPHI:          (N, N, N, N, Y, Y, Y, N),
    Action.MANAGE_CALIBRATION:  (N, N, N, N, Y, Y, Y, N),
    Action.VIEW_JUDGE_OUTPUT:   (N, N, N, N, Y, Y, Y, N),
    Action.VIEW_CALIBRATED:     (N, N, Y, Y, Y, Y, Y, N),  # leads read the calibrated leaderboard; experts never
    Action.VIEW_CONDITIONS:     (N, N, Y, Y, Y, Y, Y, N),  # condition leaderboards and deltas: as the calibrated one
    Action.USE_API:             (N, N, N, N, Y, Y, Y, N),
    Action.ADMIN_SITE:          (N, N, N, N, Y, Y, Y, N),
    Action.VIEW_HELD_OUT:       (N, N, N, N, N, N, Y, N),
    Action.READ_CASE_TEXT:      (N, N, N, N, N, N, Y, N),  # every case's text; one case: anyone unless held out
    Action.VIEW_CASE_HISTORY:   (N, N, Y, Y, Y, Y, Y, N),  # the lead pages; one case: its tradition's panel lead
    Action.VIEW_AUDIT:          (N, N, N, N, Y, Y, Y, N),  # the audit trail: admins only
    Action.READ_HELP:           (N, Y, Y, Y, Y, Y, Y, N),  # the help index; a topic: by its audience (below)
}


def test_help_by_role_topics_by_audience(who) -> None:  # type: ignore[no-untyped-def]
    expected = {"expert": (N, Y, Y, Y, Y, Y, Y, N), "lead": (N, N, Y, Y, Y, Y, Y, N), "admin": (N, N, N, N, Y, Y, Y, N)}
    for audience, row in expected.items():
        assert tuple(allowed(who[name], Action.READ_HELP, audience) for name in IDENTITIES) == row, audience


@pytest.fixture
def who() -> dict[str, object]:
    catholic = tradition("catholic")
    panel_lead = person(tradition=catholic, name="Expert who leads")
    Panel.objects.create(name="Led panel", tradition=catholic, lead=panel_lead)
    inactive = person(User.Role.ADMIN, name="Gone admin")
    inactive.is_active = False
    inactive.save()
    role_admin = User.objects.create_user(email="role-admin@faithbench.test", password="x", role=User.Role.ADMIN)
    return {
        "anonymous": AnonymousUser(),
        "expert": person(tradition=catholic),
        "adjudicator": person(User.Role.ADJUDICATOR, tradition=catholic),
        "panel_lead": panel_lead,
        "staff": User.objects.create_user(email="staff@faithbench.test", password="x", is_staff=True),
        "role_admin": role_admin,
        "superuser": User.objects.create_superuser(email="root@faithbench.test", password="x"),
        "inactive_admin": inactive,
    }


def test_the_policy_says_what_the_table_says(who) -> None:  # type: ignore[no-untyped-def]
    assert set(EXPECTED) | {Action.SCORE, Action.REVIEW_CASE, Action.MANAGE_PANEL_WORK, Action.ADJUDICATE_ITEM} == set(Action)
    wrong = [f"{action.value} × {name}: expected {expected}"
             for action, row in EXPECTED.items() for name, expected in zip(IDENTITIES, row, strict=True)
             if allowed(who[name], action) != expected]
    assert wrong == []


def test_object_scopes(world) -> None:  # type: ignore[no-untyped-def]
    mine = world.assignments(world.expert)[0]
    assert allowed(world.expert, Action.SCORE, mine)
    for other in (world.other_expert, world.lead, world.admin, AnonymousUser()):
        assert not allowed(other, Action.SCORE, mine)  # blind scoring: not even an admin scores for an expert
    from casereview.models import CaseReview
    from casereview.services import review_cycle_open

    review_cycle_open(panel=world.catholic, name="Scope review", user=world.lead)
    review = CaseReview.objects.filter(expert=world.expert).first()
    assert allowed(world.expert, Action.REVIEW_CASE, review)
    for other in (world.other_expert, world.lead, world.admin, AnonymousUser()):
        assert not allowed(other, Action.REVIEW_CASE, review)  # blind review: nobody reviews for another
    assert allowed(world.lead, Action.MANAGE_PANEL_WORK, world.catholic)
    assert not allowed(world.other_lead, Action.MANAGE_PANEL_WORK, world.catholic)
    assert not allowed(world.expert, Action.MANAGE_PANEL_WORK, world.catholic)
    assert allowed(world.admin, Action.MANAGE_PANEL_WORK, world.catholic)
    assert allowed(world.lead, Action.ADJUDICATE, world.catholic)
    assert not allowed(world.other_lead, Action.ADJUDICATE, world.catholic)
    assert panels_led(world.admin) is None and panels_led(world.lead) == {world.catholic.pk} | set(
        Panel.objects.filter(lead=world.lead).values_list("pk", flat=True))
    assert panels_led(AnonymousUser()) == set()


def test_an_adjudicator_adjudicates_the_panels_they_sit_on_and_an_expert_does_not(world) -> None:  # type: ignore[no-untyped-def]
    sitting = person(User.Role.ADJUDICATOR, tradition=tradition("catholic"))
    world.catholic.members.add(sitting)
    assert panels_adjudicated(sitting) == {world.catholic.pk}
    assert allowed(sitting, Action.ADJUDICATE, world.catholic) and not allowed(sitting, Action.ADJUDICATE, world.orthodox)
    assert not allowed(world.expert, Action.ADJUDICATE, world.catholic)  # a member, but an Expert
    assert not allowed(sitting, Action.MANAGE_PANEL_WORK, world.catholic)  # reopening is the lead's


def test_a_case_text_is_read_unless_held_out_and_its_history_by_its_traditions_lead(world) -> None:  # type: ignore[no-untyped-def]
    case = CaseFactory(tradition=world.catholic.tradition)
    held = CaseFactory(tradition=world.catholic.tradition, visibility=Visibility.HELD_OUT)
    superuser = User.objects.create_superuser(email="scope-root@faithbench.test", password="x")
    assert allowed(world.expert, Action.READ_CASE_TEXT, case) and allowed(world.lead, Action.READ_CASE_TEXT, case)
    staff = User.objects.create_user(email="scope-staff@faithbench.test", password="x", is_staff=True)
    assert not allowed(world.lead, Action.READ_CASE_TEXT, held) and not allowed(staff, Action.READ_CASE_TEXT, held)
    assert allowed(superuser, Action.READ_CASE_TEXT, held)
    assert allowed(world.lead, Action.VIEW_CASE_HISTORY, case) and allowed(world.admin, Action.VIEW_CASE_HISTORY, case)
    assert not allowed(world.other_lead, Action.VIEW_CASE_HISTORY, case)  # leads another tradition's panel
    assert not allowed(world.expert, Action.VIEW_CASE_HISTORY, case)


# --- the disagreements of the earlier checks ---------------------------------------------------------------


def test_the_admin_role_without_the_staff_flag_is_saved_with_it(who) -> None:  # type: ignore[no-untyped-def]
    # Before: calibration, judge and Delphi pages asked for the staff flag (403) while cycle management and the
    # held-out cases asked for the role (allowed). Now the role always carries the flag, for Django's admin too.
    user = who["role_admin"]
    user.refresh_from_db()
    assert user.is_staff
    user.is_staff = False
    user.save(update_fields=["is_staff"])
    user.refresh_from_db()
    assert user.is_staff
    client = Client()
    client.force_login(user)
    assert client.get(reverse("calibration:index")).status_code == 200
    assert client.get(reverse("judge:run_list")).status_code == 200


def test_the_migration_gives_old_admin_rows_the_staff_flag(who) -> None:  # type: ignore[no-untyped-def]
    User.objects.filter(pk=who["role_admin"].pk).update(is_staff=False)  # a row written before the rule
    migration = importlib.import_module("accounts.migrations.0004_admins_are_staff")
    migration.forwards(apps, None)
    assert User.objects.get(pk=who["role_admin"].pk).is_staff


def test_an_expert_who_leads_a_panel_is_a_lead_everywhere(who) -> None:  # type: ignore[no-untyped-def]
    # Before: the reassignment list and the adjudication queue let them in, the reopen list (403) and the
    # navigation did not, and their sign-in needed no second factor although they reopen others' work.
    lead = who["panel_lead"]
    assert lead.requires_mfa
    assert not who["expert"].requires_mfa
    client = Client()
    client.force_login(lead)
    for name in ("annotations:lead", "annotations:lead_assignments", "calibration:adjudication_queue"):
        assert client.get(reverse(name)).status_code == 200, name
    nav = client.get(reverse("home")).content.decode()
    assert reverse("annotations:lead") in nav and reverse("calibration:adjudication_queue") in nav
    assert f'href="{reverse("calibration:index")}"' not in nav


def test_held_out_cases_are_for_superusers_in_pages_and_admin_alike(who) -> None:  # type: ignore[no-untyped-def]
    # Before: the pages showed held-out cases to the Admin role, the admin site only to superusers.
    held_out = CaseFactory(visibility=Visibility.HELD_OUT)
    public = CaseFactory(visibility=Visibility.PUBLIC)
    assert set(cases_visible_to(who["superuser"])) >= {held_out, public}
    for name in ("role_admin", "staff", "expert"):
        visible = set(cases_visible_to(who[name]))
        assert public in visible and held_out not in visible, name


def test_an_inactive_admin_is_refused_even_with_a_live_session(who) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(who["superuser"])
    User.objects.filter(pk=who["superuser"].pk).update(is_active=False)
    response = client.get(reverse("calibration:index"))
    assert response.status_code in (302, 403)
    assert not response.headers.get("Location", "").startswith("/calibration")


def test_navigation_offers_exactly_what_the_policy_allows(who) -> None:  # type: ignore[no-untyped-def]
    links = {Action.MANAGE_CALIBRATION: reverse("calibration:index"), Action.VIEW_JUDGE_OUTPUT: reverse("judge:run_list"),
             Action.LEAD: reverse("annotations:lead"), Action.ADJUDICATE: reverse("calibration:adjudication_queue")}
    for name in ("expert", "adjudicator", "panel_lead", "staff", "role_admin"):
        client = Client()
        client.force_login(who[name])
        page = client.get(reverse("home")).content.decode()
        for action, url in links.items():
            assert (f'href="{url}"' in page) == allowed(who[name], action), (name, action)


def test_an_item_is_decided_by_its_panels_adjudicators_never_by_its_own_raters(world) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    sitting = person(User.Role.ADJUDICATOR, tradition=tradition("catholic"))
    world.catholic.members.add(sitting)
    item = SimpleNamespace(panel_id=world.catholic.pk, rater_ids={world.expert.pk})
    assert allowed(world.lead, Action.ADJUDICATE_ITEM, item) and allowed(sitting, Action.ADJUDICATE_ITEM, item)
    assert allowed(world.admin, Action.ADJUDICATE_ITEM, item)
    assert not allowed(world.other_lead, Action.ADJUDICATE_ITEM, item)  # another panel's lead
    assert not allowed(world.expert, Action.ADJUDICATE_ITEM, item) and not allowed(AnonymousUser(), Action.ADJUDICATE_ITEM, item)
    rated_by_lead = SimpleNamespace(panel_id=world.catholic.pk, rater_ids={world.lead.pk})
    assert not allowed(world.lead, Action.ADJUDICATE_ITEM, rated_by_lead)  # a rater never decides their own item
    rated_by_admin = SimpleNamespace(panel_id=world.catholic.pk, rater_ids={world.admin.pk})
    assert not allowed(world.admin, Action.ADJUDICATE_ITEM, rated_by_admin)


def test_the_two_factor_rule_is_asked_of_the_policy_which_asks_the_rule_accounts_registered(world, settings) -> None:  # type: ignore[no-untyped-def]
    from access import policy
    from accounts.mfa import mfa_satisfied as accounts_rule

    settings.ACCOUNTS_MFA_REQUIRED = True
    assert policy.mfa_satisfied(world.admin) is False  # an admin without TOTP: the accounts rule, asked by access
    assert policy.mfa_satisfied(world.expert) is True
    asked: list[object] = []
    policy.mfa_rule_register(lambda user: bool(asked.append(user)))
    try:
        assert policy.mfa_satisfied(world.expert) is False and asked == [world.expert]
    finally:
        policy.mfa_rule_register(accounts_rule)
