#!/usr/bin/env python3
"""Push cases and responses to FaithBench Calibration, judge them, and download a cycle's report bundle.

    export FAITHBENCH_TOKEN=...   # /accounts/tokens/: scopes data:write, judge:run and reports:read
    python examples/push_and_judge.py --base-url https://calibration.example.org \\
        --cases cases.json --responses responses.json --label nightly --cycle 3 --out report.zip

Every step uses the REST API (OpenAPI at /api/v1/schema/): POST /api/v1/cases/ and /api/v1/responses/
(bulk, idempotent, all or nothing), POST /api/v1/judge-runs/ then GET /api/v1/judge-runs/<id>/ until the
run ends, and, with --cycle, POST /api/v1/reports/cycles/<id>/versions/ (a new report version), waiting
for it, then GET /api/v1/reports/cycles/<id>/bundle/?version=N. Exit status 0 when everything worked,
1 with the server's reasons otherwise. Needs only httpx.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import httpx

FINISHED = {"finished", "failed", "cancelled"}


class ReportVersion(TypedDict):
    """A report version as /api/v1/reports/cycles/<id>/versions/ lists it (the keys this script reads)."""

    version: int
    status: str
    error: NotRequired[str]


def read_records(path: Path) -> list[dict[str, object]]:
    """A JSON list of records, or JSON Lines: sent as they are (the API checks every field)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".jsonl", ".ndjson"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def fail(step: str, response: httpx.Response) -> int:
    try:
        body = response.json()
    except ValueError:
        body = {"detail": response.text[:500]}
    print(f"{step}: HTTP {response.status_code}: {body.get('detail', '')}", file=sys.stderr)
    for error in body.get("errors", [])[:20]:
        print(f"  {error}", file=sys.stderr)
    return 1


def wait(api: httpx.Client, url: str, done: Any, *, timeout: float, poll: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        body = api.get(url).raise_for_status().json()
        state = done(body)
        if state is not None:
            return state
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not finish within {timeout:.0f} s")
        time.sleep(poll)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", default=os.environ.get("FAITHBENCH_TOKEN", ""), help="default: $FAITHBENCH_TOKEN")
    parser.add_argument("--cases", type=Path, help="JSON or JSONL file of test cases (the import format)")
    parser.add_argument("--responses", type=Path, required=True, help="JSON or JSONL file of model responses")
    parser.add_argument("--label", default="api", help="the judge run's label")
    parser.add_argument("--cycle", type=int, help="then compute a report version of this cycle and download it")
    parser.add_argument("--resamples", type=int, default=1000, help="the report's bootstrap resamples")
    parser.add_argument("--out", type=Path, default=Path("report-bundle.zip"))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds to wait for each long step")
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between checks")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a token is needed: --token or $FAITHBENCH_TOKEN")

    with httpx.Client(base_url=args.base_url.rstrip("/"), headers={"Authorization": f"Token {args.token}"},
                      timeout=60) as api:
        for kind, path in (("cases", args.cases), ("responses", args.responses)):
            if path is None:
                continue
            response = api.post(f"/api/v1/{kind}/", json=read_records(path))
            if response.status_code != 200:
                return fail(f"pushing {kind}", response)
            done = response.json()
            print(f"{kind}: {done['created']} created, {done['updated']} updated, {done['unchanged']} unchanged")

        response = api.post("/api/v1/judge-runs/", json={"label": args.label})
        if response.status_code != 202:
            return fail("starting the judge run", response)
        run = response.json()
        print(f"judge run {run['run_id']}: {run['total']} items queued")
        run = wait(api, f"/api/v1/judge-runs/{run['run_id']}/",
                   lambda body: body if body["status"] in FINISHED else None, timeout=args.timeout, poll=args.poll)
        print(f"judge run {run['run_id']}: {run['status']}: {run['scored']} scored, {run['failed_total']} failed, "
              f"{run['filtered']} filtered; cost {run['cost']}")
        if run["status"] != "finished":
            return 1

        if args.cycle is None:
            return 0
        response = api.post(f"/api/v1/reports/cycles/{args.cycle}/versions/", json={"n_resamples": args.resamples})
        if response.status_code != 202:
            return fail("requesting a report version", response)
        version = response.json()["version"]

        def ready(versions: list[ReportVersion]) -> ReportVersion | None:
            mine = next(v for v in versions if v["version"] == version)
            return mine if mine["status"] in ("ready", "failed") else None

        state = wait(api, f"/api/v1/reports/cycles/{args.cycle}/versions/", ready, timeout=args.timeout,
                     poll=args.poll)
        if state["status"] != "ready":
            print(f"report version {version} failed: {state.get('error', '')}", file=sys.stderr)
            return 1
        response = api.get(f"/api/v1/reports/cycles/{args.cycle}/bundle/", params={"version": version})
        if response.status_code != 200:
            return fail("downloading the bundle", response)
        args.out.write_bytes(response.content)
        print(f"report version {version}: {len(response.content)} bytes written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
