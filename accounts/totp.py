"""The current TOTP code of a user's authenticator, as an authenticator app would show it.

Used by the development-only `manage.py demo_totp` command and by tests that sign in with two factors.
"""
from __future__ import annotations

import time

from allauth.mfa import app_settings
from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value
from allauth.mfa.utils import decrypt

from .models import User


def totp_current_code(*, user: User, now: float | None = None) -> tuple[str, int]:
    """(the code, seconds it stays valid); raises Authenticator.DoesNotExist without a TOTP authenticator."""
    authenticator = Authenticator.objects.get(user=user, type=Authenticator.Type.TOTP)
    secret = decrypt(authenticator.data["secret"])
    moment = int(time.time() if now is None else now)
    code = format_hotp_value(hotp_value(secret, moment // app_settings.TOTP_PERIOD))
    return code, app_settings.TOTP_PERIOD - moment % app_settings.TOTP_PERIOD
