"""Template context of the accounts app."""
from __future__ import annotations

from typing import TypedDict

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .notifications import unread_count


class NotificationsContext(TypedDict):
    unread_notifications: int | SimpleLazyObject  # a lazy int for a signed-in user


def notifications(request: HttpRequest) -> NotificationsContext:
    """`unread_notifications`: counted only when a template uses it (one query), 0 for visitors."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_notifications": 0}
    return {"unread_notifications": SimpleLazyObject(lambda: unread_count(user))}
