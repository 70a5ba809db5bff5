"""The help pages: the user documentation (docs/*.md) served to signed-in users at /help/ (config/docs.py)."""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from access.policy import Action, policy_required
from config.docs import docs_render, docs_topic, docs_topics


@policy_required(Action.USE_ACCOUNT)
def help_index(request: HttpRequest) -> HttpResponse:
    """Every documentation page, by title."""
    return render(request, "help/index.html", {"topics": docs_topics()})


@policy_required(Action.USE_ACCOUNT)
def help_topic(request: HttpRequest, topic: str) -> HttpResponse:
    """One documentation page, docs/<topic>.md, rendered."""
    found = docs_topic(topic)
    if found is None:
        raise Http404(f"No help page {topic!r}.")
    return render(request, "help/topic.html", {"topic": found, "body": docs_render(found)})
