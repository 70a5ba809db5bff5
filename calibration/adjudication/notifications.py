"""Tell a panel's lead when an item of their panel starts waiting for adjudication (at most one unread
notice per lead and cycle: "items of cycle X wait for you")."""
from __future__ import annotations

from typing import Any

from django.urls import reverse

from accounts.models import Notification, User
from accounts.notifications import notify
from annotations.models import CycleItem, Panel

from .selectors import item_states


def on_assignment_finished(*, item_id: int, **_kwargs: Any) -> None:
    state = item_states(item_ids=[item_id]).get(item_id)
    if state is None or not state.needs_adjudication or state.decided:
        return
    item = CycleItem.objects.select_related("cycle").get(pk=item_id)
    lead_id = Panel.objects.filter(pk=state.panel_id).values_list("lead_id", flat=True).first()
    if lead_id is None or lead_id in state.rater_ids:
        return
    notify(users=User.objects.filter(pk=lead_id), kind=Notification.Kind.ADJUDICATION,
           text=f"Items of “{item.cycle.name}” wait for your adjudication: the experts disagree.",
           link=reverse("calibration:adjudication_queue"), key=f"adjudication:{item.cycle_id}")
