"""Benchmark: 5,000 judgments against the fake endpoint at 100 ms latency with 50 requests in flight.

Usage:
    .venv/bin/python benchmarks/judge_throughput.py                 # SQLite and PostgreSQL (if reachable)
    .venv/bin/python benchmarks/judge_throughput.py --backend sqlite
    .venv/bin/python benchmarks/judge_throughput.py --backend postgres --database-url postgres://postgres@127.0.0.1:5432/postgres

The limit is concurrency / latency = 50 / 0.1 s = 500 judgments/s; the goal is ≥ 0.85 of it on a quiet machine. Each
backend runs in its own process with a throwaway database (a temp SQLite file; a PostgreSQL database
created on the given server and dropped afterwards). The fake server runs in a separate process, as a
real endpoint would, so it does not compete with the pipeline for the GIL. Prints judgments per second
and the ratio to the limit; the timed span is the whole judge_run_execute call (reading the items,
building the prompts, HTTP, parsing, scoring and writing every result to the database). Also printed: the
pipeline process's CPU time over that span (all threads) per judgment, a figure that a busy machine disturbs much
less than the wall-clock rate, so two versions can be compared while other work runs, and the part of it spent in
the database thread (reading items, storing results, counting calls, heartbeats).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import kit  # noqa: E402

# No Gemini model: every item is then exactly one judgment (no self-preference second opinion).
MODELS = [("anthropic/claude-sonnet-4.5", "Anthropic", "claude"), ("openai/gpt-4o", "OpenAI", "gpt"),
          ("meta-llama/llama-3.3-70b-instruct", "Meta", "llama"), ("mistralai/mistral-large", "Mistral", "mistral")]


def start_fake_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = kit.free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "evaluations.judge.fake_server", "--port", str(port), "--latency", str(latency)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base_url}/health", timeout=1).read()  # noqa: S310 (loopback)
            return process, base_url
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the fake server did not start")


def generate(directory: Path, n_items: int, seed: int) -> tuple[Path, Path]:
    import random

    rng = random.Random(seed)
    n_cases = -(-n_items // len(MODELS))
    cases, responses = directory / "cases.jsonl", directory / "responses.jsonl"
    with open(cases, "w", encoding="utf-8") as handle:
        for i in range(n_cases):
            handle.write(json.dumps({
                "external_id": f"JB-{i:05d}", "dimension": kit.DIMENSIONS[i % 6], "difficulty": kit.DIFFICULTIES[i % 4],
                "tradition": kit.TRADITIONS[i % 6], "question_type": kit.TYPES[i % 4], "visibility": "public",
                "prompt": " ".join(rng.choices(kit.WORDS, k=30)) + "?",
                "reference_answer": " ".join(rng.choices(kit.WORDS, k=40)) if i % 2 else "",
            }, ensure_ascii=False) + "\n")
    with open(responses, "w", encoding="utf-8") as handle:
        written = 0
        for i in range(n_cases):
            for name, provider, family in MODELS:
                if written == n_items:
                    break
                handle.write(json.dumps({
                    "case": f"JB-{i:05d}", "model": name, "provider": provider, "family": family,
                    "run_label": "bench", "text": " ".join(rng.choices(kit.WORDS, k=rng.randint(80, 400))),
                }, ensure_ascii=False) + "\n")
                written += 1
    return cases, responses


def child(args: argparse.Namespace) -> None:
    """Runs in a fresh process with DATABASE_URL pointing at a throwaway database."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"  # DEBUG off: no query log
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from evaluations.importing import import_file
    from evaluations.judge.pipeline import judge_run_execute
    from evaluations.judge.services import judge_run_create
    from evaluations.models import JudgeRun, RubricVersion

    call_command("migrate", verbosity=0)
    tmp = Path(tempfile.mkdtemp(prefix="fb-judge-bench-"))
    cases, responses = generate(tmp, args.items, args.seed)
    import_file(path=cases, kind="cases", progress=False)
    import_file(path=responses, kind="responses", progress=False)
    run = judge_run_create(rubric=RubricVersion.objects.get(version="1.0"), base_url=args.base_url,
                           primary_model="google/gemini-3-flash-preview", label="benchmark")
    started, cpu_started, db_started = time.perf_counter(), time.process_time(), time.thread_time()
    summary = judge_run_execute(run=run, config_overrides={"max_in_flight": args.concurrency})
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    db_cpu = time.thread_time() - db_started  # this thread owns the database; the event loop runs in another
    run.refresh_from_db()
    assert summary.adds_up and summary.pending == 0, summary.lines()
    assert run.status == JudgeRun.Status.FINISHED and run.calls == args.items, (run.status, run.calls)
    print(json.dumps({
        "vendor": connection.vendor, "judgments": run.calls, "items": run.processed_items,
        "scored": summary.scored, "seconds": elapsed, "cpu_seconds": cpu, "db_thread_cpu_seconds": db_cpu,
    }), flush=True)
    connection.close()


def run_backend(args: argparse.Namespace, backend: str, base_url: str) -> dict | None:
    if backend == "sqlite":
        database = kit.throwaway_database(None, prefix="fb_judge_bench")
    else:
        import psycopg

        try:
            database = kit.throwaway_database(args.database_url, prefix="fb_judge_bench")
        except psycopg.OperationalError as exc:
            print(f"postgresql: skipped, cannot reach {args.database_url}: {exc}".splitlines()[0])
            return None
    env = {**os.environ, "DATABASE_URL": database.url}
    try:
        output = subprocess.run(
            [sys.executable, __file__, "--child", "--base-url", base_url, "--items", str(args.items),
             "--concurrency", str(args.concurrency), "--seed", str(args.seed)],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        ).stdout
    except subprocess.CalledProcessError as exc:
        sys.stderr.write(exc.stdout + exc.stderr)
        raise
    finally:
        database.drop()
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_POSTGRES_URL",
                                                                 "postgres://postgres@127.0.0.1:5432/postgres"),
                        help="a PostgreSQL server URL; the script creates and drops its own database there")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=1, help="runs per backend (the best is reported too)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    limit = args.concurrency / args.latency
    server, base_url = start_fake_server(args.latency)
    try:
        print(f"{args.items:,} judgments, fake endpoint latency {args.latency * 1000:.0f} ms, "
              f"{args.concurrency} in flight: limit {limit:.0f} judgments/s; goal ≥ 0.85 of it on a quiet machine")
        backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
        for backend in backends:
            rates = []
            for _ in range(args.repeat):
                result = run_backend(args, backend, base_url)
                if result is None:
                    break
                rate = result["judgments"] / result["seconds"]
                rates.append(rate)
                cpu_ms = 1000 * result["cpu_seconds"] / result["judgments"]
                db_ms = 1000 * result["db_thread_cpu_seconds"] / result["judgments"]
                print(f"{result['vendor']:<10} {result['judgments']:>6} judgments in {result['seconds']:6.2f} s = "
                      f"{rate:6.1f}/s  ratio to limit {rate / limit:.2f}  (CPU {cpu_ms:.3f} ms per judgment, "
                      f"{db_ms:.3f} ms of it in the database thread)")
            if len(rates) > 1:
                print(f"{backend:<10} best {max(rates):.1f}/s ratio {max(rates) / limit:.2f}; "
                      f"median {sorted(rates)[len(rates) // 2]:.1f}/s")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
