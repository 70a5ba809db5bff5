"""The home page: what the instrument is, and for a signed-in person what waits for them, by role.

An expert sees their open items per cycle and the Delphi rounds that wait for their answer; a lead, the items
waiting for adjudication and their panels' progress; an admin, the latest judge runs and report versions. A
person with several roles sees each part. Nothing here names an evaluated model (experts read this page).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from access.policy import Action, allowed, panels_led
from annotations.models import Assignment, CalibrationCycle, Panel
from calibration.adjudication.selectors import adjudication_queue
from calibration.models import Study
from delphi.models import DelphiRound
from delphi.selectors import rounds_awaiting_answer
from evaluations.models import JudgeRun
from evaluations.selectors import rubric_active
from evidence.models import Snapshot

OPEN_STATUSES = [Assignment.Status.PENDING, Assignment.Status.DRAFT]
RECENT = 5


REPORT_KINDS = [Snapshot.Kind.CYCLE_REPORT, Snapshot.Kind.STUDY_REPORT, Snapshot.Kind.CALIBRATED]


@dataclass(frozen=True)
class RecentReport:
    """A recent report version, and its study when it is a study's (evidence names studies by id)."""

    snapshot: Snapshot
    study: Study | None


@dataclass
class HomeParts:
    queue: list[Any] = field(default_factory=list)       # per open cycle: name, open items
    delphi: list[DelphiRound] = field(default_factory=list)         # open rounds without the person's answer
    adjudication_waiting: int | None = None                         # leads: items waiting for a decision
    panels: list[Any] = field(default_factory=list)      # leads: their panels' progress in open cycles
    runs: list[JudgeRun] = field(default_factory=list)              # admins
    reports: list[RecentReport] = field(default_factory=list)     # admins


def home_parts(user: Any) -> HomeParts:
    parts = HomeParts()
    parts.queue = list(
        Assignment.objects.filter(expert=user, status__in=OPEN_STATUSES, cycle__status=CalibrationCycle.Status.OPEN)
        .values("cycle__name").annotate(open=Count("id")).order_by("cycle__name"))
    parts.delphi = rounds_awaiting_answer(expert=user)
    if allowed(user, Action.LEAD):
        parts.adjudication_waiting = len(adjudication_queue(user=user))
        led = panels_led(user)
        panels = Panel.objects.all() if led is None else Panel.objects.filter(pk__in=led)
        parts.panels = list(
            panels.annotate(
                # First assignments only: re-served (test–retest) items are not work to count.
                total=Count("assignments", filter=Q(assignments__cycle__status=CalibrationCycle.Status.OPEN,
                                                    assignments__retest_of__isnull=True)
                            & ~Q(assignments__status=Assignment.Status.WITHDRAWN)),
                done=Count("assignments", filter=Q(assignments__cycle__status=CalibrationCycle.Status.OPEN,
                                                   assignments__retest_of__isnull=True,
                                                   assignments__status__in=[Assignment.Status.SUBMITTED,
                                                                            Assignment.Status.SKIPPED])),
            ).filter(total__gt=0).values("name", "total", "done").order_by("name"))
    if allowed(user, Action.VIEW_JUDGE_OUTPUT):
        parts.runs = list(JudgeRun.objects.order_by("-created_at")[:RECENT])
    if allowed(user, Action.MANAGE_CALIBRATION):
        snapshots = list(Snapshot.objects.filter(kind__in=REPORT_KINDS).select_related("cycle")
                         .defer("payload", "rater_key").order_by("-requested_at", "-id")[:RECENT])
        studies = Study.objects.in_bulk([s.study_id for s in snapshots if s.study_id])  # named by id in a snapshot
        parts.reports = [RecentReport(s, studies.get(s.study_id) if s.study_id else None) for s in snapshots]
    return parts


def home(request: HttpRequest) -> HttpResponse:
    """Landing page; for a signed-in person, what waits for them."""
    if not request.user.is_authenticated:
        return render(request, "home.html", {"rubric": None})
    return render(request, "home.html", {"rubric": rubric_active(), "parts": home_parts(request.user)})
