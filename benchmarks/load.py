"""Benchmark: experts scoring against the documented deployment (gunicorn + task worker + PostgreSQL), with faults.

Run from the repository root (PostgreSQL; `make load` runs the three scenarios with these defaults):
    .venv/bin/python benchmarks/load.py --database-url postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/load.py --scenarios closed --closed-experts 16 --seconds 30
    .venv/bin/python benchmarks/load.py --scenarios think --think-experts 50 --think 5 --seconds 60

Set-up (not timed): a throwaway database `fb_load_<x>` on the server (dropped at the end), migrated, with an
open cycle where every expert has --items pending assignments; each expert is signed in by a session
created on the server side. Then the deployment exactly as docs/deployment.md documents it: `gunicorn -c
config/gunicorn.conf.py config.wsgi` (workers and threads from its defaults unless --workers/--threads) and
`manage.py run_worker`, with `benchmarks/settings_load.py` (production settings over plain HTTP).

Each expert is a thread with its own HTTP client doing what the scoring page does, item after item: open the
queue (GET /scoring/), open the next item (GET /scoring/next/ → the item page), --drafts htmx autosaves, an
htmx submit. Between requests it pauses uniformly 0–2×--think seconds (0: a closed loop, as fast as the
server answers). A 503 is retried after its Retry-After (as the page's script does); a 500 is not.

Scenarios (each over --seconds after --warmup, on the same server):
  closed  --closed-experts experts, no think time: throughput (goal ≥ 64 req/s, 4× the 16 req/s of the
          4-worker set-up measured before) with 0 5xx;
  think   --think-experts experts with --think s think time: the experts' p95 (goal < 200 ms);
  fault   --fault-experts experts with --fault-think s think time; halfway through, the database is
          "restarted": new connections to it are refused and every open one is terminated
          (`ALTER DATABASE … ALLOW_CONNECTIONS false` + `pg_terminate_backend`, only this database's, so the
          shared server is never restarted) for --fault-seconds. Goals: 0 answers of 500 (503 + Retry-After
          instead), every acknowledged submission (200) stored with the scores that were sent, /healthz back
          to 200 afterwards.
"""
from __future__ import annotations

import argparse
import os
import random
import runpy
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import kit  # noqa: E402

MAX_RETRIES = 10


@dataclass(frozen=True)
class Record:
    kind: str  # queue, item, draft, submit
    start: float  # time.time() when the attempt was sent
    seconds: float
    status: int  # 0: no HTTP answer (connection reset)
    retry: bool = False  # an attempt after a 503 or a lost connection


@dataclass
class Outcome:
    records: list[Record] = field(default_factory=list)
    acknowledged: dict[str, dict[str, int]] = field(default_factory=dict)  # public id → scores sent, 200
    problems: list[str] = field(default_factory=list)


# --- the clients ---------------------------------------------------------------------------------------

def expert_loop(base: str, session: str, stop_at: float, think: float, drafts: int, seed: int,
                out: Outcome) -> None:
    """One expert working through their queue until stop_at (or the queue ends)."""
    import httpx

    rng = random.Random(seed)

    def pause() -> None:
        if think > 0:
            time.sleep(rng.uniform(0, 2 * think))

    with httpx.Client(base_url=base, cookies={"sessionid": session}, timeout=60) as client:
        def send(kind: str, method: str, url: str, **kwargs: Any) -> httpx.Response | None:
            for attempt in range(MAX_RETRIES + 1):
                started, clock = time.time(), time.perf_counter()
                try:
                    response = client.request(method, url, **kwargs)
                except httpx.TransportError:
                    out.records.append(Record(kind, started, time.perf_counter() - clock, 0, attempt > 0))
                    time.sleep(1)
                    continue
                out.records.append(Record(kind, started, time.perf_counter() - clock, response.status_code,
                                          attempt > 0))
                if response.status_code != 503:
                    return response
                time.sleep(float(response.headers.get("Retry-After", "1")))
            out.problems.append(f"{method} {url}: gave up after {MAX_RETRIES} retries")
            return None

        while time.time() < stop_at:
            queue = send("queue", "GET", "/scoring/")
            if queue is None or queue.status_code != 200:
                out.problems.append(f"GET /scoring/: {getattr(queue, 'status_code', None)}")
                return
            pause()
            page = send("item", "GET", "/scoring/next/", follow_redirects=True)
            if page is None or page.status_code != 200:
                out.problems.append(f"GET /scoring/next/: {getattr(page, 'status_code', None)}")
                return
            path = page.url.path
            if not path.startswith("/scoring/a/"):
                return  # queue finished
            form = kit.scoring_form(page.text, base=base, path=path, rng=rng)
            if not form.complete:
                out.problems.append(f"GET {path}: {form.summary}")
                return
            for draft in range(1, drafts + 1):
                pause()
                saved = send("draft", "POST", f"{path}draft/", data=form.draft(draft, drafts), headers=form.headers)
                if saved is not None and saved.status_code != 200:
                    out.problems.append(f"POST {path}draft/: {saved.status_code} {saved.text[:200]!r}")
            pause()
            done = send("submit", "POST", f"{path}submit/", data=form.submit(), headers=form.headers)
            if done is not None and done.status_code == 200:
                out.acknowledged[path.split("/")[3]] = form.scores
            elif done is not None and done.status_code != 409:  # 409: a retried submit that had gone through
                out.problems.append(f"POST {path}submit/: {done.status_code} {done.text[:200]!r}")
            pause()


# --- the deployment ------------------------------------------------------------------------------------

def wait_for(url: str, *, seconds: float, ok: tuple[int, ...] = (200,)) -> int:
    import httpx

    deadline, status = time.time() + seconds, 0
    while time.time() < deadline:
        try:
            status = httpx.get(url, timeout=5).status_code
            if status in ok:
                return status
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    return status


def deployment_start(args: argparse.Namespace, env: dict[str, str], log: Path) -> tuple[list[subprocess.Popen], str]:
    """gunicorn with config/gunicorn.conf.py and one task worker, as `make serve` runs them."""
    port = kit.free_port()
    env = {**env, "PORT": str(port), "HOST": "127.0.0.1"}
    if args.workers:
        env["GUNICORN_WORKERS"] = str(args.workers)
    if args.threads:
        env["GUNICORN_THREADS"] = str(args.threads)
    processes = []
    with log.open("ab") as out:
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"],
            cwd=ROOT, env=env, stdout=out, stderr=out))
        processes.append(subprocess.Popen(
            [sys.executable, "manage.py", "run_worker", "--no-reload"], cwd=ROOT, env=env, stdout=out, stderr=out))
    base = f"http://127.0.0.1:{port}"
    if wait_for(f"{base}/healthz", seconds=60) != 200:
        raise RuntimeError(f"the deployment did not become healthy within 60 s; see {log}")
    return processes, base


def deployment_stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def database_outage(server_url: str, database: str, seconds: float) -> None:
    """What a restart looks like to the application, confined to one database: refuse, terminate, recover."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')  # generated name, not user input
        try:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                         "AND pid <> pg_backend_pid()", [database])
            time.sleep(seconds)
        finally:
            conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')


# --- scenarios -----------------------------------------------------------------------------------------

@dataclass
class Scenario:
    name: str
    experts: int
    think: float
    fault: bool = False


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario's measured requests, its clients' outcome, the server's CPU seconds and when the fault began."""

    records: list[Record]
    out: Outcome
    cpu: float
    fault_at: float | None


class ScenarioSummary(TypedDict):
    """The figures the goals are checked against."""

    rate: float
    p95: float
    e500: int
    e5xx: int
    lost: int
    health: NotRequired[int]  # the fault scenario's /healthz status afterwards


def run_scenario(args: argparse.Namespace, scenario: Scenario, sessions: list[str], base: str,
                 server_pid: int, database: Any) -> ScenarioRun:
    t0 = time.time() + 0.5
    start, end = t0 + args.warmup, t0 + args.warmup + args.seconds
    out = Outcome()
    threads = [threading.Thread(target=expert_loop, args=(base, session, end, scenario.think, args.drafts,
                                                          hash((scenario.name, i)) & 0xFFFF, out))
               for i, session in enumerate(sessions[: scenario.experts])]
    time.sleep(max(0.0, t0 - time.time()))
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, start - time.time()))
    cpu0, fault_at = kit.server_cpu(server_pid), None
    if scenario.fault:
        time.sleep(args.seconds / 2 - args.fault_seconds / 2)
        fault_at = time.time()
        database_outage(args.database_url, database.name, args.fault_seconds)
    time.sleep(max(0.0, end - time.time()))
    cpu = kit.server_cpu(server_pid) - cpu0
    for thread in threads:
        thread.join()
    measured = [r for r in out.records if start <= r.start < end]
    return ScenarioRun(records=measured, out=out, cpu=cpu, fault_at=fault_at)


def acknowledged_lost(acknowledged: dict[str, dict[str, int]]) -> list[str]:
    """Public ids whose acknowledged submission is not stored as sent (status submitted, same scores)."""
    from django.db import connections

    from annotations.models import Annotation

    connections.close_all()  # this process's own connection may have been ended by the outage scenario
    stored = {a.assignment.public_id: a for a in Annotation.objects.filter(
        assignment__public_id__in=list(acknowledged)).select_related("assignment").prefetch_related("scores")}
    lost = []
    for public_id, scores in acknowledged.items():
        annotation = stored.get(public_id)
        if (annotation is None or annotation.status != Annotation.Status.SUBMITTED
                or {s.key: s.score for s in annotation.scores.all()} != scores):
            lost.append(public_id)
    return lost


def report(args: argparse.Namespace, scenario: Scenario, result: ScenarioRun, base: str) -> ScenarioSummary:
    records = result.records
    answered = [r for r in records if r.status]
    ms = [r.seconds * 1000 for r in answered]
    rate = len(answered) / args.seconds
    counts = {code: sum(1 for r in records if r.status == code) for code in (500, 502, 503, 504, 0)}
    other_5xx = sum(1 for r in records if r.status >= 500 and r.status not in counts)
    think = f"think {scenario.think:g} s" if scenario.think else "closed loop"
    print(f"\n[{scenario.name}] {scenario.experts} experts, {think}, {args.drafts} autosave(s) per item, "
          f"{args.seconds:g} s measured")
    print(f"  {len(answered):6,} answers  {rate:6.1f} req/s  p50 {kit.pct(ms, 50):6.1f} ms  p95 {kit.pct(ms, 95):6.1f} ms  "
          f"max {max(ms, default=0):7.1f} ms")
    for kind in ("queue", "item", "draft", "submit"):
        kms = [r.seconds * 1000 for r in answered if r.kind == kind]
        print(f"    {kind:<7} {len(kms):6,}  p50 {kit.pct(kms, 50):6.1f} ms  p95 {kit.pct(kms, 95):6.1f} ms  "
              f"max {max(kms, default=0):7.1f} ms")
    print(f"  status 500: {counts[500]}, 503: {counts[503]}, other 5xx: {other_5xx + counts[502] + counts[504]}, "
          f"no answer: {counts[0]}, retried attempts: {sum(1 for r in records if r.retry)}; "
          f"server CPU {result.cpu:.1f} s of {2 * args.seconds:g} core-seconds")
    out = result.out
    lost = acknowledged_lost(out.acknowledged)
    print(f"  acknowledged submissions: {len(out.acknowledged):,}, stored as sent: {len(out.acknowledged) - len(lost):,}"
          f" (lost: {len(lost)})")
    summary: ScenarioSummary = {
        "rate": rate, "p95": kit.pct(ms, 95), "e500": counts[500],
        "e5xx": other_5xx + counts[502] + counts[504] + counts[500] + counts[503], "lost": len(lost)}
    if scenario.fault:
        outage = [r for r in records if r.status in (503, 0)]
        first = min((r.start for r in outage), default=None)
        last = max((r.start + r.seconds for r in outage), default=None)
        fault_at = result.fault_at or 0.0  # set in the fault scenario
        window = f"{first - fault_at:+.1f} s to {last - fault_at:+.1f} s" if first and last else "none"
        health = wait_for(f"{base}/healthz", seconds=30)
        print(f"  outage of {args.fault_seconds:g} s at {fault_at - result.records[0].start:.1f} s: "
              f"503/unanswered attempts from {window} after it began; /healthz afterwards: {health}")
        summary["health"] = health
    for problem in out.problems[:8]:
        print(f"  problem: {problem}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL server URL (a throwaway database fb_load_<x> is created there and dropped)")
    parser.add_argument("--scenarios", default="closed,think,fault")
    parser.add_argument("--seconds", type=float, default=30, help="measured seconds per scenario")
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--drafts", type=int, default=1, help="autosaves per item before the submit")
    parser.add_argument("--closed-experts", type=int, default=16)
    parser.add_argument("--think-experts", type=int, default=50)
    parser.add_argument("--think", type=float, default=5.0, help="mean think time of the think scenario (s)")
    parser.add_argument("--fault-experts", type=int, default=20)
    parser.add_argument("--fault-think", type=float, default=1.0)
    parser.add_argument("--fault-seconds", type=float, default=3.0, help="how long the database is unavailable")
    parser.add_argument("--items", type=int, default=0, help="pending assignments per expert (default: enough)")
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (default: config/gunicorn.conf.py)")
    parser.add_argument("--threads", type=int, default=0, help="threads per worker (default: the config's)")
    parser.add_argument("--keep-log", action="store_true", help="keep the deployment's log file")
    args = parser.parse_args()

    from benchmarks.cycle_rows import scoring_cycle_write

    warnings.filterwarnings("ignore", "No directory at", UserWarning)  # whitenoise: no collectstatic here
    chosen = {
        "closed": Scenario("closed", args.closed_experts, 0.0),
        "think": Scenario("think", args.think_experts, args.think),
        "fault": Scenario("fault", args.fault_experts, args.fault_think, fault=True),
    }
    scenarios = [chosen[name] for name in args.scenarios.split(",")]
    n_experts = max(s.experts for s in scenarios)
    items = args.items or int(10 + 3 * args.seconds * len(scenarios))

    database = kit.throwaway_database(args.database_url, prefix="fb_load")
    log = Path(tempfile.mkstemp(prefix="fb-load-", suffix=".log")[1])
    env = {**os.environ, "DATABASE_URL": database.url, "DJANGO_SETTINGS_MODULE": "benchmarks.settings_load",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(48), "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "PYTHONPATH": str(ROOT)}
    os.environ.update(env)
    processes: list[subprocess.Popen] = []
    keep_log, summaries = True, dict[str, ScenarioSummary]()
    try:
        kit.django_setup(database, "benchmarks.settings_load")
        from django.core.management import call_command
        from django.db import connections

        started = time.perf_counter()
        call_command("migrate", verbosity=0)
        call_command("createcachetable", verbosity=0)
        _, experts = scoring_cycle_write(name="Load cycle", admin=kit.admin_user(), n_experts=n_experts,
                                         items_per_expert=items)
        sessions = [kit.session_for(e) for e in experts]
        connections.close_all()
        print(f"scoring load against the deployment — PostgreSQL, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
              f"{os.cpu_count()} cores, load average {kit.load_average()}")
        print(f"set-up {time.perf_counter() - started:.1f} s: {n_experts} experts × {items} pending assignments")
        processes, base = deployment_start(args, env, log)
        conf = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))  # the values gunicorn was started with
        workers, threads = args.workers or conf["workers"], args.threads or conf["threads"]
        print(f"deployment: gunicorn -c config/gunicorn.conf.py ({workers} workers × {threads} threads) + "
              f"run_worker at {base}")
        for scenario in scenarios:
            result = run_scenario(args, scenario, sessions, base, processes[0].pid, database)
            summaries[scenario.name] = report(args, scenario, result, base)
        connections.close_all()
        print("\ngoals:")
        if "closed" in summaries:
            s = summaries["closed"]
            print(f"  closed loop ≥ 64 req/s with 0 5xx: {s['rate']:.1f} req/s, {s['e5xx']} 5xx "
                  f"→ {'met' if s['rate'] >= 64 and s['e5xx'] == 0 else 'NOT met'}")
        if "think" in summaries:
            s = summaries["think"]
            print(f"  {args.think_experts} experts, think {args.think:g} s, p95 < 200 ms: {s['p95']:.1f} ms, "
                  f"{s['e5xx']} 5xx → {'met' if s['p95'] < 200 and s['e5xx'] == 0 else 'NOT met'}")
        if "fault" in summaries:
            s = summaries["fault"]
            print(f"  database outage: {s['e500']} answers of 500, {s['lost']} acknowledged scores lost, /healthz "
                  f"{s['health']} afterwards → {'met' if s['e500'] == 0 and s['lost'] == 0 and s['health'] == 200 else 'NOT met'}")
        text = log.read_text(errors="replace")
        tracebacks = text.count("Traceback")
        print(f"tracebacks in the deployment's log: {tracebacks} (database-outage tracebacks are expected in the "
              f"fault scenario)")
        keep_log = args.keep_log
    finally:
        deployment_stop(processes)
        kit.finish(database, log, keep_log=keep_log, label="deployment log")


if __name__ == "__main__":
    main()
