"""Start, watch, resume or cancel an LLM judge run.

    manage.py judge_run --models openai/gpt-4o --cases "dimension=textual,difficulty=hard|expert" --wait
    manage.py judge_run --limit 200                 # queue it; `manage.py run_worker` executes it
    manage.py judge_run --watch 12                  # progress bar of a run a worker is executing
    manage.py judge_run --resume 12 [--wait]        # after a crash, a 401 or a cancel: only unfinished items
    manage.py judge_run --retry 12 [--wait]         # failed items (HTTP errors, unreadable answers) sent again
    manage.py judge_run --cancel 12
    manage.py judge_run --status 12
    manage.py judge_run --fake-server --wait        # offline: a local fake endpoint (see docs/judge-pipeline.md, "The fake endpoint")
    manage.py judge_run --judge a/x,b/y --repeat 3  # a series of 3 runs per judge on the same responses (§6.3.2, §8.4)

The same from the browser: /judge/runs/new/ (docs/judge-runs.md).
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, TypedDict

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from evaluations.models import RubricVersion
from evaluations.selectors import rubric_active, rubric_by_version


class CommandSelection(TypedDict):
    """The responses a run covers and its name and budget, from the command line: `judge_run_create`'s keywords."""

    models: list[str]
    cases: str | None
    run_label: str | None
    limit: int | None
    label: str
    budget: Decimal | None
    conditions: list[str]


class Command(BaseCommand):
    help = "Start, watch, resume or cancel an LLM judge run (methodology §5.3, §5.6)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rubric", help="rubric version, e.g. 1.0 (default: the active rubric)")
        parser.add_argument("--models", help="comma-separated evaluated model names (default: all)")
        parser.add_argument("--cases", help='case filter, e.g. "dimension=textual|doctrinal,difficulty=hard,'
                                            'tradition=reformed|none,visibility=public,external_id=TXT-*"')
        parser.add_argument("--run-label", help="only responses with this run label")
        parser.add_argument("--condition", help="only responses of these generation conditions (comma-separated names; "
                                                "default: every condition)")
        parser.add_argument("--limit", type=int, help="at most this many responses (lowest ids first)")
        parser.add_argument("--label", default="", help="a name for the run")
        parser.add_argument("--base-url", help="override FAITHBENCH_LLM_BASE_URL for this run")
        parser.add_argument("--wait", action="store_true", help="execute in this process with a progress bar")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="resume a run: send only unfinished items")
        parser.add_argument("--retry", type=int, metavar="RUN_ID",
                            help="send a stopped run's failed items again (and its items without a result)")
        parser.add_argument("--force", action="store_true", help="with --resume: even if the worker wrote recently")
        parser.add_argument("--cancel", type=int, metavar="RUN_ID", help="cancel a queued or running run")
        parser.add_argument("--status", type=int, metavar="RUN_ID", help="print a run's summary")
        parser.add_argument("--watch", type=int, metavar="RUN_ID", help="show the progress of a run until it stops")
        parser.add_argument("--budget", type=Decimal, metavar="AMOUNT",
                            help="stop sending calls once the run has cost this much (FAITHBENCH_CURRENCY); "
                                 "with --resume: a new, higher budget")
        parser.add_argument("--judge", metavar="MODEL[,MODEL…]",
                            help="the primary judge (default FAITHBENCH_JUDGE_PRIMARY_MODEL); several, comma-separated: "
                                 "a run per judge on the same responses (judge comparison, §6.3.2)")
        parser.add_argument("--repeat", type=int, nargs="?", const=4, default=1, metavar="N",
                            help="N runs (--repeat alone: 4) of the same judges on the same responses (§8.4; reports "
                                 "average them)")
        parser.add_argument("--estimate", action="store_true",
                            help="print the calls, tokens and cost the selection would use, and create nothing")
        parser.add_argument("--fake-server", action="store_true",
                            help="with --wait: judge against an in-process fake endpoint (offline demo)")

    def handle(self, *args: Any, **options: Any) -> None:
        from evaluations import tasks
        from evaluations.judge import services
        from evaluations.judge.selectors import judge_run_get, judge_run_summary
        from evaluations.models import JudgeRun

        def get_run(run_id: int) -> JudgeRun:
            found = judge_run_get(pk=run_id)
            if found is None:
                raise CommandError(f"no judge run {run_id}")
            return found

        try:
            if options["status"]:
                self._print_summary(judge_run_summary(run=get_run(options["status"])))
                return
            if options["watch"]:
                self._watch(get_run(options["watch"]))
                return
            if options["cancel"]:
                run = services.judge_run_cancel(run=get_run(options["cancel"]))
                self.stdout.write(f"run {run.pk}: {run.get_status_display().lower()}")
                return
            with self._endpoint(fake_server=options["fake_server"], base_url=options["base_url"],
                                wait=options["wait"]) as base_url:
                if options["estimate"]:
                    judges = [j.strip() for j in (options["judge"] or "").split(",") if j.strip()]
                    self._estimate(rubric=self._rubric(options["rubric"]), primary_model=judges[0] if judges else None,
                                   selection=self._selection(options), base_url=base_url)
                    return
                if options["retry"]:
                    run, retried = services.judge_run_retry_failed(run=get_run(options["retry"]))
                    self.stdout.write(f"run {run.pk}: {retried} failed item(s) will be sent again")
                    firsts = [run]
                elif options["resume"]:
                    run = services.judge_run_resume(run=get_run(options["resume"]), force=options["force"],
                                                    budget=options["budget"], base_url=base_url)
                    firsts = [run]
                else:
                    judges = [j.strip() for j in (options["judge"] or "").split(",") if j.strip()]
                    runs = services.judge_runs_create(
                        rubric=self._rubric(options["rubric"]), judges=judges, repeats=1, base_url=base_url,
                        **self._selection(options),
                    )
                    firsts, run = runs, runs[0]
                if options["repeat"] < 1:
                    raise CommandError("--repeat must be at least 1")
                series = []
                for first in firsts:
                    self.stdout.write(f"run {first.pk}: {first.total_items} item(s), judge {first.primary_model} "
                                      f"(fallback {first.fallback_model}, secondary {first.secondary_model}) at "
                                      f"{first.base_url}")
                    self._print_estimate(first)
                    members = [first] + [services.judge_run_repeat(run=first) for _ in range(options["repeat"] - 1)]
                    if len(members) > 1:
                        self.stdout.write(f"a series of {len(members)} runs: {', '.join(str(r.pk) for r in members)} "
                                          "(reports average their scores; check: manage.py judge_bias runs --series "
                                          f"{first.pk})")
                    series += members
                if len(firsts) > 1:
                    self.stdout.write(f"compare the judges: manage.py judge_bias judges "
                                      f"{' '.join(f'--run {r.pk}' for r in firsts)}")
                for member in series:
                    if options["wait"]:
                        self._execute(member)
                    else:
                        tasks.judge_run_enqueue(run=member)
                if not options["wait"]:
                    self.stdout.write(f"queued; a worker executes it: manage.py run_worker\n"
                                      f"progress: manage.py judge_run --watch {run.pk}  or  /judge/runs/{run.pk}/")
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc

    @staticmethod
    def _selection(options: Mapping[str, Any]) -> CommandSelection:
        """The command line's selection (Django's parsed options) as `judge_run_create`'s keywords."""
        return {"models": [m for m in (options["models"] or "").split(",") if m.strip()], "cases": options["cases"],
                "run_label": options["run_label"], "limit": options["limit"], "label": options["label"],
                "budget": options["budget"],
                "conditions": [c for c in (options["condition"] or "").split(",") if c.strip()]}

    def _estimate(self, *, rubric: RubricVersion, primary_model: str | None, selection: CommandSelection,
                  base_url: str | None) -> None:
        """The estimate of the selection, from a run created and rolled back (nothing is kept)."""
        from evaluations.judge.estimate import judge_run_plan

        estimate = judge_run_plan(rubric=rubric, primary_model=primary_model, base_url=base_url, **selection)
        self._write_estimate(estimate, budget=selection["budget"])
        self.stdout.write("nothing was created (--estimate)")

    def _print_estimate(self, run: Any) -> None:
        from evaluations.judge.estimate import judge_run_estimate

        self._write_estimate(judge_run_estimate(run=run), budget=run.budget)

    def _write_estimate(self, estimate: Any, *, budget: Decimal | None) -> None:
        from evaluations.judge.config import money

        cost = money(estimate.cost) if estimate.cost is not None else "unknown"
        self.stdout.write(f"estimate: {estimate.items} item(s), {estimate.calls} call(s), ~{estimate.prompt_tokens:,} "
                          f"prompt + ~{estimate.completion_tokens:,} completion tokens, cost ~{cost} ({estimate.basis})"
                          + (f"; budget {money(budget)}" if budget is not None else ""))

    @contextlib.contextmanager
    def _endpoint(self, *, fake_server: bool, base_url: str | None, wait: bool) -> Iterator[str | None]:
        if not fake_server:
            yield base_url
            return
        if not wait:
            raise CommandError("--fake-server runs in this process: use it with --wait")
        from evaluations.judge.fake_server import FakeLLMServer

        with FakeLLMServer(latency=0.02) as server:
            self.stdout.write(f"fake endpoint at {server.base_url}")
            yield server.base_url

    def _rubric(self, version: str | None) -> RubricVersion:
        if not version:
            return rubric_active()
        try:
            return rubric_by_version(version=version)
        except RubricVersion.DoesNotExist as exc:
            raise CommandError(f"no rubric version {version!r}") from exc

    def _execute(self, run: Any) -> None:
        from evaluations.judge.pipeline import judge_run_execute

        bar = tqdm(total=run.total_items, unit="item", desc=f"judge run {run.pk}", disable=None)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            summary = judge_run_execute(run=run, on_progress=progress)
        finally:
            bar.close()
        self._print_summary(summary)

    def _watch(self, run: Any) -> None:
        from evaluations.judge.selectors import judge_run_summary

        bar = tqdm(total=run.total_items, unit="item", desc=f"judge run {run.pk}", disable=None)
        try:
            while True:
                run.refresh_from_db()
                bar.n = run.processed_items
                bar.set_postfix_str(run.status)
                if not run.is_active:
                    break
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            bar.close()
        self._print_summary(judge_run_summary(run=run))

    def _print_summary(self, summary: Any) -> None:
        for line in summary.lines():
            self.stdout.write(line)
