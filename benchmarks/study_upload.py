"""A 1,000,000-row study upload (issue 33, part 4): the pages answer at once, the worker checks and imports.

A long CSV (`item,rater,score`: 200,000 items × 5 raters, ≈ 13 MB) goes through the upload page's three steps in one
process (upload, column mapping, the confirm page that hands the check to the worker); another process does what
`manage.py run_worker` does with the two jobs: the check (a dry run: read, check, write and roll back) and the
import. Measured: the slowest page answer, the check's and the import's wall time and CPU seconds (the worker's and,
on PostgreSQL, those of the server process serving its connection, read from /proc), the worker process's peak RSS.
Goals: every page < 1 s; import ≥ 50,000 rows/s; worker peak RSS < 400 MB.

Run: `python benchmarks/study_upload.py [--rows N] [--database-url postgres://postgres@127.0.0.1:5432/postgres]`
(default: a throwaway SQLite file; with a URL, a throwaway PostgreSQL database created and dropped there).
The last line is `upload: rows=R page_s=P import_s=I peak_rss_mb=M`.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.kit import throwaway_database  # noqa: E402

RATERS = 5
GOALS = {"page_s": 1.0, "rows_per_s": 50_000, "peak_rss_mb": 400}


def write_csv(path: Path, rows: int) -> None:
    items = max(1, rows // RATERS)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("item,rater,score\n")
        written = 0
        for i in range(items):
            for r in range(RATERS):
                if written == rows:
                    return
                handle.write(f"item-{i:07d},rater-{r},{(i * 7 + r * 3) % 4}\n")
                written += 1


def setup_django() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"  # DEBUG off: no query log
    import django

    django.setup()


def child_pages(args: argparse.Namespace) -> dict[str, Any]:
    """Migrate, then the upload page's three steps as an admin; times of each answer."""
    setup_django()
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.test import Client

    from accounts.models import User
    from accounts.services import user_create

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    admin = user_create(email="admin@bench.test", password="bench-pass-1234", role=User.Role.ADMIN,
                        display_name="Bench Admin", is_superuser=True)
    client = Client()
    client.force_login(admin)
    times = {}
    body = Path(args.csv).read_bytes()
    assert client.get("/calibration/studies/upload/").status_code == 200  # warm: URLs, templates, middleware loaded
    start = time.perf_counter()
    response = client.post("/calibration/studies/upload/", {
        "study": "Upload bench", "fmt": "long",
        "file": SimpleUploadedFile("bench.csv", body, content_type="text/csv")})
    times["upload"] = time.perf_counter() - start
    assert response.status_code == 302, response.status_code
    start = time.perf_counter()
    page = client.get("/calibration/studies/upload/mapping/")
    times["mapping page"] = time.perf_counter() - start
    assert page.status_code == 200, page.status_code
    start = time.perf_counter()
    response = client.post("/calibration/studies/upload/mapping/", {
        "item": "item", "rater": "rater", "score": "score", "default_dimension": "quality", "default_kind": "human",
        "level": "ordinal"})
    times["mapping"] = time.perf_counter() - start
    assert response.status_code == 302, response.status_code
    start = time.perf_counter()
    confirm = client.get("/calibration/studies/upload/confirm/")
    times["confirm (check queued)"] = time.perf_counter() - start
    assert confirm.status_code == 200 and b"upload-progress" in confirm.content, confirm.status_code
    pending = client.session["study_upload"]
    return {"times": times, "pending": pending}


def child_worker(args: argparse.Namespace) -> dict[str, Any]:
    """The worker's two jobs, as `run_worker` runs them: the check (dry run), then the import."""
    setup_django()
    from calibration.models import StudyScore
    from calibration.studies.uploads import upload_job_run

    pending = json.loads(args.pending)
    common = {"token": pending["token"], "study": pending["study"], "fmt": pending["fmt"], "name": pending["name"],
              "options": pending["options"]}
    server = server_cpu()
    start, cpu, db_cpu = time.perf_counter(), time.process_time(), server()
    checked = upload_job_run(**common, dry_run=True)
    check_s, check_cpu, check_db = time.perf_counter() - start, time.process_time() - cpu, server() - db_cpu
    assert checked["status"] == "checked", checked
    start, cpu, db_cpu = time.perf_counter(), time.process_time(), server()
    imported = upload_job_run(**common, dry_run=False)
    import_s, import_cpu, import_db = time.perf_counter() - start, time.process_time() - cpu, server() - db_cpu
    assert imported["status"] == "imported", imported
    stored = StudyScore.objects.count()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {"check_s": check_s, "import_s": import_s, "check_cpu": check_cpu, "import_cpu": import_cpu,
            "check_db_cpu": check_db, "import_db_cpu": import_db, "stored": stored, "peak_rss_mb": peak,
            "load": os.getloadavg()[0]}


def server_cpu() -> Any:
    """A clock of the CPU seconds the PostgreSQL server process serving this connection has used (read from /proc:
    the server must run on this machine), or one that reads nan (SQLite: its time is the worker's own)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return lambda: float("nan")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    ticks = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    return read


def run_child(kind: str, args: argparse.Namespace, env: dict[str, str], *extra: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", kind, "--csv", args.csv, *extra], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--database-url", default="", help="a PostgreSQL server URL (a throwaway database is made)")
    parser.add_argument("--child", choices=["pages", "worker"], help=argparse.SUPPRESS)
    parser.add_argument("--csv", default="", help=argparse.SUPPRESS)
    parser.add_argument("--pending", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = child_pages(args) if args.child == "pages" else child_worker(args)
        print(json.dumps(result), flush=True)
        return

    folder = Path(tempfile.mkdtemp(prefix="fb-upload-bench-"))
    args.csv = str(folder / "bench.csv")
    write_csv(Path(args.csv), args.rows)
    size_mb = Path(args.csv).stat().st_size / 1e6
    print(f"# {args.rows:,} rows, {size_mb:.1f} MB ({RATERS} raters × {args.rows // RATERS:,} items)", flush=True)
    env = dict(os.environ, FAITHBENCH_STUDY_UPLOAD_DIR=str(folder / "uploads"),
               FAITHBENCH_STUDY_MAX_ROWS=str(args.rows))
    database = throwaway_database(args.database_url or None, prefix="fb_upload_bench")
    env["DATABASE_URL"] = database.url
    try:
        pages = run_child("pages", args, env)
        worker = run_child("worker", args, env, "--pending", json.dumps(pages["pending"]))
    finally:
        database.drop()
        shutil.rmtree(folder, ignore_errors=True)
    vendor = database.vendor
    for label, seconds in pages["times"].items():
        print(f"page {label:<24} {seconds:7.3f} s")
    page_s = max(pages["times"].values())
    rate = args.rows / worker["import_s"]
    print(f"worker check (dry run)         {worker['check_s']:7.1f} s  ({args.rows / worker['check_s']:,.0f} rows/s)")
    print(f"worker import                  {worker['import_s']:7.1f} s  ({rate:,.0f} rows/s; {worker['stored']:,} "
          f"scores stored, {vendor})")
    print(f"worker CPU (this process only) check {worker['check_cpu']:.1f} s, import {worker['import_cpu']:.1f} s "
          f"({args.rows / max(worker['import_cpu'], 1e-9):,.0f} rows per CPU-second; the database server's own time "
          f"is not in it); load average {worker['load']:.1f} on {os.cpu_count()} cores")
    if vendor == "PostgreSQL":
        total = worker["import_cpu"] + worker["import_db_cpu"]
        print(f"database server CPU (the worker's connection) check {worker['check_db_cpu']:.1f} s, import "
              f"{worker['import_db_cpu']:.1f} s; the import's worker + server CPU {total:.1f} s "
              f"({args.rows / max(total, 1e-9):,.0f} rows per CPU-second)")
    print(f"worker peak RSS                {worker['peak_rss_mb']:7.0f} MB")
    verdicts = [("pages < 1 s", page_s < GOALS["page_s"]), ("import ≥ 50,000 rows/s", rate >= GOALS["rows_per_s"]),
                ("worker peak RSS < 400 MB", worker["peak_rss_mb"] < GOALS["peak_rss_mb"])]
    print("goals: " + "; ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in verdicts))
    print(f"upload: rows={args.rows} page_s={page_s:.3f} import_s={worker['import_s']:.1f} "
          f"peak_rss_mb={worker['peak_rss_mb']:.0f}")


if __name__ == "__main__":
    main()
