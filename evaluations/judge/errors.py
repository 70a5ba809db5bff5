"""Error classes of a judge call (methodology §5.6.3), shared by the client, the pipeline and the models."""
from __future__ import annotations

from django.db import models


class ErrorClass(models.TextChoices):
    """Why a call to the chat-completions endpoint did not produce a usable judgment."""

    RATE_LIMITED = "rate_limited", "Rate limit (429)"
    SERVER_ERROR = "server_error", "Server error (5xx)"
    TIMEOUT = "timeout", "Timeout (408 or client timeout)"
    CONNECTION_ERROR = "connection_error", "Connection error"
    AUTH = "auth", "Authentication (401)"
    FILTERED = "filtered", "Content filtered (403)"
    NOT_FOUND = "not_found", "Model not found (404)"
    BAD_REQUEST = "bad_request", "Invalid request (400)"
    HTTP_ERROR = "http_error", "Other HTTP error"
    PARSE_ERROR = "parse_error", "Judge error: unparseable output"


# Retried with backoff (429, 5xx, 408, timeouts, connection errors); everything else is final at once.
RETRYABLE: frozenset[str] = frozenset(
    {ErrorClass.RATE_LIMITED, ErrorClass.SERVER_ERROR, ErrorClass.TIMEOUT, ErrorClass.CONNECTION_ERROR}
)

# A primary-judge failure of these classes switches to the fallback judge (§5.6.2: "returns an API
# error"). 401 stops the whole run instead, 403 is a content decision and parse failures are the judge's
# own output, so none of those three falls back.
FALLBACK_TRIGGERS: frozenset[str] = RETRYABLE | {
    ErrorClass.NOT_FOUND, ErrorClass.BAD_REQUEST, ErrorClass.HTTP_ERROR,
}


def error_class_for_status(status: int) -> str:
    """Map an HTTP status code to its error class (methodology §5.6.3)."""
    if status == 429:
        return ErrorClass.RATE_LIMITED
    if status == 408:
        return ErrorClass.TIMEOUT
    if status >= 500:
        return ErrorClass.SERVER_ERROR
    if status == 401:
        return ErrorClass.AUTH
    if status == 403:
        return ErrorClass.FILTERED
    if status == 404:
        return ErrorClass.NOT_FOUND
    if status == 400:
        return ErrorClass.BAD_REQUEST
    return ErrorClass.HTTP_ERROR
