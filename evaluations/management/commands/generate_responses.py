"""Ask test models to answer the benchmark's cases under a generation condition, k times each (methodology §5.2.1,
§8.4, §9.1, §15.2), and import their answers.

    manage.py generate_responses --models openai/gpt-4o=OpenAI:gpt,anthropic/claude-sonnet-4.5=Anthropic:claude \\
        --cases "dimension=textual" --run-label 2026-03 [--condition reasoning-high] [--repetitions 4] \\
        [--budget 5.00] [--limit 20] [--fake-server]

The condition (default: the standard condition — temperature 0.7, reasoning off, minimal system prompt, 2,000
tokens) says how each request is made (`evaluations.judge.generation.condition_payload`); each case is asked
`--repetitions` times (default 4, §8.4). It is resumable: what already has a response under the condition and run
label is not asked again, and answers are imported in batches as they arrive (each batch all or nothing), so
running the same command again after an interruption, a failure or a spent budget finishes the job. Requests use
the judge pipeline's client (retries, Retry-After, at most MAX_IN_FLIGHT in flight). A model already known needs
no "=provider:family"; a new one does.
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.importing import ImportFailed, import_records
from evaluations.methodology import DEFAULT_REPETITIONS, STANDARD_CONDITION_NAME
from evaluations.models import GenerationCondition, standard_condition_id
from evaluations.selectors import (
    evaluated_models_by_name,
    generation_condition_get,
    generation_condition_names,
)


class Command(BaseCommand):
    help = "Generate model responses for test cases through the OpenAI-compatible endpoint, then import them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--models", required=True,
                            help="comma-separated model names, each optionally =Provider:family for new models")
        parser.add_argument("--cases", help="case filter, as for judge_run")
        parser.add_argument("--run-label", default="default")
        parser.add_argument("--condition", default=STANDARD_CONDITION_NAME,
                            help="generation condition by name (default: the standard condition, §9.1)")
        parser.add_argument("--repetitions", type=int, default=DEFAULT_REPETITIONS,
                            help=f"answers per case and model under the condition (default {DEFAULT_REPETITIONS}, §8.4)")
        parser.add_argument("--budget", type=Decimal, metavar="AMOUNT",
                            help="stop sending once the answers received cost this much (run again to go on)")
        parser.add_argument("--limit", type=int, help="at most this many cases")
        parser.add_argument("--base-url", help="override FAITHBENCH_LLM_BASE_URL")
        parser.add_argument("--fake-server", action="store_true", help="answer with the in-process fake endpoint")
        parser.add_argument("--output", help="also keep the JSONL file here")

    def handle(self, *args: Any, **options: Any) -> None:
        from evaluations.judge.config import PipelineConfig
        from evaluations.judge.generation import generation_pending, generation_run
        from evaluations.judge.selectors import case_filter_parse, cases_for_filter

        try:
            filters = case_filter_parse(options["cases"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        models = self._models(options["models"])
        cases = list(cases_for_filter(filters=filters)[: options["limit"]] if options["limit"]
                     else cases_for_filter(filters=filters))
        if not cases:
            raise CommandError("no active case matches the filter")
        condition = self._condition(options["condition"])
        if options["repetitions"] < 1:
            raise CommandError("--repetitions must be at least 1")
        items = generation_pending(condition=condition, cases=cases, models=models, run_label=options["run_label"],
                                   repetitions=options["repetitions"])
        if not items:
            self.stdout.write(f"nothing to do: every case already has {options['repetitions']} response(s) per model "
                              f"under condition {condition.name!r} and run label {options['run_label']!r}")
            return
        created = 0
        keep = Path(options["output"]) if options["output"] else None
        if keep is not None:
            keep.write_text("", encoding="utf-8")
        with self._endpoint(fake_server=options["fake_server"], base_url=options["base_url"]) as base_url:
            config = PipelineConfig.from_settings(base_url=base_url)
            for outcome in generation_run(items=items, condition=condition, run_label=options["run_label"],
                                          config=config, budget=options["budget"]):
                if outcome.rows:
                    if keep is not None:
                        with keep.open("a", encoding="utf-8") as out:
                            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in outcome.rows)
                    try:
                        created += import_records(records=outcome.rows, kind="responses", label="generated").created
                    except (ImportFailed, ValidationError) as exc:
                        raise CommandError(str(exc)) from exc
        for (name, error_class), count in sorted(outcome.failures.items()):
            self.stderr.write(f"{name}: {count} failed ({error_class})")
        if outcome.auth_failed:
            raise CommandError("the endpoint answered 401 Unauthorized: check FAITHBENCH_LLM_API_KEY "
                               f"({created} response(s) were imported before it)")
        self.stdout.write(f"{created} created under condition {condition.name!r}, {len(items)} asked; "
                          f"cost {outcome.cost}")
        if outcome.over_budget:
            self.stdout.write(f"stopped at the budget ({options['budget']}); run the same command again to go on")
        elif created < len(items):
            self.stdout.write("some requests failed; run the same command again to ask only for those")
        if not created:
            raise CommandError("no response was generated")

    def _condition(self, name: str) -> GenerationCondition:
        if name == STANDARD_CONDITION_NAME:
            return generation_condition_get(pk=standard_condition_id())
        try:
            return generation_condition_get(name=name)
        except GenerationCondition.DoesNotExist:
            known = ", ".join(generation_condition_names())
            raise CommandError(f"--condition: no generation condition named {name!r} (known: {known})") from None

    def _models(self, spec: str) -> list[tuple[str, str, str]]:
        known = evaluated_models_by_name()
        models = []
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, _, rest = item.partition("=")
            provider, _, family = rest.partition(":")
            if name not in known and not (provider and family):
                raise CommandError(f"model {name!r} is new: write it as {name}=Provider:family")
            models.append((name, provider, family))
        return models

    @contextlib.contextmanager
    def _endpoint(self, *, fake_server: bool, base_url: str | None) -> Iterator[str | None]:
        if not fake_server:
            yield base_url
            return
        from evaluations.judge.fake_server import FakeLLMServer

        with FakeLLMServer() as server:
            yield server.base_url
