"""Benchmark: experts scoring over HTTP while admins download report snapshot files, against a real server.

Run from the repository root (PostgreSQL; gunicorn is a project dependency):
    .venv/bin/python benchmarks/report_load.py
    .venv/bin/python benchmarks/report_load.py --database-url postgres://postgres@127.0.0.1:5432/postgres \
        --phase-seconds 20 --warmup 4 --experts 20 --downloaders 8 --workers 4 --worker-class sync \
        --think 0,0.5 --offload auto|nginx|none

Set-up (not timed): a throwaway PostgreSQL database `bench_load_<x>` (dropped at the end) with the 60-rater
synthetic cycle of `tests/calibration/synthetic.py` written as rows and its report computed once as a
ready snapshot (1,000 resamples: JSON, CSV, PDF, ratings.csv and the zip bundle stored), plus an open
cycle where each of --experts experts has --items pending assignments. Everyone is signed in by a session
created on the server side (the cookie is all a client sends). gunicorn serves `config.wsgi` with
`benchmarks/settings_load.py` (the production settings over plain HTTP, no TOTP requirement), bound to
127.0.0.1. When nginx is installed (--offload auto, the default; `apt-get install -y nginx`), it is started in
front of gunicorn from compose's `config/nginx/faithbench.conf.template` (a temporary config, one nginx worker)
and gunicorn runs with FAITHBENCH_DOWNLOADS_OFFLOAD=x-accel-redirect: Django checks access and nginx sends the
files from a temporary downloads directory (--download-workers N: the download URLs go to a second gunicorn
of N workers). Without nginx (or --offload none) the clients talk to gunicorn,
which sends the files from the database; the run says which.

Load: each expert is a thread with its own HTTP client that loops over its queue the way the scoring page
does: GET the item page, --drafts htmx autosaves (`score-<key>` fields, rationale, the CSRF token in the
X-CSRFToken header), an htmx submit (whose answer is the next item; its HX-Replace-Url names it), then the
next item's page. --think seconds (uniformly 0–2× that) pass between an expert's requests; 0 makes every
expert a closed loop, as fast as the server answers. After --warmup seconds, phase A: experts alone for
--phase-seconds; phase B: the same experts while --downloaders threads (in a separate process, so the
clients do not share one interpreter lock) download the snapshot's zip, PDF and JSON in turn without
pause. Printed per phase: requests, the experts' p50/p95/max (all requests and per kind), downloads
served and bytes, any 5xx; the ratio of the experts' p95s (goal ≤ 1.20) and the 5xx count (goal 0). One run per
--think value (default 0 and 0.5 s, the same server and experts, think time last), then one line
`downloads: p95_ratio_nothink=… p95_ratio_think=…`.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import kit  # noqa: E402


@dataclass(frozen=True)
class Record:
    kind: str  # page, draft, submit, download:<fmt>
    start: float  # time.time() when the request was sent
    seconds: float
    status: int
    size: int = 0


@dataclass(frozen=True)
class Setup:
    """What set-up made: sessions (cookie values) for the admin, the downloaders and the experts, the snapshot's
    download URLs as (format, URL, size), its file sizes by format and its input counts."""

    admin: str
    downloaders: list[str]
    experts: list[str]
    urls: list[tuple[str, str, int]]
    sizes: dict[str, int]
    counts: dict[str, int]


@dataclass(frozen=True)
class Measured:
    """One run: the experts' requests in phase A (alone) and B (with the downloads), the downloads, the problems
    seen, the server's CPU seconds per phase, the load average at A, B and the end, and the items submitted."""

    a: list[Record]
    b: list[Record]
    downloads: list[Record]
    problems: list[str]
    cpu: tuple[float, float]
    load: tuple[float, float, float]
    submitted: int


# --- the clients ---------------------------------------------------------------------------------------

def expert_loop(base: str, session: str, stop_at: float, think: float, drafts: int, seed: int,
                records: list[Record], problems: list[str]) -> None:
    """One expert working through their queue until stop_at (or the queue ends)."""
    import httpx

    rng = random.Random(seed)

    def pause() -> None:
        if think > 0:
            time.sleep(rng.uniform(0, 2 * think))

    with httpx.Client(base_url=base, cookies={"sessionid": session}, timeout=120) as client:
        def send(kind: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
            started, clock = time.time(), time.perf_counter()
            response = client.request(method, url, **kwargs)
            records.append(Record(kind, started, time.perf_counter() - clock, response.status_code))
            return response

        first = client.get("/scoring/next/")
        path = first.headers.get("location", "")
        while path.startswith("/scoring/a/") and time.time() < stop_at:
            page = send("page", "GET", path)
            form = kit.scoring_form(page.text, base=base, path=path, rng=rng)
            if page.status_code != 200 or not form.complete:
                problems.append(f"GET {path}: {page.status_code}, {form.summary}")
                return
            for draft in range(1, drafts + 1):
                pause()
                saved = send("draft", "POST", f"{path}draft/", data=form.draft(draft, drafts), headers=form.headers)
                if saved.status_code != 200:
                    problems.append(f"POST {path}draft/: {saved.status_code} {saved.text[:200]!r}")
            pause()
            done = send("submit", "POST", f"{path}submit/", data=form.submit(), headers=form.headers)
            if done.status_code != 200:
                problems.append(f"POST {path}submit/: {done.status_code} {done.text[:200]!r}")
                return
            # the next item's URL, as htmx puts it in the address bar (HX-Replace-Url; HX-Push-Url before)
            path = done.headers.get("HX-Replace-Url") or done.headers.get("HX-Push-Url", "")
            pause()


def downloads(base: str, sessions: list[str], urls: list[tuple[str, str, int]], start_at: float, stop_at: float,
              threads: int) -> list[tuple]:
    """--downloaders threads fetching the snapshot's files in turn from start_at to stop_at (own process), each
    signed in with its own session (eight people downloading, as the nginx template limits each session).

    A download whose body is not the stored file's size is recorded with status 299."""
    import httpx

    records: list[tuple] = []

    def loop(offset: int) -> None:
        with httpx.Client(base_url=base, cookies={"sessionid": sessions[offset % len(sessions)]},
                          timeout=120) as client:
            time.sleep(max(0.0, start_at - time.time()))
            n = offset
            while time.time() < stop_at:
                fmt, url, size = urls[n % len(urls)]
                n += 1
                started, clock = time.time(), time.perf_counter()
                response = client.get(url)
                body = response.content
                status = response.status_code if response.status_code >= 300 or len(body) == size else 299
                records.append((f"download:{fmt}", started, time.perf_counter() - clock, status, len(body)))

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return records


# --- the server ----------------------------------------------------------------------------------------

def server_start(args: argparse.Namespace, env: dict[str, str], log: Path,
                 workers: int | None = None) -> tuple[subprocess.Popen, str]:

    port = kit.free_port()
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", str(workers or args.workers), "--worker-class", args.worker_class, "--threads", str(args.threads),
               "--chdir", str(ROOT), "--timeout", "120", "--error-logfile", str(log)]
    with log.open("ab") as stderr:
        server = subprocess.Popen(command, env=env, stdout=stderr, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    kit.answering(server, f"{base}/accounts/login/", seconds=60, name="gunicorn", log=log)
    return server, base


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if os.access(p, os.X_OK)), None)


def nginx_start(nginx: str, upstream: str, downloads_upstream: str, downloads_root: Path,
                work: Path) -> tuple[subprocess.Popen, str]:
    """nginx in front of gunicorn, configured from config/nginx/faithbench.conf.template (compose.yaml's)."""

    port = kit.free_port()
    values = {"FAITHBENCH_UPSTREAM": upstream, "FAITHBENCH_DOWNLOADS_UPSTREAM": downloads_upstream,
              "FAITHBENCH_LISTEN": f"127.0.0.1:{port}",
              "FAITHBENCH_DOWNLOADS_ROOT": str(downloads_root)}
    template = (ROOT / "config" / "nginx" / "faithbench.conf.template").read_text()
    (work / "faithbench.conf").write_text(re.sub(r"\$\{([A-Z_]+)\}", lambda m: values[m.group(1)], template))
    (work / "tmp").mkdir(exist_ok=True)
    temp_paths = " ".join(f"{kind}_temp_path {work / 'tmp'};" for kind in ("client_body", "proxy", "fastcgi",
                                                                          "uwsgi", "scgi"))
    (work / "nginx.conf").write_text(
        f"daemon off; worker_processes 1; pid {work / 'nginx.pid'}; error_log {work / 'error.log'} warn;\n"
        "events { worker_connections 1024; }\n"
        f"http {{ access_log off; sendfile on; tcp_nopush on; {temp_paths}\n"
        f"  include {work / 'faithbench.conf'};\n}}\n")
    server = subprocess.Popen([nginx, "-p", str(work), "-c", str(work / "nginx.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    kit.answering(server, f"{base}/accounts/login/", seconds=20, name="nginx", log=work / "error.log")
    return server, base


# --- set-up --------------------------------------------------------------------------------------------

def setup(args: argparse.Namespace) -> Setup:
    from django.core.management import call_command
    from django.urls import reverse

    from benchmarks.cycle_rows import scoring_cycle_write, snapshot_compute, synthetic_cycle_write
    from evidence.models import SnapshotFile
    from tests.calibration.synthetic import synthetic_cycle

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    admin = kit.admin_user()
    report_cycle = synthetic_cycle_write(synthetic_cycle(), name="Synthetic cycle (60 raters)", admin=admin)
    snapshot = snapshot_compute(report_cycle, n_resamples=args.resamples, requested_by=admin)
    sizes = dict(SnapshotFile.objects.filter(snapshot=snapshot).values_list("format", "size"))
    stem = reverse("calibration:report_export", args=[report_cycle.pk, "zip"]).rsplit(".", 1)[0]
    urls = [(fmt, f"{stem}.{fmt}?version={snapshot.version}", sizes["bundle" if fmt == "zip" else fmt])
            for fmt in args.formats.split(",")]
    _, experts = scoring_cycle_write(name="Scoring cycle", admin=admin, n_experts=args.experts,
                                     items_per_expert=args.items)
    return Setup(admin=kit.session_for(admin), downloaders=[kit.session_for(admin) for _ in range(args.downloaders)],
                 experts=[kit.session_for(e) for e in experts], urls=urls, sizes=sizes, counts=snapshot.input_counts)


# --- the run -------------------------------------------------------------------------------------------

def describe(records: list[Record]) -> str:
    ms = [r.seconds * 1000 for r in records]
    return (f"{len(ms):6,} req  p50 {kit.pct(ms, 50):7.1f} ms  p95 {kit.pct(ms, 95):7.1f} ms  max {max(ms, default=0):7.1f} ms"
            if ms else "     0 req")


def measure(args: argparse.Namespace, data: Setup, base: str, server: subprocess.Popen,
            think: float) -> Measured:
    t0 = time.time() + 1.0
    a_start = t0 + args.warmup
    b_start = a_start + args.phase_seconds
    end = b_start + args.phase_seconds
    records: list[Record] = []
    problems: list[str] = []
    threads = [threading.Thread(target=expert_loop, args=(base, session, end, think, args.drafts, i, records,
                                                         problems)) for i, session in enumerate(data.experts)]
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        downloaded = pool.submit(downloads, base, data.downloaders, data.urls, b_start, end,
                                 args.downloaders)
        time.sleep(max(0.0, t0 - time.time()))
        for thread in threads:
            thread.start()
        marks = {}
        for name, at in (("A", a_start), ("B", b_start), ("end", end)):
            time.sleep(max(0.0, at - time.time()))
            marks[name] = (kit.server_cpu(server.pid), os.getloadavg()[0])
        for thread in threads:
            thread.join()
        fetched = [Record(*row) for row in downloaded.result()]
    phase_a = [r for r in records if a_start <= r.start < b_start]
    phase_b = [r for r in records if b_start <= r.start < end]
    return Measured(a=phase_a, b=phase_b, downloads=[r for r in fetched if r.start < end], problems=problems,
                    cpu=(marks["B"][0] - marks["A"][0], marks["end"][0] - marks["B"][0]),
                    load=(marks["A"][1], marks["B"][1], marks["end"][1]), submitted=sum(
                        1 for r in records if r.kind == "submit" and r.status == 200))


def report(args: argparse.Namespace, result: Measured, think: float) -> float:
    """Print one run's figures; return the ratio of the experts' p95s (with downloads / alone)."""
    a, b, fetched = result.a, result.b, result.downloads
    print(f"\nexperts ({args.experts} threads, think {think:g} s, {args.drafts} autosaves per item)")
    for label, rows in (("phase A, experts alone     ", a), ("phase B, with the downloads ", b)):
        print(f"  {label} {describe(rows)}")
        for kind in ("page", "draft", "submit"):
            print(f"      {kind:<7}                 {describe([r for r in rows if r.kind == kind])}")
    served = [r for r in fetched if r.status == 200]
    mb = sum(r.size for r in served) / 2**20
    limited = sum(1 for r in fetched if r.status == 429)
    print(f"downloads ({args.downloaders} threads, {args.formats}) during phase B: {len(served):,} served, "
          f"{mb:,.0f} MiB ({mb / args.phase_seconds:,.1f} MiB/s); {limited:,} answered 429 (over a session's "
          "download rate, nginx)")
    for fmt in args.formats.split(","):
        print(f"  {fmt:<5} {describe([r for r in fetched if r.kind == f'download:{fmt}'])}")
    errors_5xx = sum(1 for r in a + b + fetched if r.status >= 500)
    other = sum(1 for r in a + b if r.status not in (200, 302) and r.status < 500)
    short = sum(1 for r in fetched if r.status == 299)
    cpu_a, cpu_b = result.cpu
    print(f"server CPU (gunicorn, {args.workers} {args.worker_class} workers): phase A {cpu_a:.1f} s, "
          f"phase B {cpu_b:.1f} s of {2 * args.phase_seconds} core-seconds; load average at A/B/end "
          + " / ".join(f"{x:.2f}" for x in result.load))
    p95_a = kit.pct([r.seconds for r in a], 95)
    p95_b = kit.pct([r.seconds for r in b], 95)
    print(f"\nexperts' p95: {p95_a * 1000:.1f} ms alone, {p95_b * 1000:.1f} ms with downloads: "
          f"ratio {p95_b / p95_a:.2f} (goal ≤ 1.20)")
    print(f"5xx: {errors_5xx} (goal 0); other unexpected expert answers: {other}; downloads with the wrong size: "
          f"{short}; items submitted: {result.submitted:,}")
    for problem in result.problems[:10]:
        print(f"  problem: {problem}")
    return p95_b / p95_a


def think_values(raw: str) -> list[float]:
    """--think: one or more mean pauses in seconds, comma-separated; run in ascending order (think time last)."""
    try:
        values = sorted({float(v) for v in raw.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--think: seconds, comma-separated (e.g. 0,0.5), not {raw!r}") from None
    if not values or values[0] < 0:
        raise argparse.ArgumentTypeError(f"--think: at least one value, none negative, not {raw!r}")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL server URL (a throwaway database is created there and dropped)")
    parser.add_argument("--experts", type=int, default=20)
    parser.add_argument("--items", type=int, default=120, help="pending assignments per expert (≥ 100)")
    parser.add_argument("--downloaders", type=int, default=8)
    parser.add_argument("--formats", default="zip,pdf,json", help="snapshot files the downloaders fetch in turn")
    parser.add_argument("--phase-seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=4)
    parser.add_argument("--think", type=think_values, default=think_values("0,0.5"),
                        help="mean pause between an expert's requests (s); comma-separated for one run each")
    parser.add_argument("--drafts", type=int, default=2, help="autosaves per item before the submit")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--worker-class", choices=["sync", "gthread"], default="sync")
    parser.add_argument("--threads", type=int, default=1, help="threads per gthread worker")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--offload", choices=["auto", "nginx", "none"], default="auto",
                        help="nginx: clients talk to nginx, which sends the files (X-Accel-Redirect); none: to "
                             "gunicorn, which sends them from the database; auto: nginx when it is installed")
    parser.add_argument("--download-workers", type=int, default=0,
                        help="behind nginx: N > 0 starts a second gunicorn of N workers for the download URLs "
                             "(FAITHBENCH_DOWNLOADS_UPSTREAM); 0: one pool, as compose.yaml")
    parser.add_argument("--keep-log", action="store_true", help="keep gunicorn's log file")
    args = parser.parse_args()
    if importlib.util.find_spec("gunicorn") is None:
        sys.exit("gunicorn is not installed: it is in pyproject.toml; `make install` after the lock file lists it")
    nginx = nginx_binary() if args.offload != "none" else None
    if args.offload == "nginx" and nginx is None:
        sys.exit("--offload nginx: nginx is not installed (apt-get install -y nginx)")


    warnings.filterwarnings("ignore", "No directory at", UserWarning)  # whitenoise: no collectstatic here

    database = kit.throwaway_database(args.database_url, prefix="bench_load")
    log = Path(tempfile.mkstemp(prefix="fb-report-load-", suffix=".log")[1])
    work = Path(tempfile.mkdtemp(prefix="fb-report-load-"))
    work.chmod(0o755)  # nginx's workers may run as another user and read the files under it
    env = {**os.environ, "DATABASE_URL": database.url, "DJANGO_SETTINGS_MODULE": "benchmarks.settings_load",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(48), "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "PYTHONPATH": str(ROOT), "FAITHBENCH_DOWNLOADS_OFFLOAD": "x-accel-redirect" if nginx else "",
           "FAITHBENCH_DOWNLOADS_ROOT": str(work / "downloads")}
    os.environ.update(env)
    server, pool, proxy, keep_log = None, None, None, True  # kept when anything fails
    try:
        kit.django_setup(database, "benchmarks.settings_load")
        started = time.perf_counter()
        data = setup(args)
        from django.db import connections

        connections.close_all()
        print(f"report snapshot downloads under scoring load — PostgreSQL, "
              f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {kit.load_average()}")
        print(f"set-up {time.perf_counter() - started:.1f} s: snapshot of {data.counts['units']:,} units, "
              f"{data.counts['expert_ratings']:,} ratings, {data.counts['raters']} raters; files "
              + ", ".join(f"{fmt} {size / 1024:,.0f} KiB" for fmt, size in sorted(data.sizes.items()))
              + f"; {args.experts} experts × {args.items} pending assignments")
        server, base = server_start(args, env, log)
        served_by = "gunicorn's workers, from the database"
        if nginx:
            downloads_base = base
            if args.download_workers:
                pool, downloads_base = server_start(args, env, log, workers=args.download_workers)
            proxy, base = nginx_start(nginx, base.removeprefix("http://"), downloads_base.removeprefix("http://"),
                                      work / "downloads", work)
            served_by = ("nginx from disk (X-Accel-Redirect; Django checks access in "
                         + (f"its own {args.download_workers} {args.worker_class} workers)" if pool
                            else "the same workers)"))
        elif args.offload == "auto":
            print("nginx is not installed (apt-get install -y nginx): the clients talk to gunicorn directly")
        print(f"gunicorn: {args.workers} {args.worker_class} workers"
              + (f" × {args.threads} threads" if args.worker_class == "gthread" else "")
              + (" behind nginx" if nginx else "") + f" at {base}; downloads sent by {served_by}; "
              f"warm-up {args.warmup:g} s, phases of {args.phase_seconds:g} s")
        ratios = {}
        for think in args.think:
            ratios[think] = report(args, measure(args, data, base, server, think), think)
        tracebacks = log.read_text(errors="replace").count("Traceback")
        print(f"\ntracebacks in gunicorn's log: {tracebacks}" + (f" (see {log})" if tracebacks else ""))
        keep_log = args.keep_log or bool(tracebacks)
        summary = {"think": [r for t, r in ratios.items() if t > 0], "nothink": [r for t, r in ratios.items() if t == 0]}
        print("downloads: " + (f"p95_ratio_nothink={summary['nothink'][0]:.2f} " if summary["nothink"] else "")
              + (f"p95_ratio_think={summary['think'][-1]:.2f} " if summary["think"] else "")
              + f"(goal ≤ 1.20; files sent by {'nginx' if nginx else 'gunicorn'})")
    finally:
        kit.stop(proxy)
        kit.stop(pool)
        kit.stop(server)
        shutil.rmtree(work, ignore_errors=True)
        kit.finish(database, log, keep_log=keep_log, label="gunicorn's log")


if __name__ == "__main__":
    main()
