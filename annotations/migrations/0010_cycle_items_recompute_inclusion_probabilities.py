"""Recompute the inclusion probabilities of items drawn before they were recorded (issue 22 item 3).

From each standard cycle's stored `draw_report["strata"]` (pool size and drawn count per dimension ×
difficulty × tradition × model) and the items of the cycle and of its previous cycle:

- a random item: π = (random items of its stratum) / (its eligible pool), the eligible pool being the stratum's
  pool minus the previous cycle's items in it (never re-drawn as new) minus this cycle's edge cases in it — the
  quota / eligible pool the draw used. Approximations: the facets (dimension, difficulty, tradition, model) are
  read as they are now, and a previous item that had already left the pool at draw time is still subtracted;
- a carried anchor: 1; another carried item: r / M, the r carried non-anchors of its dimension over the M
  non-anchor items of the previous cycle in that dimension (anchor flags as they are now);
- an edge case: basis edge_case, no probability (picked on purpose);
- anything else (a cross-tradition cycle, a report without strata, counts that do not add up): unknown (an edge
  case of a cycle without strata — a judge-disagreement review — is still edge_case).
The leaderboard excludes `unknown` items with a warning. Reversing leaves the fields as they are.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.db import migrations

EDGE_SOURCES = ("edge_length", "edge_judge")
FACETS = ("response__test_case__dimension", "response__test_case__difficulty", "response__test_case__tradition__key",
          "response__model__name")


def legacy_probabilities(
    report: object,  # the stored draw_report, as the JSONField holds it (checked below)
    items: list[tuple[int, str, bool, tuple[str, str, str, str]]],
    previous: list[tuple[bool, tuple[str, str, str, str]]],
) -> dict[int, tuple[float | None, str, list[str]]]:
    """{item id: (π or None, basis, stratum)} for one legacy cycle from its report, its items
    (id, source, is_anchor, facets) and its previous cycle's items (is_anchor, facets)."""
    strata = report.get("strata") if isinstance(report, dict) else None
    out: dict[int, tuple[float | None, str, list[str]]] = {}
    if not strata:
        return {item_id: (None, "edge_case", [facets[0], "edge"]) if source in EDGE_SOURCES else (None, "unknown", [])
                for item_id, source, _, facets in items}
    pool = {(r["dimension"], r["difficulty"], r["tradition"] or "", r["model"]): int(r["pool"]) for r in strata}
    previous_in = Counter(facets for _, facets in previous)
    previous_others = Counter(facets[0] for anchor, facets in previous if not anchor)
    edges_in = Counter(facets for _, source, _, facets in items if source in EDGE_SOURCES)
    random_in = Counter(facets for _, source, _, facets in items if source == "random")
    carried_others = Counter(facets[0] for _, source, anchor, facets in items if source == "carried" and not anchor)
    for item_id, source, anchor, facets in items:
        dimension = facets[0]
        if source in EDGE_SOURCES:
            out[item_id] = (None, "edge_case", [dimension, "edge"])
        elif source == "carried" and anchor:
            out[item_id] = (1.0, "recomputed", [dimension, "anchor"])
        elif source == "carried":
            r, m = carried_others[dimension], previous_others[dimension]
            ok = 0 < r <= m
            out[item_id] = (r / m if ok else None, "recomputed" if ok else "unknown", [dimension, "carried"])
        elif source == "random" and facets in pool:
            eligible = pool[facets] - previous_in[facets] - edges_in[facets]
            n = random_in[facets]
            ok = 0 < n <= eligible
            out[item_id] = (n / eligible if ok else None, "recomputed" if ok else "unknown", list(facets))
        else:
            out[item_id] = (None, "unknown", [])
    return out


def recompute(apps: Any, schema_editor: Any) -> None:
    CalibrationCycle = apps.get_model("annotations", "CalibrationCycle")
    CycleItem = apps.get_model("annotations", "CycleItem")

    def rows(cycle_id: int) -> list[tuple[int, str, bool, tuple[str, str, str, str]]]:
        return [(pk, source, anchor, (dim, diff, trad or "", model)) for pk, source, anchor, dim, diff, trad, model in
                CycleItem.objects.filter(cycle_id=cycle_id).values_list("pk", "source", "is_anchor", *FACETS)]

    for cycle in CalibrationCycle.objects.order_by("pk"):
        if not CycleItem.objects.filter(cycle=cycle, inclusion_basis="unknown").exists():
            continue
        items = rows(cycle.pk)
        previous = [(anchor, facets) for _, _, anchor, facets in rows(cycle.previous_id)] if cycle.previous_id else []
        report = cycle.draw_report if getattr(cycle, "kind", "standard") == "standard" else {}
        updates: dict[tuple[float | None, str, tuple[str, ...]], list[int]] = defaultdict(list)
        for item_id, (pi, basis, stratum) in legacy_probabilities(report, items, previous).items():
            updates[(pi, basis, tuple(stratum))].append(item_id)
        for (pi, basis, key), ids in updates.items():
            CycleItem.objects.filter(pk__in=ids, inclusion_basis="unknown").update(
                inclusion_probability=pi, inclusion_basis=basis, stratum=list(key))


class Migration(migrations.Migration):

    dependencies = [
        ("annotations", "0009_cycle_inclusion_probabilities_draw_strategy"),
        ("evaluations", "0008_theobert_runs_case_revisions_anchors"),
    ]

    operations = [
        migrations.RunPython(recompute, migrations.RunPython.noop, elidable=True),
    ]
