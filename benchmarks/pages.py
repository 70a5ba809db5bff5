"""Benchmark: lead and admin pages at realistic sizes — median time and queries per page, against the goals.

Usage:
    .venv/bin/python benchmarks/pages.py                      # SQLite (throwaway files), 5 timed requests per page
    .venv/bin/python benchmarks/pages.py --repeat 9 --database-url postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/pages.py --only leaderboard   # one part: leaderboard, draw, adjudication, admin

Two fresh databases, each in its own process (a temp SQLite file, or a PostgreSQL database created on the
given server and dropped afterwards):

* "big": 3,000 cases × 4 models = 12,000 responses imported through the real importer, and one finished
  judge run with a result for every one of them (12,000 judged items; the model of the primary judge's
  family also gets a secondary judge: about 15,000 results and 58,000 sub-dimension scores), stored through
  the pipeline's own writer (`judge_results_store`) with seeded scores, 2 % failed, 1 % filtered, 1 % fallback.
  Then 20 calibration cycles of 300 items (6,000 cycle items) committed through `cycle_commit` for six panels
  of three experts (18,000 assignments); the experts' scores are bulk-written (a benchmark, not a test): the
  16 older cycles are finished, closed and every disputed item decided through `adjudication_record`;
  the 4 newest are 80 % scored with their disputes open.
* "demo": `manage.py load_demo` (192 responses, the offline judge run, one cycle with scores).

Each page is requested once to warm up, then `--repeat` times as a superuser with Django's test client; the
median is reported, with the number of SQL queries of one request. Goals (issue #10, item 5): leaderboard
< 150 ms at 12,000 judged items; draw preview < 300 ms at the demo size; query counts that do not grow with
the rows (asserted in tests/*/test_query_counts*.py; here they are printed at the big size).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.kit import MODELS, TRADITIONS, import_files_write, throwaway_database  # noqa: E402

N_CASES = 3_000
N_CYCLES, PER_DIMENSION, OPEN_CYCLES = 20, 50, 4
GOALS_MS = {"leaderboard": 150.0, "draw preview": 300.0}


# ----------------------------------------------------------------------------------------------- data


def write_import_files(directory: Path, seed: int) -> tuple[Path, Path]:
    return import_files_write(directory, n_cases=N_CASES, seed=seed, id_prefix="PG",
                              tradition_of=lambda i: TRADITIONS[(i // 6) % 6], visibility_of=lambda i: "public")


def judged_run_build(seed: int) -> Any:
    """A finished judge run with a result for every response, written by the pipeline's writer."""
    from decimal import Decimal

    from evaluations.judge.leaderboard import case_composite
    from evaluations.judge.outcomes import ItemOutcome, ResultRecord, ScoreRecord
    from evaluations.judge.pipeline import SIX_PLACES, work_items
    from evaluations.judge.services import judge_results_store, judge_run_create, judge_run_finish
    from evaluations.models import JudgeResult, JudgeRun, ModelResponse
    from evaluations.selectors import rubric_active

    rng = random.Random(seed)
    run = judge_run_create(rubric=rubric_active(), label="benchmark", base_url="http://127.0.0.1:9/v1",
                           primary_model="google/gemini-3-flash-preview", fallback_model="openai/gpt-4o-mini",
                           secondary_model="openai/gpt-4o-mini")
    # A latent quality per model and per response, so that the models differ and the judges roughly agree.
    model_level = {name: 1.2 + 0.25 * i for i, (name, _, _) in enumerate(MODELS)}
    model_of = dict(ModelResponse.objects.values_list("id", "model__name"))

    def scored(item: Any, model: str, role: str, level: float) -> ResultRecord:
        raw = {key: max(0, min(3, round(level + rng.gauss(0, 0.7)))) for key in item.sub_keys}
        return ResultRecord(
            role=role, judge_model=model, status=JudgeResult.Status.SCORED, attempts=1, raw_response="{}",
            composite=case_composite(raw_scores=raw, sub_weights=item.sub_weights).quantize(SIX_PLACES),
            prompt_tokens=900, completion_tokens=400, cost=Decimal("0.0004"),
            scores=[ScoreRecord(key, value, f"{key}: reasoning for {value}.") for key, value in raw.items()],
        )

    def failed(model: str, role: str, status: str, error_class: str) -> ResultRecord:
        return ResultRecord(role=role, judge_model=model, status=status, error_class=error_class, attempts=3,
                            error_message="benchmark failure", http_status=503 if status == "failed" else 403)

    batch: list[ItemOutcome] = []
    for item in work_items(run=run):
        level = model_level[model_of[item.response_id]] + rng.gauss(0, 0.4)
        outcome = ItemOutcome(response_id=item.response_id)
        draw = rng.random()
        if draw < 0.02:
            outcome.results.append(failed(run.primary_model, "primary", "failed", "server_error"))
        elif draw < 0.03:
            outcome.results.append(failed(run.primary_model, "primary", "filtered", "filtered"))
        elif draw < 0.04:
            outcome.results += [failed(run.primary_model, "primary", "failed", "server_error"),
                                scored(item, run.fallback_model, "fallback", level)]
        else:
            outcome.results.append(scored(item, run.primary_model, "primary", level + 0.2))
            if item.needs_secondary:
                outcome.results.append(scored(item, run.secondary_model, "secondary", level))
        batch.append(outcome)
        if len(batch) == 500:
            judge_results_store(run=run, outcomes=batch)
            batch = []
    judge_results_store(run=run, outcomes=batch)
    judge_run_finish(run=run, status=JudgeRun.Status.FINISHED)
    return run


def people_and_panels_build() -> Any:
    """Six panels (five traditions and a neutral one) of three experts with a lead each; one admin."""
    from accounts.models import User
    from accounts.services import user_create
    from calibration.cycles.services import panel_create
    from evaluations.models import Tradition

    admin = user_create(email="admin@bench.test", password="bench-pass-1234", role=User.Role.ADMIN,
                        display_name="Bench Admin", is_superuser=True)
    neutral = None
    for tradition in [*Tradition.objects.order_by("order"), None]:
        key = tradition.key if tradition else "neutral"
        experts = [user_create(email=f"{key}{i}@bench.test", password="bench-pass-1234", role=User.Role.EXPERT,
                               display_name=f"{key.title()} Expert {i}", tradition=tradition) for i in range(3)]
        lead = user_create(email=f"lead.{key}@bench.test", password="bench-pass-1234", role=User.Role.ADJUDICATOR,
                           display_name=f"{key.title()} Lead", tradition=tradition)
        panel, _ = panel_create(name=f"{key.title()} panel", tradition=tradition, members=experts, lead=lead)
        if tradition is None:
            neutral = panel
    return admin, neutral


def cycles_build(*, admin: Any, neutral: Any, seed: int) -> None:
    """N_CYCLES committed cycles; scores bulk-written; older cycles closed with every dispute decided."""
    from django.db import transaction
    from django.utils import timezone

    from annotations.lifecycle import cycle_close
    from annotations.models import Annotation, Assignment, SubScore
    from annotations.services import sub_dimension_keys
    from calibration.adjudication.selectors import item_states
    from calibration.adjudication.services import adjudication_record
    from calibration.cycles.sampling import DrawParams
    from calibration.cycles.services import cycle_commit

    rng = random.Random(seed)
    keys_of: dict[str, list[str]] = {}
    for number in range(1, N_CYCLES + 1):
        cycle, _ = cycle_commit(name=f"Bench cycle {number:02d}", params=DrawParams(seed=seed + number,
                                min_per_dimension=PER_DIMENSION), neutral_panel=neutral, created_by=admin)
        is_open = number > N_CYCLES - OPEN_CYCLES
        now = timezone.now()
        with transaction.atomic():
            assignments = list(Assignment.objects.filter(cycle=cycle).select_related(
                "item__response__test_case", "cycle").order_by("item_id", "id"))
            finished = [a for a in assignments if not is_open or rng.random() < 0.8]
            annotations = Annotation.objects.bulk_create(
                Annotation(assignment=a, status=Annotation.Status.SUBMITTED, seconds_spent=rng.randint(40, 600),
                           submitted_at=now, rationale="Benchmark rationale.") for a in finished)
            quality: dict[int, int] = {}
            scores = []
            for assignment, annotation in zip(finished, annotations, strict=True):
                dimension = assignment.item.response.test_case.dimension
                if dimension not in keys_of:
                    keys_of[dimension] = sub_dimension_keys(assignment=assignment)
                base = quality.setdefault(assignment.item_id, rng.randint(1, 2))
                scores += [SubScore(annotation=annotation, key=key,
                                    score=max(0, min(3, base + rng.choice([-1, 0, 0, 0, 0, 0, 1]))))
                           for key in keys_of[dimension]]
            SubScore.objects.bulk_create(scores, batch_size=2000)
            Assignment.objects.filter(pk__in=[a.pk for a in finished]).update(status=Assignment.Status.SUBMITTED)
        if not is_open:
            cycle_close(cycle=cycle, actor=admin)
            for state in item_states(cycle_ids=[cycle.pk]).values():
                if state.needs_adjudication:
                    adjudication_record(item_id=state.item_id, adjudicator=admin, reason="rubric_ambiguity",
                                        scores={key: sorted(values)[len(values) // 2]
                                                for key, values in state.scores.items()})


# ----------------------------------------------------------------------------------------- measuring


class TimingRow(TypedDict):
    """One page or call: median, fastest and first time in ms, and the queries of one request."""

    label: str
    ms: float
    first_ms: float
    min_ms: float
    queries: int


class ChildResult(TypedDict):
    """What a child process prints as its last line: the database vendor and its rows."""

    vendor: str
    rows: list[TimingRow]


class Timer:
    def __init__(self, repeat: int) -> None:
        from django.conf import settings
        from django.test import Client

        settings.ALLOWED_HOSTS = ["*"]
        self.repeat = repeat
        self.client = Client()
        self.rows: list[TimingRow] = []

    def login(self, user: Any) -> None:
        self.client.force_login(user)

    def page(self, label: str, url: str, *, method: str = "get", data: dict | None = None,
             before: Any = None, status: int = 200) -> TimingRow:
        def request() -> Any:
            if before is not None:
                before()
            return getattr(self.client, method)(url, data or {})

        return self.call(label, request, status=status)

    def call(self, label: str, function: Any, *, status: int | None = None) -> TimingRow:
        """Time `function` once cold, then --repeat times; count the queries of one more call. With `status`,
        the first answer's status code must be it."""
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        first = time.perf_counter()
        response = function()
        first = time.perf_counter() - first
        if status is not None:
            assert response.status_code == status, (label, response.status_code)
        times = []
        for _ in range(self.repeat):
            start = time.perf_counter()
            function()
            times.append(time.perf_counter() - start)
        with CaptureQueriesContext(connection) as ctx:
            function()
        row: TimingRow = {"label": label, "ms": 1000 * statistics.median(times), "first_ms": 1000 * first,
                          "min_ms": 1000 * min(times), "queries": len(ctx.captured_queries)}
        self.rows.append(row)
        return row


def _optional(module: str, name: str) -> Any:
    """A function that only newer code has (so the same script also measures the code before a change)."""
    import importlib

    return getattr(importlib.import_module(module), name, None)


def measure_big(args: argparse.Namespace, timer: Timer, parts: set[str]) -> None:
    from django.contrib import admin as django_admin
    from django.core.cache import cache
    from django.urls import reverse

    from accounts.models import User
    from evaluations.judge.selectors import leaderboard_build
    from evaluations.models import JudgeRun

    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="fb-pages-bench-"))
    from evaluations.importing import import_file

    cases, responses = write_import_files(tmp, args.seed)
    import_file(path=cases, kind="cases", progress=False)
    import_file(path=responses, kind="responses", progress=False)
    run = judged_run_build(args.seed)
    run.refresh_from_db()
    print(f"# big: {run.processed_items:,} judged items ({run.scored_items:,} scored) in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    admin_user, neutral = people_and_panels_build()
    if parts & {"adjudication", "admin"}:
        t0 = time.perf_counter()
        cycles_build(admin=admin_user, neutral=neutral, seed=args.seed)
        print(f"# big: {N_CYCLES} cycles in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    timer.login(User.objects.get(email="admin@bench.test"))

    if "leaderboard" in parts:
        refresh = _optional("evaluations.judge.selectors", "leaderboard_refresh")
        run = JudgeRun.objects.get(pk=run.pk)
        timer.call("leaderboard: leaderboard_build (computed)", lambda: leaderboard_build(run=run))
        timer.page("leaderboard page, nothing cached", reverse("judge:leaderboard"), before=cache.clear)
        timer.page("leaderboard API, nothing cached", "/api/v1/leaderboard/", before=cache.clear)
        if refresh is not None:
            cache.clear()
            refresh(run=run)  # what the worker does when a run ends
        timer.page("leaderboard page", reverse("judge:leaderboard"))
        timer.page("leaderboard API", "/api/v1/leaderboard/")
        timer.page("judge run list", reverse("judge:run_list"))
        timer.page("judge run detail", reverse("judge:run_detail", args=[run.pk]))
    if "adjudication" in parts:
        timer.page("adjudication queue (admin)", reverse("calibration:adjudication_queue"))
        timer.page("adjudication queue, decided too (admin)", reverse("calibration:adjudication_queue") + "?decided=1")
        timer.login(User.objects.get(email="lead.reformed@bench.test"))
        timer.page("adjudication queue (a panel lead)", reverse("calibration:adjudication_queue"))
        timer.login(User.objects.get(email="admin@bench.test"))
        from calibration.cycles.selectors import cycle_latest

        latest = cycle_latest()
        timer.page("calibration overview", reverse("calibration:index"))
        timer.page("cycle page", reverse("calibration:cycle", args=[latest.pk]))
        timer.page("progress", reverse("calibration:progress"))
        timer.page("lead reopen list", reverse("annotations:lead"))
        if "draw" in parts:
            data = {"name": "Not stored", "seed": "20251124", "min_per_dimension": "50", "refresh_fraction": "0.25",
                    "edge_fraction": "0.10", "previous": str(latest.pk), "action": "preview"}
            timer.page("draw preview (12,000 responses, for reference)", reverse("calibration:draw"), method="post",
                       data=data)
    if "admin" in parts:
        for model in django_admin.site._registry:
            info = model._meta.app_label, model._meta.model_name
            timer.page(f"admin changelist {model._meta.label} ({model._default_manager.count():,} rows)",
                       reverse(f"admin:{info[0]}_{info[1]}_changelist"))


def measure_demo(args: argparse.Namespace, timer: Timer) -> None:
    from django.core.management import call_command
    from django.urls import reverse

    from accounts.models import User
    from calibration.cycles.selectors import cycle_latest
    from evaluations.models import ModelResponse

    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        call_command("load_demo", "--i-know-this-is-not-production", stdout=devnull)
    print(f"# demo: {ModelResponse.objects.count()} responses in {time.perf_counter() - t0:.1f} s", file=sys.stderr,
          flush=True)
    timer.login(User.objects.get(email="admin@faithbench.test"))
    latest = cycle_latest()
    data = {"name": "Demo cycle 2", "seed": "20251123", "min_per_dimension": "16", "refresh_fraction": "0.25",
            "edge_fraction": "0.10", "previous": str(latest.pk), "neutral_panel": str(latest.neutral_panel_id or ""),
            "action": "preview"}
    # The first request of a fresh process (a new web worker) also imports the URLconf and the views.
    cold = subprocess.run([sys.executable, __file__, "--child", "cold"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                          check=True, input=json.dumps(data))
    timer.rows.append(json.loads(cold.stdout.strip().splitlines()[-1]))
    timer.page("draw preview (demo)", reverse("calibration:draw"), method="post", data=data)
    timer.page("draw page (demo)", reverse("calibration:draw"))
    timer.page("adjudication queue (demo admin)", reverse("calibration:adjudication_queue"))
    timer.page("leaderboard page (demo)", reverse("judge:leaderboard"))


def measure_cold() -> None:
    """In a fresh process on the demo database: the draw preview as the first request a web worker serves."""
    data = json.loads(sys.stdin.read())
    start = time.perf_counter()
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    import django

    django.setup()  # what a web worker does when it boots (the admin modules are imported here)
    booted = time.perf_counter()
    from django.conf import settings
    from django.test import Client

    from accounts.models import User

    settings.ALLOWED_HOSTS = ["*"]
    client = Client()
    client.force_login(User.objects.get(email="admin@faithbench.test"))
    logged_in = time.perf_counter()
    response = client.post("/calibration/cycles/draw/", data)
    assert response.status_code == 200, response.status_code
    first = time.perf_counter() - logged_in
    print(f"# cold process: django.setup() {1000 * (booted - start):.0f} ms", file=sys.stderr, flush=True)
    print(json.dumps({"label": "draw preview (demo), first request of a fresh process", "ms": 1000 * first,
                      "first_ms": 1000 * first, "min_ms": 1000 * first, "queries": -1}))


def child(args: argparse.Namespace) -> None:
    if args.child == "cold":
        measure_cold()
        return
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"  # DEBUG off: no query log
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    timer = Timer(args.repeat)
    if args.child == "demo":
        measure_demo(args, timer)
    else:
        measure_big(args, timer, set(args.only))
    print(json.dumps({"vendor": connection.vendor, "rows": timer.rows}), flush=True)
    connection.close()


# ------------------------------------------------------------------------------------------- driving


def run_child(args: argparse.Namespace, kind: str) -> ChildResult:
    database = throwaway_database(args.database_url, prefix="fb_pages_bench")
    try:
        process = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--repeat", str(args.repeat), "--seed", str(args.seed),
             "--only", *args.only],
            cwd=ROOT, env={**os.environ, "DATABASE_URL": database.url}, stdout=subprocess.PIPE, text=True, check=True,
        )
    finally:
        database.drop()
    result: ChildResult = json.loads(process.stdout.strip().splitlines()[-1])  # the child's last line (see child)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="",
                        help="a PostgreSQL server URL; the script creates and drops its own databases there "
                             "(default: SQLite temp files)")
    parser.add_argument("--repeat", type=int, default=5, help="timed requests per page (the median is reported)")
    parser.add_argument("--seed", type=int, default=20251123)
    parser.add_argument("--only", nargs="+", default=["leaderboard", "draw", "adjudication", "admin"],
                        choices=["leaderboard", "draw", "adjudication", "admin"])
    parser.add_argument("--child", choices=["big", "demo", "cold"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    results = []
    if set(args.only) - {"draw"}:
        results.append(run_child(args, "big"))
    if "draw" in args.only:
        results.append(run_child(args, "demo"))
    vendor = results[0]["vendor"]
    print(f"Pages at realistic sizes ({vendor}); median of {args.repeat} requests after one warm-up; "
          f"queries of one request")
    print(f"{'page':<72} {'median':>9} {'min':>9} {'first':>9} {'queries':>7}")
    rows = [row for result in results for row in result["rows"]]
    for row in rows:
        queries = str(row["queries"]) if row["queries"] >= 0 else "—"
        print(f"{row['label']:<72} {row['ms']:7.1f}ms {row['min_ms']:7.1f}ms {row['first_ms']:7.1f}ms "
              f"{queries:>7}")
    print()
    print("goals (median; ratio = figure / goal):")
    for goal, label, note in (
        ("leaderboard", "leaderboard page", "the board the worker cached when the run ended"),
        ("leaderboard", "leaderboard API", "the same, as JSON"),
        ("leaderboard", "leaderboard page, nothing cached", "for reference: computed in the request"),
        ("draw preview", "draw preview (demo)", ""),
        ("draw preview", "draw preview (demo), first request of a fresh process", "for reference"),
    ):
        found = next((r for r in rows if r["label"] == label), None)
        if found is not None:
            limit = GOALS_MS[goal]
            verdict = "met" if found["ms"] < limit else "NOT met"
            print(f"  {label:<56} {found['ms']:7.1f} ms  < {limit:.0f} ms  ratio {found['ms'] / limit:.2f}  {verdict}"
                  + (f"  ({note})" if note else ""))
    growing = [r["label"] for r in rows if r["label"].startswith("admin changelist") and r["queries"] > 12]
    print(f"admin changelists with more than 12 queries at this size: {', '.join(growing) or 'none'}")


if __name__ == "__main__":
    main()
