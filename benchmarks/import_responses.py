"""Benchmark: import 12,000 model responses (3,000 cases × 4 models) into a fresh database.

Usage:
    .venv/bin/python benchmarks/import_responses.py                       # SQLite, throwaway file
    .venv/bin/python benchmarks/import_responses.py --database-url postgres://postgres@127.0.0.1:5432/postgres

With a PostgreSQL URL the script creates and drops its own throwaway database on that server.
Prints wall time and peak memory (process peak RSS, and Python's own peak allocation via tracemalloc
during the import). Goals: < 10 s and < 300 MB on a 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.kit import TRADITIONS, import_files_write, throwaway_database  # noqa: E402


def generate(directory: Path, n_cases: int, seed: int) -> tuple[Path, Path]:
    return import_files_write(directory, n_cases=n_cases, seed=seed, id_prefix="BENCH",
                              tradition_of=lambda i: TRADITIONS[i % 6],
                              visibility_of=lambda i: "held_out" if i % 2 else "public")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", help="PostgreSQL server URL; default: a throwaway SQLite file")
    parser.add_argument("--cases", type=int, default=3000, help="cases to generate (4 responses each)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="fb-bench-"))
    database = throwaway_database(args.database_url, prefix="fb_bench")
    os.environ["DATABASE_URL"] = database.url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from evaluations.importing import import_file
    from evaluations.models import ModelResponse

    try:
        call_command("migrate", verbosity=0)
        cases, responses = generate(tmp, args.cases, args.seed)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        import_file(path=cases, kind="cases", progress=False)
        cases_done = time.perf_counter()
        report = import_file(path=responses, kind="responses", progress=False)
        finished = time.perf_counter()
        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # Re-import of the same file (every row unchanged), with tracemalloc on to see Python's own peak.
        tracemalloc.start()
        again_started = time.perf_counter()
        again = import_file(path=responses, kind="responses", progress=False)
        again_finished = time.perf_counter()
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert report.created == args.cases * 4 == ModelResponse.objects.count(), report
        assert again.unchanged == args.cases * 4, again
        size_mb = responses.stat().st_size / 1e6
        print(f"database            {connection.vendor}")
        print(f"responses file      {args.cases * 4:,} rows, {size_mb:.1f} MB")
        print(f"cases import        {cases_done - started:6.2f} s  ({args.cases:,} cases)")
        print(f"responses import    {finished - cases_done:6.2f} s")
        print(f"re-import unchanged {again_finished - again_started:6.2f} s  (with tracemalloc on)")
        print(f"peak RSS            {peak_rss:6.0f} MB  (process, incl. Django; {rss_before:.0f} MB before import)")
        print(f"peak Python alloc   {traced_peak / 2**20:6.0f} MB  (tracemalloc, during the re-import)")
        total = finished - started
        print(f"ratio to goals      time {total:.2f} s / 10 s = {total / 10:.2f}, "
              f"memory {peak_rss:.0f} MB / 300 MB = {peak_rss / 300:.2f}")
    finally:
        connection.close()
        database.drop()


if __name__ == "__main__":
    main()
