"""TOTP for the demo and tests: activate an authenticator without the set-up page, and show its current code.

Used by the development-only `manage.py demo_totp` command, the demo data and tests that sign in with
two factors. Only allauth's documented API is used: the `Authenticator` model with the secret stored
through the MFA adapter's `encrypt`/`decrypt` (as allauth's own "Upgrading from django-allauth-2fa"
recipe does), and the documented settings MFA_TOTP_PERIOD and MFA_TOTP_DIGITS with their documented
defaults. The code is RFC 6238 (HMAC-SHA1), what allauth and authenticator apps compute: a dozen lines
of standard library rather than a new dependency for development tooling, checked against the RFC's
published values and against allauth's real sign-in in tests/accounts.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
import time

from allauth.mfa.adapter import get_adapter
from allauth.mfa.models import Authenticator
from django.conf import settings

from .models import User


def totp_period() -> int:
    """Seconds a code is valid: allauth's MFA_TOTP_PERIOD (documented default 30)."""
    return int(getattr(settings, "MFA_TOTP_PERIOD", 30))


def totp_digits() -> int:
    """Digits of a code: allauth's MFA_TOTP_DIGITS (documented default 6)."""
    return int(getattr(settings, "MFA_TOTP_DIGITS", 6))


def totp_secret_new() -> str:
    """A random base32 secret of 160 bits, the key length RFC 4226 §4 recommends for HMAC-SHA1."""
    return base64.b32encode(secrets.token_bytes(20)).decode("ascii")


def totp_code(*, secret: str, moment: float, period: int | None = None, digits: int | None = None) -> str:
    """The RFC 6238 code of a base32 `secret` at Unix time `moment` (HOTP of RFC 4226 §5.3 on the time step).

    Source: RFC 6238 appendix B. Example: the secret ``GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ`` ("12345678901234567890")
    at ``moment=59`` with 8 digits gives ``"94287082"``.
    """
    period = totp_period() if period is None else period
    digits = totp_digits() if digits is None else digits
    key = base64.b32decode(secret, casefold=True)
    digest = hmac.new(key, struct.pack(">Q", int(moment) // period), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 10 ** digits:0{digits}d}"


def totp_activate(*, user: User, secret: str) -> Authenticator:
    """Give `user` an active TOTP authenticator for `secret`, stored as allauth stores it (adapter-encrypted)."""
    return Authenticator.objects.create(
        user=user, type=Authenticator.Type.TOTP, data={"secret": get_adapter().encrypt(secret)}
    )


def totp_current_code(*, user: User, now: float | None = None) -> tuple[str, int]:
    """(the code, seconds it stays valid); raises Authenticator.DoesNotExist without a TOTP authenticator."""
    authenticator = Authenticator.objects.get(user=user, type=Authenticator.Type.TOTP)
    secret = get_adapter().decrypt(authenticator.data["secret"])
    moment = int(time.time() if now is None else now)
    period = totp_period()
    return totp_code(secret=secret, moment=moment, period=period), period - moment % period
