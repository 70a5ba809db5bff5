"""Ask test models to answer the benchmark's cases (methodology §5.2.1, §15.2) and import their answers.

    manage.py generate_responses --models openai/gpt-4o=OpenAI:gpt,anthropic/claude-sonnet-4.5=Anthropic:claude \\
        --cases "dimension=textual" --run-label 2026-03 [--limit 20] [--fake-server]

Each request uses the test-model configuration: temperature 0.7, at most 2,000 tokens, a minimal system
prompt, with the judge pipeline's client (retries, Retry-After, at most MAX_IN_FLIGHT in flight). The
answers are written to a JSONL file and imported with the ordinary responses importer (all or nothing).
A model already known needs no "=provider:family"; a new one does.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.importing import ImportFailed, import_file
from evaluations.models import EvaluatedModel


class Command(BaseCommand):
    help = "Generate model responses for test cases through the OpenAI-compatible endpoint, then import them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--models", required=True,
                            help="comma-separated model names, each optionally =Provider:family for new models")
        parser.add_argument("--cases", help="case filter, as for judge_run")
        parser.add_argument("--run-label", default="default")
        parser.add_argument("--limit", type=int, help="at most this many cases")
        parser.add_argument("--base-url", help="override FAITHBENCH_LLM_BASE_URL")
        parser.add_argument("--fake-server", action="store_true", help="answer with the in-process fake endpoint")
        parser.add_argument("--output", help="also keep the JSONL file here")

    def handle(self, *args: Any, **options: Any) -> None:
        from evaluations.judge.config import PipelineConfig
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
        with self._endpoint(options) as base_url:
            config = PipelineConfig.from_settings(base_url=base_url)
            rows, failures = asyncio.run(self._generate(config, cases, models, options["run_label"]))
        for (name, error_class), count in sorted(failures.items()):
            self.stderr.write(f"{name}: {count} failed ({error_class})")
        if not rows:
            raise CommandError("no response was generated")
        path = Path(options["output"] or tempfile.mkstemp(suffix=".jsonl", prefix="responses-")[1])
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        try:
            report = import_file(path=path, kind="responses", progress=False)
        except (ImportFailed, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if not options["output"]:
                path.unlink(missing_ok=True)
        self.stdout.write(str(report))

    def _models(self, spec: str) -> list[tuple[str, str, str]]:
        known = {m.name: m for m in EvaluatedModel.objects.all()}
        models = []
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, _, rest = item.partition("=")
            provider, _, family = rest.partition(":")
            if name not in known and not (provider and family):
                raise CommandError(f"model {name!r} is new: write it as {name}=Provider:family")
            models.append((name, provider, family))
        return models

    @contextlib.contextmanager
    def _endpoint(self, options: dict[str, Any]):
        if not options["fake_server"]:
            yield options["base_url"]
            return
        from evaluations.judge.fake_server import FakeLLMServer

        with FakeLLMServer() as server:
            yield server.base_url

    async def _generate(self, config: Any, cases: list, models: list[tuple[str, str, str]], run_label: str
                        ) -> tuple[list[dict], dict[tuple[str, str], int]]:
        from evaluations.judge.client import LLMClient
        from evaluations.judge.config import test_model_payload
        from evaluations.judge.errors import ErrorClass

        rows: list[dict] = []
        failures: dict[tuple[str, str], int] = {}
        async with LLMClient(base_url=config.base_url, api_key=config.api_key, max_in_flight=config.max_in_flight,
                             retry=config.retry, timeout=config.timeout) as client:

            async def one(case: Any, name: str, provider: str, family: str) -> None:
                payload = test_model_payload(model=name, question=case.prompt)
                result = await client.chat(payload)
                if result.error_class == ErrorClass.AUTH:
                    raise CommandError("the endpoint answered 401 Unauthorized: check FAITHBENCH_LLM_API_KEY")
                if not result.ok:
                    failures[(name, result.error_class)] = failures.get((name, result.error_class), 0) + 1
                    return
                rows.append({
                    "case": case.external_id, "model": name, "provider": provider, "family": family,
                    "run_label": run_label, "text": result.content, "temperature": payload["temperature"],
                    "max_tokens": payload["max_tokens"], "system_prompt": payload["messages"][0]["content"],
                    "settings": {"served_by": result.model, "cost": str(result.cost) if result.cost is not None else None},
                    "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                })

            await asyncio.gather(*(one(case, *model) for case in cases for model in models))
        return rows, failures
