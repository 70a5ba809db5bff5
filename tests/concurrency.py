"""Racing calls for the PostgreSQL concurrency tests: each in its own thread and connection, released together."""
from __future__ import annotations

import threading
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import connection


def run_together(*calls: Callable[[], str],
                 refused: Callable[[ValidationError], str] = lambda exc: str(exc.code)) -> list[str]:
    """Start the calls at the same moment in their own threads (own connections); return their outcomes: what a
    call returned, `refused:<refused(exc)>` for a ValidationError (its code by default), `error:<repr>` otherwise."""
    barrier = threading.Barrier(len(calls))
    outcomes = [""] * len(calls)

    def run(index: int, call: Callable[[], str]) -> None:
        try:
            barrier.wait(timeout=10)
            outcomes[index] = call()
        except ValidationError as exc:
            outcomes[index] = f"refused:{refused(exc)}"
        except BaseException as exc:  # noqa: BLE001 - reported in the outcome
            outcomes[index] = f"error:{exc!r}"
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes
