"""The help pages: the user documentation (docs/*.md) served to signed-in users at /help/ (config/docs.py), by role.

Experts read the experts' topics only, and none of those names an evaluated model, a judge or another person
(blind scoring, docs/scoring-and-blinding.md); leads read the leads' topics as well; admins read everything. A
docs page not listed here is for admins (`access.policy`'s READ_HELP rule), so a new page is never shown to experts
by accident. A topic the reader may not open is a 404 (its existence is not confirmed) and links to it are text.
"""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from access.policy import Action, allowed, policy_required
from config.docs import Topic, docs_render, docs_topic, docs_topics

# Who each topic is written for (tests/test_help_pages.py checks the experts' topics name no model, judge or person).
HELP_AUDIENCE: dict[str, str] = {
    # experts (and everyone signed in)
    "scoring-and-blinding": "expert",
    "experts-and-leads": "expert",
    "case-review": "expert",
    "notifications": "expert",
    "accounts": "expert",
    "data-protection": "expert",
    # panel leads (and admins)
    "adjudication": "lead",
    "delphi": "lead",  # its re-scoring part describes judge runs and the leaderboard
    "reports": "lead",
    "statistics": "lead",
    "calibrated-leaderboard": "lead",
    "calibrated-leaderboard-statistics": "lead",
    "variance-budget": "lead",
}


def help_audience(slug: str) -> str:
    """Who a topic is for: "expert", "lead" or "admin" (the default)."""
    return HELP_AUDIENCE.get(slug, "admin")


def help_audiences_for(user: Any) -> frozenset[str]:
    """The audiences whose topics `user` may read (asked once per request: is_lead may query)."""
    return frozenset(audience for audience in ("expert", "lead", "admin")
                     if allowed(user, Action.READ_HELP, audience))


def help_topics_for(user: Any) -> list[Topic]:
    """The topics `user` may read, by title."""
    audiences = help_audiences_for(user)
    return [topic for topic in docs_topics() if help_audience(topic.slug) in audiences]


@policy_required(Action.USE_ACCOUNT)
def help_index(request: HttpRequest) -> HttpResponse:
    """The documentation pages this person may read, by title."""
    return render(request, "help/index.html", {"topics": help_topics_for(request.user)})


@policy_required(Action.USE_ACCOUNT)
def help_topic(request: HttpRequest, topic: str) -> HttpResponse:
    """One documentation page, docs/<topic>.md, rendered (404 when unknown or not for this reader's role)."""
    found = docs_topic(topic)
    audiences = help_audiences_for(request.user)
    if found is None or help_audience(found.slug) not in audiences:
        raise Http404(f"No help page {topic!r}.")

    def readable(slug: str) -> bool:
        return help_audience(slug) in audiences

    return render(request, "help/topic.html", {"topic": found, "body": docs_render(found, readable=readable)})
