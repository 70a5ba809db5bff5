"""Who may do what: the one authorization policy.

Views, API permissions, the admin and templates ask this module and nothing else. Three kinds of user:

* **admin** — active and any of: the Admin role, Django's staff flag, superuser. (`User.save` keeps the
  staff flag on for the Admin role and superusers, so Django's admin site agrees.) Admins run the
  calibration, the judge, Delphi studies and reports. Held-out cases (their text) are for superusers
  only, in the pages and in the admin alike.
* **lead** — active and the Adjudicator role, or the lead of at least one panel whatever their role. Leads
  see the lead pages, scoped to their panels.
* **expert** — anyone else who is signed in: their own queue, their own assignments, the Delphi studies
  they sit on, their account.

Object scope: an *assignment* is scored by its expert only (nobody else, admins included — blind scoring);
a *panel*'s finished work is reopened and its open work reassigned by its lead (or an admin); a panel's
items are adjudicated by its lead, the Adjudicator-role members of that panel, or an admin (the item's own
raters never — `calibration.adjudication.selectors` applies that part, which needs the item's scores); a
*Delphi study* is seen by its panelists and admins; an *API token* is handled by its owner; a *test case*'s text
is read by anyone shown the case unless it is held out (superusers only), and its review history by admins and the
leads of a panel of its tradition.

The API's one permission (`ApiPermission`, the REST framework's default in settings, so no view lists it): the
view's `policy_action` (default USE_API) for the user, and, for a request signed by an API token, the scope the
view names in `token_scope`. Two-factor sign-in: `mfa_satisfied` asks the rule that `accounts` registers at start-up
(`mfa_rule_register`; access sits below accounts and imports none of it); the web middleware and the token
authentication ask it here.

`URL_ACTIONS` names the action every URL of the project needs; a test walks the whole URL configuration
and fails on a URL that is not there (tests/access/test_permission_matrix.py).
"""
from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from typing import Any, TypedDict

from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission
from rest_framework.request import Request


class Action(StrEnum):
    PUBLIC = "public"                        # anyone: sign-in pages, invitation links, home, the API schema
    USE_ACCOUNT = "use_account"              # any signed-in user: profile, API tokens, own queue, Delphi list
    SCORE = "score"                          # object: an assignment — its expert only
    REVIEW_CASE = "review_case"              # object: a case review or TheoBERT audit — its expert only
    LEAD = "lead"                            # the lead pages (their rows are scoped by panel)
    MANAGE_PANEL_WORK = "manage_panel_work"  # object: a panel — reopen finished work, reassign open work
    ADJUDICATE = "adjudicate"                # the queue; object: a panel — decide its items
    ADJUDICATE_ITEM = "adjudicate_item"      # object: an item (its panel_id, rater_ids) — never by its own raters
    TAKE_PART_IN_DELPHI = "delphi_take_part"  # object: a Delphi study — its panelists (and admins)
    RUN_DELPHI = "delphi_run"                # create, close rounds, approve, rescore
    MANAGE_CALIBRATION = "manage_calibration"  # panels, draws, cycles, progress, gold labels, reports
    VIEW_JUDGE_OUTPUT = "view_judge_output"  # judge runs, scores, leaderboard (never experts: blind scoring)
    VIEW_CALIBRATED = "view_calibrated"      # the expert-calibrated leaderboard: admins and panel leads, never experts
    VIEW_CONDITIONS = "view_conditions"      # condition leaderboards and deltas (issue 26): admins and leads, never experts
    VIEW_HELD_OUT = "view_held_out"          # held-out test cases' text: superusers (contamination control)
    READ_CASE_TEXT = "read_case_text"        # object: a test case — its text, unless held out (then VIEW_HELD_OUT)
    VIEW_CASE_HISTORY = "view_case_history"  # a case's versions and reviews; object: a test case — its tradition's lead
    USE_API = "use_api"                      # the REST API (with a token: the token's scope as well)
    ADMIN_SITE = "admin_site"                # Django's admin site (its own model permissions apply on top)
    VIEW_AUDIT = "view_audit"                # the audit trail and its CSV export: admins only
    READ_HELP = "read_help"                  # object: a help topic's audience ("expert", "lead", else admins only)


# --- who is who ------------------------------------------------------------------------------------------


def _active(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_active", False))


def is_admin(user: Any) -> bool:
    """The one definition of an administrator (the Admin role, staff or superuser, and active)."""
    return _active(user) and bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False)
                                  or getattr(user, "role", None) == "admin")


def is_lead(user: Any) -> bool:
    """An Adjudicator, or the lead of any panel whatever their role (admins are not leads by this test)."""
    if not _active(user):
        return False
    return getattr(user, "role", None) == "adjudicator" or user.led_panels.exists()


def panels_led(user: Any) -> set[int] | None:
    """Ids of the panels whose finished and open work `user` manages; None means every panel (admins)."""
    if is_admin(user):
        return None
    if not _active(user):
        return set()
    return set(user.led_panels.values_list("id", flat=True))


def panels_adjudicated(user: Any) -> set[int] | None:
    """Ids of the panels whose items `user` may adjudicate (led, or sat on as an Adjudicator); None: every panel."""
    led = panels_led(user)
    if led is not None and _active(user) and getattr(user, "role", None) == "adjudicator":
        led |= set(user.panels.values_list("id", flat=True))
    return led


# --- the rules -------------------------------------------------------------------------------------------


def _scores(user: Any, assignment: Any) -> bool:
    return _active(user) and assignment is not None and assignment.expert_id == user.pk


def _manages_panel(user: Any, panel: Any) -> bool:
    if is_admin(user):
        return True
    return _active(user) and panel is not None and panel.lead_id == user.pk


def _adjudicates(user: Any, panel: Any) -> bool:
    if panel is None:  # the queue itself
        return is_admin(user) or is_lead(user)
    panels = panels_adjudicated(user)
    return panels is None or panel.pk in panels


def adjudicates_item(user: Any, item: Any, *, panels: set[int] | None) -> bool:
    """Whether `user` may decide `item` (read by name: `panel_id`, `rater_ids`), given `panels_adjudicated(user)`.

    Panel leads, Adjudicators of the item's panel and admins — never one of the item's own raters (withdrawn ones
    too: they saw the item). A queue computes `panels` once and asks this for each of its items.
    """
    if not _active(user) or item is None or user.pk in item.rater_ids:
        return False
    return panels is None or item.panel_id in panels


def _held_out_reader(user: Any) -> bool:
    return _active(user) and bool(getattr(user, "is_superuser", False))


def _reads_case_text(user: Any, case: Any) -> bool:
    if case is None:  # every case's text, held-out ones included
        return _held_out_reader(user)
    return not case.is_held_out or _held_out_reader(user)


def _sees_case_history(user: Any, case: Any) -> bool:
    if is_admin(user):
        return True
    if case is None:  # the lead pages
        return is_lead(user)
    return _active(user) and user.led_panels.filter(tradition_id=case.tradition_id).exists()


def _reads_help(user: Any, audience: Any) -> bool:
    """Help topics by role: every signed-in user reads the experts' topics, leads theirs too, admins all (a topic
    with no stated audience is for admins: a new page names models and judges until someone says otherwise)."""
    if audience is None:  # the help index itself
        return _active(user)
    if audience == "expert":
        return _active(user)
    if audience == "lead":
        return is_admin(user) or is_lead(user)
    return is_admin(user)


def _delphi_panelist(user: Any, study: Any) -> bool:
    if study is None:
        return _active(user)
    return is_admin(user) or (_active(user) and study.panelists.filter(pk=user.pk).exists())


RULES: dict[Action, Callable[[Any, Any], bool]] = {
    Action.PUBLIC: lambda user, obj: True,
    Action.USE_ACCOUNT: lambda user, obj: _active(user),
    Action.SCORE: _scores,
    Action.REVIEW_CASE: _scores,
    Action.LEAD: lambda user, obj: is_admin(user) or is_lead(user),
    Action.MANAGE_PANEL_WORK: _manages_panel,
    Action.ADJUDICATE: _adjudicates,
    Action.ADJUDICATE_ITEM: lambda user, obj: adjudicates_item(user, obj, panels=panels_adjudicated(user)),
    Action.TAKE_PART_IN_DELPHI: _delphi_panelist,
    Action.RUN_DELPHI: lambda user, obj: is_admin(user),
    Action.MANAGE_CALIBRATION: lambda user, obj: is_admin(user),
    Action.VIEW_JUDGE_OUTPUT: lambda user, obj: is_admin(user),
    Action.VIEW_CALIBRATED: lambda user, obj: is_admin(user) or is_lead(user),
    Action.VIEW_CONDITIONS: lambda user, obj: is_admin(user) or is_lead(user),
    Action.VIEW_HELD_OUT: lambda user, obj: _held_out_reader(user),
    Action.READ_CASE_TEXT: _reads_case_text,
    Action.VIEW_CASE_HISTORY: _sees_case_history,
    Action.USE_API: lambda user, obj: is_admin(user),
    Action.ADMIN_SITE: lambda user, obj: is_admin(user),
    Action.VIEW_AUDIT: lambda user, obj: is_admin(user),
    Action.READ_HELP: _reads_help,
}


def allowed(user: Any, action: Action, obj: Any = None) -> bool:
    """Whether `user` may do `action` (on `obj`, for the object-scoped actions)."""
    return RULES[action](user, obj)


def require(user: Any, action: Action, obj: Any = None) -> None:
    """Raise PermissionDenied (403) unless allowed. Views that must not confirm an object exists raise 404."""
    if not allowed(user, action, obj):
        raise PermissionDenied


def policy_required(action: Action) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """View decorator for actions without an object: anonymous users sign in first, the rest get 403 if refused."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if action is not Action.PUBLIC and not request.user.is_authenticated:
                from django.contrib.auth.views import (
                    redirect_to_login,  # its forms need the user model loaded
                )

                return redirect_to_login(request.get_full_path())
            require(request.user, action)
            return view(request, *args, **kwargs)

        wrapped.policy_action = action  # type: ignore[attr-defined]
        return wrapped

    return decorate


class PolicyPermission(BasePermission):
    """DRF: the view's `policy_action` (default USE_API) must be allowed for the request's user."""

    message = "You may not use this endpoint."

    def has_permission(self, request: Request, view: Any) -> bool:
        return allowed(request.user, getattr(view, "policy_action", Action.USE_API))


def view_token_scope(view: Any, method: str) -> str | None:
    """The scope a token needs for `method` on `view` (`token_scope`: a scope, or a dict by HTTP method)."""
    declared = getattr(view, "token_scope", None)
    if isinstance(declared, dict):
        return declared.get("GET" if method in ("HEAD", "OPTIONS") else method)
    return declared


class TokenHasScope(BasePermission):
    """A token request needs the view's `token_scope` for its method; a view that declares none refuses tokens.

    A token is the request's `auth` when it has `has_scope` (accounts.ApiToken, read by name); a session (or no)
    authentication has none, and its user's own rules apply.
    """

    message = "This token lacks the scope this endpoint needs."

    def has_permission(self, request: Request, view: Any) -> bool:
        token = request.auth
        if not hasattr(token, "has_scope"):
            return True  # session (or no) authentication: scopes do not apply
        scope = view_token_scope(view, request.method or "GET")
        if scope is None:
            return False
        if not token.has_scope(scope):
            self.message = f"This token lacks the '{scope}' scope this endpoint needs."
            return False
        return True


class ApiPermission(BasePermission):
    """The API's permission, composed once (settings' DEFAULT_PERMISSION_CLASSES): the policy, then the token scope.

    The first refusal's message is the response's, as when the two were listed side by side.
    """

    message = PolicyPermission.message

    def has_permission(self, request: Request, view: Any) -> bool:
        for part in (PolicyPermission(), TokenHasScope()):
            if not part.has_permission(request, view):
                self.message = part.message
                return False
        return True


# --- two-factor sign-in ----------------------------------------------------------------------------------

_mfa_rule: Callable[[Any], bool] | None = None


def mfa_rule_register(rule: Callable[[Any], bool]) -> None:
    """Install the two-factor rule (accounts registers `accounts.mfa.mfa_satisfied` when the app is ready)."""
    global _mfa_rule
    _mfa_rule = rule


def mfa_satisfied(user: Any) -> bool:
    """Whether `user` meets the two-factor rule (staff, admins and adjudicators need an active TOTP authenticator).

    Raises ImproperlyConfigured when no rule is registered: refusing everyone silently, or letting everyone in,
    would both hide a missing app.
    """
    if _mfa_rule is None:
        raise ImproperlyConfigured("no two-factor rule registered: is 'accounts' in INSTALLED_APPS?")
    return _mfa_rule(user)


class CanContext(TypedDict):
    can: _Can


def can(request: HttpRequest) -> CanContext:
    """Template context: `can.<action>` for the actions without an object (navigation and links)."""
    user = getattr(request, "user", None)
    return {"can": _Can(user)}


class _Can:
    """Evaluated lazily, once per action per request (is_lead queries the database)."""

    def __init__(self, user: Any) -> None:
        self._user = user
        self._cache: dict[str, bool] = {}

    def __getitem__(self, name: str) -> bool:
        if name not in self._cache:
            self._cache[name] = allowed(self._user, Action(name))
        return self._cache[name]

    def __getattr__(self, name: str) -> bool:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except ValueError as exc:
            raise AttributeError(name) from exc


# --- every URL and the action it needs -------------------------------------------------------------------

A = Action
URL_ACTIONS: dict[str, Action] = {
    "home": A.PUBLIC,
    "help": A.USE_ACCOUNT,
    "help_topic": A.USE_ACCOUNT,
    "admin_login_via_allauth": A.PUBLIC,
    "set_language": A.PUBLIC,  # Django's language switcher (POST, CSRF-checked); signed in, it also saves User.language
    "api-schema": A.USE_API,  # the API's description: for those who may use the API (a token of theirs reads it)
    "api-docs": A.USE_API,
    "api-gold-labels": A.USE_API,
    "api-cases": A.USE_API,
    "api-responses": A.USE_API,
    "api-judge-runs": A.USE_API,
    "api-judge-run": A.USE_API,
    "api-judge-run-cancel": A.USE_API,
    "api-judge-run-resume": A.USE_API,
    "api-judge-run-retry": A.USE_API,
    "api-studies": A.USE_API,
    "api-study-ratings": A.USE_API,
    "api-study-report": A.USE_API,
    "api-study-report-bundle": A.USE_API,
    "api-study-report-versions": A.USE_API,
    "api-reports": A.USE_API,
    "api-study-judge-runs": A.USE_API,
    "api-study-judge-run": A.USE_API,
    "api-study-judge-run-cancel": A.USE_API,
    "api-cycle-report": A.USE_API,
    "api-cycle-report-versions": A.USE_API,
    "api-cycle-report-bundle": A.USE_API,
    "api-leaderboard": A.USE_API,
    "api-judge-run-conditions": A.USE_API,
    "evaluations:index": A.PUBLIC,  # the home page again
    "judge:run_list": A.VIEW_JUDGE_OUTPUT,
    "judge:run_detail": A.VIEW_JUDGE_OUTPUT,
    "judge:run_cancel": A.VIEW_JUDGE_OUTPUT,
    "judge:run_start": A.VIEW_JUDGE_OUTPUT,  # admins only, like cancelling; the confirmation shows the cost first
    "judge:run_resume": A.VIEW_JUDGE_OUTPUT,
    "judge:run_retry": A.VIEW_JUDGE_OUTPUT,
    "judge:run_repeat": A.VIEW_JUDGE_OUTPUT,
    "judge:leaderboard": A.VIEW_JUDGE_OUTPUT,
    "judge:conditions": A.VIEW_CONDITIONS,
    "judge:conditions_export": A.VIEW_CONDITIONS,
    "calibrated:index": A.VIEW_CALIBRATED,
    "calibrated:board": A.VIEW_CALIBRATED,
    "calibrated:compute": A.MANAGE_CALIBRATION,
    "calibrated:progress": A.VIEW_CALIBRATED,
    "calibrated:export": A.VIEW_CALIBRATED,
    "calibrated:budget": A.VIEW_CALIBRATED,
    "calibrated:budget_export": A.VIEW_CALIBRATED,
    "calibrated:history": A.VIEW_CALIBRATED,
    "calibrated:history_export": A.VIEW_CALIBRATED,
    "api-calibrated": A.USE_API,
    "api-calibrated-versions": A.USE_API,
    "api-calibrated-bundle": A.USE_API,
    "accounts:invitation_accept": A.PUBLIC,
    "accounts:profile": A.USE_ACCOUNT,
    "accounts:api_tokens": A.USE_ACCOUNT,
    "accounts:api_token_revoke": A.USE_ACCOUNT,
    "accounts:my_data": A.USE_ACCOUNT,  # one's own personal data as JSON (Art. 15/20): no id in the URL
    "audit_log": A.VIEW_AUDIT,
    "audit_log_export": A.VIEW_AUDIT,
    "accounts:inbox": A.USE_ACCOUNT,  # one's own notifications only (another's id: 404)  # object: the token — its owner only (404 for anyone else)
    "annotations:queue": A.USE_ACCOUNT,
    "annotations:next": A.USE_ACCOUNT,
    "annotations:item": A.SCORE,
    "annotations:draft": A.SCORE,
    "annotations:heartbeat": A.SCORE,
    "annotations:submit": A.SCORE,
    "annotations:skip": A.SCORE,
    "annotations:undo": A.SCORE,
    "review:queue": A.USE_ACCOUNT,
    "review:case": A.REVIEW_CASE,
    "review:audit": A.REVIEW_CASE,
    "review:cycles": A.LEAD,
    "review:cycle": A.MANAGE_PANEL_WORK,
    "review:cycle_report": A.MANAGE_PANEL_WORK,
    "review:flag": A.MANAGE_PANEL_WORK,
    "review:case_history": A.VIEW_CASE_HISTORY,
    "review:theobert": A.MANAGE_CALIBRATION,
    "review:difficulty": A.MANAGE_CALIBRATION,
    "annotations:lead": A.LEAD,
    "annotations:lead_assignments": A.LEAD,
    "annotations:reopen": A.MANAGE_PANEL_WORK,
    "annotations:reassign": A.MANAGE_PANEL_WORK,
    "calibration:index": A.MANAGE_CALIBRATION,
    "calibration:panels": A.MANAGE_CALIBRATION,
    "calibration:draw": A.MANAGE_CALIBRATION,
    "calibration:cycle": A.MANAGE_CALIBRATION,
    "calibration:gold_export": A.MANAGE_CALIBRATION,
    "calibration:report": A.MANAGE_CALIBRATION,
    "calibration:report_compute": A.MANAGE_CALIBRATION,
    "calibration:report_progress": A.MANAGE_CALIBRATION,
    "calibration:report_export": A.MANAGE_CALIBRATION,
    "calibration:studies": A.MANAGE_CALIBRATION,
    "calibration:study_report": A.MANAGE_CALIBRATION,
    "calibration:study_upload": A.MANAGE_CALIBRATION,
    "calibration:study_upload_mapping": A.MANAGE_CALIBRATION,
    "calibration:study_upload_confirm": A.MANAGE_CALIBRATION,
    "calibration:study_report_compute": A.MANAGE_CALIBRATION,
    "calibration:study_report_progress": A.MANAGE_CALIBRATION,
    "calibration:study_report_export": A.MANAGE_CALIBRATION,
    "calibration:study_judge": A.MANAGE_CALIBRATION,
    "calibration:validation": A.VIEW_JUDGE_OUTPUT,
    "calibration:validation_export": A.VIEW_JUDGE_OUTPUT,
    "calibration:validation_check_run": A.VIEW_JUDGE_OUTPUT,
    "calibration:translation_equivalence": A.VIEW_JUDGE_OUTPUT,
    "calibration:translation_equivalence_export": A.VIEW_JUDGE_OUTPUT,
    "calibration:pairwise_start": A.VIEW_JUDGE_OUTPUT,
    "calibration:pairwise_run": A.VIEW_JUDGE_OUTPUT,
    "calibration:pairwise_retry": A.VIEW_JUDGE_OUTPUT,
    "calibration:study_judge_cancel": A.MANAGE_CALIBRATION,
    "calibration:progress": A.MANAGE_CALIBRATION,
    "calibration:panel_health_index": A.LEAD,
    "calibration:panel_health": A.MANAGE_PANEL_WORK,  # object: the panel — its lead and admins (404 for anyone else)
    "calibration:panel_health_export": A.MANAGE_PANEL_WORK,
    "calibration:my_calibration": A.USE_ACCOUNT,  # one's own feedback only, closed cycles only
    "calibration:adjudication_queue": A.ADJUDICATE,
    "calibration:adjudication_item": A.ADJUDICATE,
    "calibration:adjudication_reopen": A.ADJUDICATE,
    "delphi:index": A.USE_ACCOUNT,
    "delphi:create": A.RUN_DELPHI,
    "delphi:study": A.TAKE_PART_IN_DELPHI,
    "delphi:respond": A.TAKE_PART_IN_DELPHI,
    "delphi:round_close": A.RUN_DELPHI,
    "delphi:study_close": A.RUN_DELPHI,
    "delphi:approve": A.RUN_DELPHI,
    "delphi:rescore": A.RUN_DELPHI,
    "delphi:report_json": A.RUN_DELPHI,
}
# URLs of other packages: allauth's account and MFA pages (by their views' package) are the sign-in machinery,
# each asking for a signed-in user where it needs one; everything under Django's admin site (by route) is for
# admins, with the admin's own model permissions on top.
MODULE_ACTIONS: dict[str, Action] = {"allauth.": A.PUBLIC}
ROUTE_ACTIONS: dict[str, Action] = {"admin/": A.ADMIN_SITE}


def url_action(*, name: str | None, view_module: str, route: str = "") -> Action | None:
    """The action a URL needs: by its name, else its view's package or its route; None when not covered."""
    if name and name in URL_ACTIONS:
        return URL_ACTIONS[name]
    for prefix, action in MODULE_ACTIONS.items():
        if view_module.startswith(prefix):
            return action
    for prefix, action in ROUTE_ACTIONS.items():
        if route.startswith(prefix):
            return action
    return None
