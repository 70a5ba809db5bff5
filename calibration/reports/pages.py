"""The report page of a stored snapshot without rebuilding it on every view.

A ready snapshot never changes, so what its page shows from the report — the header's provenance and the whole body
(summary, charts, tables) — is rendered once per snapshot and language and kept in Django's cache (production: the
database cache). A view then reads the snapshot row without its payload plus one cache entry; only a miss (the first
view, an evicted entry, a new template version) reads the 3 MB payload back into the typed tree and renders it.
What depends on the request — what changed since, the versions, the form, the permissions — stays per request.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from evaluations.labels import group_label
from evidence.models import Snapshot

from .render import (
    DiagnosticRow,
    IntervalRow,
    RaterRow,
    confusion_svg,
    diagnostic_rows,
    forest_plot_svg,
    forest_rows,
    interval_rows,
    rater_rows,
)
from .schema import Group, Meta, Report

BODY_TEMPLATE = "calibration/reports/_report_body.html"
PAGE_CACHE_VERSION = 4  # bump when the body template or what it is given changes: old entries are then never read
PAGE_CACHE_SECONDS = 30 * 24 * 3600  # a month; an evicted or expired entry is simply rendered again


def _group_label(group: Group) -> str:
    return group_label(group.kind, group.value)


@dataclass(frozen=True)
class StoredPage:
    """What a report page shows from its snapshot: the header's provenance and the rendered body."""

    meta: Meta
    n_experts: int
    body: str


class ReportPage:
    """One ready snapshot's typed report and the page's tables and charts, each built on first use only."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def _read_deferred(self) -> None:
        """The payload and rater key, when the page read the row without them: one query for both."""
        deferred = self.snapshot.get_deferred_fields() & {"payload", "rater_key"}
        if deferred:
            self.snapshot.refresh_from_db(fields=sorted(deferred))

    @cached_property
    def report(self) -> Report:
        self._read_deferred()
        return Report.from_json(self.snapshot.payload or {})  # the stored JSON read back into the typed tree

    @cached_property
    def overall(self) -> Group:
        return self.report.overall

    @cached_property
    def raters(self) -> list[RaterRow]:
        self._read_deferred()
        return rater_rows(self.overall, self.snapshot.rater_key)

    @cached_property
    def interval_tables(self) -> list[tuple[str, list[IntervalRow]]]:
        summary = self.overall
        return [
            ("Experts among themselves", interval_rows(summary.experts, "experts")),
            ("Judge against the expert majority", interval_rows(summary.judge_vs_majority, "judge_vs_majority")),
            ("Judge against adjudicated gold", interval_rows(summary.judge_vs_gold, "judge_vs_gold")),
        ]

    @cached_property
    def diagnostics(self) -> list[DiagnosticRow]:
        self._read_deferred()
        return diagnostic_rows(self.overall, self.snapshot.rater_key)

    @cached_property
    def experts_plot(self) -> str:
        return forest_plot_svg(forest_rows(self.report, "experts", label=_group_label),
                               title="Experts among themselves: α (ordinal)")

    @cached_property
    def judge_plot(self) -> str:
        return forest_plot_svg(forest_rows(self.report, "judge_vs_majority", label=_group_label),
                               title="Judge against the expert majority: α (ordinal)")

    @cached_property
    def gold_confusion(self) -> str:
        return confusion_svg(self.overall.judge_vs_gold.confusion, title="Judge vs adjudicated gold", reference="gold")

    @cached_property
    def majority_confusion(self) -> str:
        return confusion_svg(self.overall.judge_vs_majority.confusion, title="Judge vs expert majority",
                             reference="majority")

    NAMES = ("report", "overall", "raters", "interval_tables", "diagnostics", "experts_plot", "judge_plot",
             "gold_confusion", "majority_confusion")

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.NAMES}

    def lazy_values(self) -> dict[str, Any]:
        """The same names, each built only when read (the page's body comes from the cache and reads none)."""
        return {name: SimpleLazyObject(partial(getattr, self, name)) for name in self.NAMES}

    def stored(self) -> StoredPage:
        body = render_to_string(BODY_TEMPLATE, {**self.values(), "snapshot": self.snapshot})
        return StoredPage(meta=self.report.meta, n_experts=self.report.n_experts, body=str(body))


def page_cache_key(snapshot: Snapshot) -> str:
    finished = snapshot.finished_at.isoformat() if snapshot.finished_at else ""
    return (f"report-page:v{PAGE_CACHE_VERSION}:{snapshot.kind}:{snapshot.pk}:{snapshot.version}:{finished}:"
            f"{snapshot.input_hash}:{get_language() or ''}")


def stored_page(page: ReportPage) -> tuple[StoredPage, SafeString]:
    """The page's stored part from the cache, rendered (and cached) on a miss; with its body marked safe (it was
    rendered by the template engine, which escaped it)."""
    key = page_cache_key(page.snapshot)
    stored = cache.get(key)
    if not isinstance(stored, StoredPage):
        stored = page.stored()
        cache.set(key, stored, PAGE_CACHE_SECONDS)
    return stored, mark_safe(stored.body)  # noqa: S308 - the template engine's own escaped output
