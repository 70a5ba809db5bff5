"""Races on a SQLite *file* database with the project's own settings, run in a subprocess by
tests/annotations/test_sqlite_concurrency.py (pytest's SQLite test database is in memory, whose locking is not
what a deployment on the default database meets).

Usage: python -m tests.annotations.sqlite_race DB_PATH ROUNDS — prints one JSON object with every response's
status and each item's final state.
"""
from __future__ import annotations

import json
import os
import sys
import threading

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main(db_path: str, rounds: int) -> dict:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    call_command("migrate", verbosity=0)
    setup_test_environment()

    from annotations.models import Annotation, AnnotationEvent
    from annotations.services import sub_dimension_keys
    from tests.annotations.factories import world_build

    world = world_build(catholic_cases=max(2, rounds))
    assignments = world.assignments(world.expert)

    def race(requests: list[tuple[str, dict]]) -> list[int | str]:
        """Send the requests at once, each from its own signed-in client and database connection."""
        barrier = threading.Barrier(len(requests))
        results: list[int | str] = [0] * len(requests)

        def send(index: int, url: str, data: dict) -> None:
            client = Client(raise_request_exception=False)
            client.force_login(world.expert)
            try:
                barrier.wait(timeout=20)
                results[index] = client.post(url, data, HTTP_HX_REQUEST="true").status_code
            except BaseException as exc:  # noqa: BLE001 — reported to the test
                results[index] = f"{type(exc).__name__}: {exc}"
            finally:
                connection.close()

        threads = [threading.Thread(target=send, args=(i, url, data)) for i, (url, data) in enumerate(requests)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        return results

    out: dict = {"double_submit": [], "autosave_vs_submit": [], "final": []}
    for n, assignment in enumerate(assignments[: 2 * rounds]):
        keys = sub_dimension_keys(assignment=assignment)
        url = lambda name, a=assignment: reverse(f"annotations:{name}", kwargs={"public_id": a.public_id})  # noqa: E731
        full = {f"score-{k}": "2" for k in keys}
        if n % 2 == 0:  # a double Enter: three submissions of the same item at once
            out["double_submit"].append(race([(url("submit"), full)] * 3))
        else:  # an autosave still on its way when the expert submits
            draft = {f"score-{k}": "1" for k in keys} | {"rationale": "typed late"}
            out["autosave_vs_submit"].append(race([(url("draft"), draft), (url("submit"), full)]))
        annotation = Annotation.objects.filter(assignment=assignment).first()
        out["final"].append({
            "status": annotation.status if annotation else None,
            "annotations": Annotation.objects.filter(assignment=assignment).count(),
            "submitted_events": AnnotationEvent.objects.filter(annotation__assignment=assignment,
                                                               kind="submitted").count(),
            "scores": sorted(set(annotation.scores.values_list("score", flat=True))) if annotation else [],
        })
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
