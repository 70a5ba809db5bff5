"""accounts.totp computes RFC 6238 codes: the RFC's own published values (appendix B, HMAC-SHA1)."""
from __future__ import annotations

import base64

import pytest

from accounts.totp import totp_code, totp_secret_new

RFC_SECRET = base64.b32encode(b"12345678901234567890").decode("ascii")


@pytest.mark.parametrize(
    ("moment", "code"),
    [(59, "94287082"), (1111111109, "07081804"), (1111111111, "14050471"), (1234567890, "89005924"),
     (2000000000, "69279037"), (20000000000, "65353130")],
)
def test_codes_are_rfc_6238s_published_values(moment: int, code: str) -> None:
    assert totp_code(secret=RFC_SECRET, moment=moment, period=30, digits=8) == code


def test_six_digit_codes_are_the_last_six_digits_and_keep_leading_zeros() -> None:
    assert totp_code(secret=RFC_SECRET, moment=1111111109, period=30, digits=6) == "081804"
    assert totp_code(secret=RFC_SECRET, moment=59) == "287082"  # allauth's defaults: 30 s, 6 digits


def test_new_secrets_are_random_160_bit_base32() -> None:
    first, second = totp_secret_new(), totp_secret_new()
    assert first != second and len(base64.b32decode(first)) == 20
