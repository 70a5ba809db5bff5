"""Notifications: an inbox per person, and email — at once, in a daily digest, or not at all (their choice).

The services that make something happen call `notify` (new assignments, a Delphi round opened, items waiting
for adjudication, a report ready); `manage.py notify_due` adds what time makes due (Delphi reminders) and
`manage.py send_digests` sends the daily digests. Texts never name an evaluated model or another expert:
experts read them, and scoring is blind.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, ngettext

from .models import Notification, User

logger = logging.getLogger(__name__)
SUBJECT_PREFIX = "[FaithBench] "


def notify(*, users: Iterable[User], kind: str, text: str, link: str = "", key: str = "",
           once: bool = False) -> list[Notification]:
    """One notification per user; with a `key`, none for a user who still has an unread one with that key (or,
    with `once`, any one with that key: a reminder is sent once).

    Emails to people who want them at once go after the surrounding transaction commits (never for work that
    was rolled back); a failed email is logged and left for the digest command to retry.
    """
    users = [u for u in users if u is not None and u.is_active]
    if not users:
        return []
    if key:
        existing = Notification.objects.filter(user__in=users, key=key)
        if not once:
            existing = existing.filter(read_at__isnull=True)
        waiting = set(existing.values_list("user_id", flat=True))
        users = [u for u in users if u.pk not in waiting]
    created = Notification.objects.bulk_create(
        Notification(user=u, kind=kind, text=text[:300], link=link[:300], key=key[:120]) for u in users)
    immediate = [n.pk for n, u in zip(created, users, strict=True) if u.email_mode == User.EmailMode.IMMEDIATE]
    if immediate:
        transaction.on_commit(lambda: notifications_email(ids=immediate))
    return created


def _absolute(link: str) -> str:
    return f"{str(settings.SITE_URL).rstrip('/')}{link}" if link.startswith("/") else link


def _language(user: User) -> str:
    """The language an email to `user` is written in: their interface language, else the site's."""
    return user.language or settings.LANGUAGE_CODE


def _inbox_line() -> str:
    return "\n" + gettext("Your notifications: %(url)s") % {"url": _absolute("/accounts/inbox/")} + "\n"


def notifications_email(*, ids: list[int]) -> int:
    """Email each of these notifications on its own (the immediate mode); returns how many were sent. The frame is
    in the recipient's interface language; the notification's own text is stored English."""
    sent = 0
    for note in Notification.objects.filter(pk__in=ids, emailed_at__isnull=True).select_related("user"):
        with translation.override(_language(note.user)):
            body = f"{note.text}\n\n{_absolute(note.link)}\n" if note.link else f"{note.text}\n"
            body += _inbox_line()
            subject = f"{SUBJECT_PREFIX}{gettext(note.get_kind_display())}"
        try:
            send_mail(subject, body, None, [note.user.email])
        except Exception:  # the inbox has it; the digest command retries
            logger.exception("notification %s: email to user %s failed", note.pk, note.user_id)
            continue
        Notification.objects.filter(pk=note.pk).update(emailed_at=timezone.now())
        sent += 1
    return sent


def digests_send(*, now: datetime | None = None) -> int:
    """One email per person with every notification not yet emailed (digest mode; immediate ones whose email
    failed are retried here too). Returns the number of emails sent."""
    now = now or timezone.now()
    pending = (Notification.objects.filter(emailed_at__isnull=True, user__is_active=True)
               .exclude(user__email_mode=User.EmailMode.NONE).select_related("user").order_by("user_id", "created_at"))
    by_user: dict[int, list[Notification]] = defaultdict(list)
    for note in pending:
        by_user[note.user_id].append(note)
    sent = 0
    for notes in by_user.values():
        user = notes[0].user
        lines = [f"- {n.text}" + (f"\n  {_absolute(n.link)}" if n.link else "") for n in notes]
        with translation.override(_language(user)):
            body = (gettext("What is new for you in FaithBench Calibration (%(count)s):") % {"count": len(notes)}
                    + "\n\n" + "\n".join(lines) + "\n" + _inbox_line())
            subject = SUBJECT_PREFIX + ngettext("%(count)s new", "%(count)s new", len(notes)) % {"count": len(notes)}
        try:
            send_mail(subject, body, None, [user.email])
        except Exception:
            logger.exception("digest to user %s failed", user.pk)
            continue
        Notification.objects.filter(pk__in=[n.pk for n in notes]).update(emailed_at=now)
        sent += 1
    return sent


def notifications_mark_read(*, user: User, ids: Iterable[int] | None = None) -> int:
    """Mark the user's notifications read (all unread ones when `ids` is None); others' ids are ignored."""
    qs = Notification.objects.filter(user=user, read_at__isnull=True)
    if ids is not None:
        qs = qs.filter(pk__in=list(ids))
    return qs.update(read_at=timezone.now())


def unread_count(user: User) -> int:
    return Notification.objects.filter(user=user, read_at__isnull=True).count()
