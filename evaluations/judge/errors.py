"""Error classes of a judge call (methodology §5.6.3): which are retried, which fall back, which status maps where.

The `ErrorClass` enum itself lives in `evaluations.domain` (below the models, which store it)."""
from __future__ import annotations

from evaluations.domain import ErrorClass

__all__ = ["ErrorClass", "FALLBACK_TRIGGERS", "RETRYABLE", "error_class_for_status"]


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
