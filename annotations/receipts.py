"""Exactly-once scoring writes: each write is stored with a receipt under the idempotency key its page sent.

The scoring page makes a key for every write attempt (autosave, submit, skip, undo) and sends the same key when
it retries that attempt (header `Idempotency-Key`; a beacon, which cannot set headers, sends the form field
`idempotency_key`). The scoring services (annotations/services.py) take the key, and while they hold the
assignment's row lock:

* a key not seen before: the write runs and its receipt is stored in the same transaction, so either both
  commit or neither does;
* a key already stored for the same request: nothing runs again; the write answers as it did the first time
  (200), so a retry of a save whose answer was lost (a dropped connection, a 503 after the commit) never meets
  a locked item and never writes a second time;
* a key already stored for another request (other entries, action or item): refused (422) with nothing changed.

"The same request" is the SHA-256 fingerprint of the action, the assignment and what was entered (not the active
seconds, which every attempt reports afresh). A receipt is kept at least `RECEIPT_TTL` (24 h): receipts older than
that are deleted when their owner next submits or skips an item (not on every autosave, which would cost a query
each), and a retry after that is run as a new write.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TypedDict

from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from accounts.models import User

from .models import Assignment, SaveReceipt


class ReceiptResult(TypedDict):
    """What a stored write answered (SaveReceipt.result): the annotation's status and when it was saved."""

    status: str
    saved_at: str  # ISO 8601


RECEIPT_TTL = timedelta(hours=24)
IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_FIELD = "idempotency_key"
_KEY = re.compile(r"[A-Za-z0-9_-]{8,64}")
KEY_REUSED_MESSAGE = (
    f"{IDEMPOTENCY_HEADER}: this key was already used for a different request (other entries or another item). "
    "Nothing was saved; send a new key for a new request."
)


def idempotency_key_clean(value: str | None) -> str:
    """The key as sent, checked: 8–64 letters, digits, '-' or '_' (a UUID fits); '' when none was sent."""
    value = (value or "").strip()
    if value and not _KEY.fullmatch(value):
        raise ValidationError(
            f"{IDEMPOTENCY_HEADER}: expected 8 to 64 letters, digits, '-' or '_' (for example a UUID). Nothing was saved.",
            code="invalid_idempotency_key")
    return value


def save_fingerprint(*, action: str, assignment: Assignment, entries: Mapping[str, object]) -> str:
    """SHA-256 of what a write asked for: its action, its assignment and the entries (canonical JSON; any values)."""
    payload = json.dumps({"action": action, "assignment": assignment.pk, "entries": entries},
                         sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def receipt_replay(*, actor: User, key: str, fingerprint: str) -> SaveReceipt | None:
    """The receipt of the write already stored under `key` for this same request, or None when the key is new.

    The caller holds the assignment's row lock, so a duplicate running at the same time waits and then finds the
    receipt. A key stored for another request is refused (`idempotency_key_reused`)."""
    if not key:
        return None
    receipt = SaveReceipt.objects.filter(user=actor, key=key).first()
    if receipt is None:
        return None
    if receipt.fingerprint != fingerprint:
        raise ValidationError(KEY_REUSED_MESSAGE, code="idempotency_key_reused")
    return receipt


def receipt_store(*, actor: User, key: str, action: str, assignment: Assignment, fingerprint: str,
                  result: ReceiptResult, prune: bool = False) -> SaveReceipt | None:
    """Store the receipt of the write just made under `key` (in the write's transaction); `prune`: also delete the
    actor's receipts older than RECEIPT_TTL.

    The unique (user, key) constraint is the backstop for a duplicate that was not serialised by the row lock (the
    same key sent for two items at once, or SQLite without row locks): the loser is refused and its write rolled
    back with it (no savepoint of its own: the ValidationError leaves the service's atomic block, which rolls back
    the whole write — two statements fewer on every autosave)."""
    if not key:
        return None
    now = timezone.now()
    if prune:
        SaveReceipt.objects.filter(user=actor, created_at__lt=now - RECEIPT_TTL).delete()
    try:
        return SaveReceipt.objects.create(user=actor, key=key, action=action, assignment=assignment,
                                          fingerprint=fingerprint, status_code=200, result=result, created_at=now)
    except IntegrityError:
        raise ValidationError(KEY_REUSED_MESSAGE, code="idempotency_key_reused") from None


def receipt_saved_at(receipt: SaveReceipt) -> datetime:
    """When the write a receipt stands for was saved (what a replayed autosave reports)."""
    return datetime.fromisoformat(receipt.result["saved_at"])
