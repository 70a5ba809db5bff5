"""A world that grows: every kind of row the admin and the lead pages list, added through the real services.

The query-count tests (tests/*/test_query_counts*.py) render their pages after `grow(SMALL)` and again
after `grow(LARGE)` more, and require the same number of queries both times: a page whose queries grow
with its rows has an N+1. `grow` covers every model registered in the admin — the admin test fails for
a newly registered model until this module gives it rows — and the scored, disputed and decided items
the lead pages show.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allauth.mfa.totp.internal.auth import TOTP, generate_totp_secret
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from accounts.services import api_token_create, invitation_create
from annotations.lifecycle import cycle_close
from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_skip, annotation_submit, sub_dimension_keys
from calibration.adjudication.selectors import item_states
from calibration.adjudication.services import adjudication_record
from calibration.cycles.sampling import DrawParams
from calibration.cycles.selectors import cycle_latest
from calibration.cycles.services import cycle_commit, panel_create
from calibration.delphi.selectors import weight_structure
from calibration.delphi.services import delphi_response_submit, delphi_round_close, delphi_study_create
from calibration.models import DelphiRound
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from evaluations.importing import import_file
from evaluations.judge.services import judge_run_create, judge_run_finish
from evaluations.methodology import RUBRIC_V1
from evaluations.models import GenerationCondition, Tradition
from evaluations.selectors import rubric_active
from evaluations.services import rubric_version_create
from evaluations.tasks import judge_run_execute_task
from tests.annotations.factories import person
from tests.delphi.factories import allocation
from tests.evaluations.judge.results import store_random_results

SMALL, LARGE = 1, 4
DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]
THEOBERT = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "theobert-eval.json"


@dataclass
class Base:
    """What does not grow: the admin and one panel per tradition (three experts and a lead each)."""

    admin: User
    leads: dict[str, User]


def base_build() -> Base:
    admin = person(User.Role.ADMIN, name="Query Admin", email="query.admin@faithbench.test")
    leads = {}
    for tradition in Tradition.objects.order_by("order"):
        experts = [person(tradition=tradition, name=f"{tradition.name} expert {i}") for i in range(3)]
        leads[tradition.key] = person(User.Role.ADJUDICATOR, tradition=tradition, name=f"{tradition.name} lead")
        panel_create(name=f"{tradition.name} panel", tradition=tradition, members=experts, lead=leads[tradition.key])
    return Base(admin=admin, leads=leads)


def grow(base: Base, n: int, *, tag: str, tmp_path: Path) -> None:
    """Add about n of everything: people, reference data, cases and responses, judge runs, cycles with scores,
    disputes and decisions, Delphi studies with answers."""
    rng = random.Random(f"{tag}:{n}")
    traditions = list(Tradition.objects.order_by("order"))
    # People, and what hangs off them.
    experts = [person(tradition=traditions[i % len(traditions)], name=f"{tag} expert {i}") for i in range(n + 2)]
    adjudicators = [person(User.Role.ADJUDICATOR, name=f"{tag} adjudicator {i}") for i in range(n)]
    for i in range(n):
        Group.objects.create(name=f"{tag} group {i}")
        api_token_create(user=experts[i], name=f"{tag} token {i}", scopes=["reports:read"])
        TOTP.activate(adjudicators[i], generate_totp_secret())
        invitation_create(email=f"{tag}.invited{i}@example.org", tradition=traditions[i % len(traditions)],
                          invited_by=base.admin)
        Tradition.objects.create(key=f"{tag}-tradition-{i}", name=f"{tag} tradition {i}", order=100 + i)
        rubric_version_create(version=f"{tag}.{i}", dimensions=RUBRIC_V1, based_on=rubric_active())
    neutral = None
    for i in range(n):
        neutral, _ = panel_create(name=f"{tag} neutral panel {i}", tradition=None, members=experts[i:i + 3],
                                  lead=adjudicators[i])
    # Generation conditions (reasoning on, another route), then benchmark data through the importer.
    for i in range(n):
        GenerationCondition.objects.create(name=f"{tag}-reasoning-{i}", reasoning=True, reasoning_effort="high")
        GenerationCondition.objects.create(name=f"{tag}-route-{i}", route=f"{tag}-provider-{i}")
    models = [(f"{tag}/model-{i}", "Vendor", f"{tag}fam{i}") for i in range(n + 1)]
    cases = [{"external_id": f"{tag}-{i:04d}", "dimension": DIMENSIONS[i % 6], "difficulty": DIFFICULTIES[i % 4],
              "tradition": ([None] + [t.key for t in traditions])[(i // 6) % (len(traditions) + 1)],
              "question_type": "factual_recall", "visibility": "held_out" if i % 5 == 0 else "public",
              "prompt": f"{tag} question {i}?", "reference_answer": ""} for i in range(12 * n)]
    responses = [{"case": case["external_id"], "model": name, "provider": provider, "family": family,
                  "run_label": "r1", "text": f"{name} on {case['external_id']}: " + "word " * rng.randint(5, 80)}
                 for case in cases for name, provider, family in models]
    theobert = json.loads(THEOBERT.read_text(encoding="utf-8"))
    theobert = [{**row, "id": f"{tag.upper()}_{i:03d}"} for i, row in enumerate(theobert[: 3 * n])]
    for kind, rows in (("cases", cases), ("responses", responses), ("theobert", theobert)):
        path = tmp_path / f"{tag}-{kind}.json"
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        import_file(path=path, kind=kind, progress=False)
    # Judge runs: one per new model, every item stored through the pipeline's writer; a queued task each.
    for name, _, _ in models:
        run = judge_run_create(rubric=rubric_active(), models=[name], base_url="http://127.0.0.1:9/v1",
                               label=f"{tag} {name}", created_by=base.admin)
        store_random_results(run, rng.randint(0, 10**6))
        judge_run_finish(run=run, status="finished")
        judge_run_execute_task.enqueue(run.pk)
    # Calibration cycles: committed, scored (with disagreements and a skip), disputes decided, closed.
    for i in range(n):
        cycle, _ = cycle_commit(name=f"{tag} cycle {i}", params=DrawParams(seed=rng.randint(0, 10**6),
                                min_per_dimension=n + 1), previous=cycle_latest(), neutral_panel=neutral,
                                created_by=base.admin)
        assignments = Assignment.objects.filter(cycle=cycle).select_related("expert", "item").order_by("id")
        for j, assignment in enumerate(assignments):
            keys = sub_dimension_keys(assignment=assignment)
            if j % 17 == 5:
                annotation_skip(assignment=assignment, actor=assignment.expert)
                continue
            level = 1 + assignment.item_id % 2
            scores = {key: max(0, min(3, level + rng.choice([-1, 0, 0, 1]))) for key in keys}
            annotation_submit(assignment=assignment, actor=assignment.expert,
                              data=AnnotationInput(scores=scores, rationale=f"{tag} rationale {j}"))
        cycle_close(cycle=cycle, actor=base.admin)
        disputed = sorted((s for s in item_states(cycle_ids=[cycle.pk]).values() if s.needs_adjudication),
                          key=lambda s: s.item_id)
        for state in disputed[::2]:  # half decided; the rest wait in the adjudication queue
            adjudication_record(item_id=state.item_id, adjudicator=base.admin, reason="rubric_ambiguity",
                                scores={k: sorted(v)[len(v) // 2] for k, v in state.scores.items()})
        report_snapshot_compute(snapshot_id=report_snapshot_request(
            cycle=cycle, requested_by=base.admin, n_resamples=0).pk)
    # Delphi: studies of the new experts, round 1 answered by all and closed, round 2 answered by some.
    structure = weight_structure(rubric=rubric_active())
    for i in range(n):
        panelists = experts[: i + 3]
        study = delphi_study_create(name=f"{tag} study {i}", rubric=rubric_active(), panelists=panelists,
                                    tradition=traditions[i % len(traditions)] if i % 2 else None,
                                    created_by=base.admin).study
        first = study.rounds.get(number=1)
        for k, panelist in enumerate(panelists):
            delphi_response_submit(round=first, expert=panelist,
                                   allocation=allocation(structure, shift=k, rationale=f"{tag} because {k}"))
        delphi_round_close(round=first, actor=base.admin)
        second = DelphiRound.objects.filter(study=study).order_by("-number").first()
        if second is not None and second.is_open:
            delphi_response_submit(round=second, expert=panelists[0], allocation=allocation(structure, shift=1))


def queries(function: Callable[[], Any]) -> tuple[int, Any]:
    """The number of SQL queries `function` runs, and its result."""
    with CaptureQueriesContext(connection) as ctx:
        result = function()
    return len(ctx.captured_queries), result


@dataclass(frozen=True)
class PageCheck:
    """A page to measure: who asks, how (a function of the client), and how many rows it lists (or None)."""

    user: Callable[[Base], User]
    request: Callable[[Any], Any]
    rows: Callable[[Any], int] | None = None
    status: int = 200


@dataclass(frozen=True)
class Measured:
    queries: tuple[int, int]  # at the small size, at the large size
    rows: tuple[int, int] | None


def measure_two_sizes(blocker: Any, tmp_path: Path, pages: Callable[[Base], dict[str, PageCheck]]) -> dict[str, Measured]:
    """Build the world at SMALL, measure every page, grow it by LARGE, measure again; then roll it all back.

    For a module-scoped fixture: the world is built once for all of a module's pages.
    """
    from django.db import transaction
    from django.test import Client

    found: dict[str, list[tuple[int, int | None]]] = {}
    with blocker.unblock(), transaction.atomic():
        base = base_build()
        for tag, n in (("small", SMALL), ("large", LARGE)):
            grow(base, n, tag=tag, tmp_path=tmp_path)
            for label, page in pages(base).items():
                client = Client()
                client.force_login(page.user(base))
                n_queries, response = queries(lambda page=page, client=client: page.request(client))
                assert response.status_code == page.status, (label, tag, response.status_code)
                found.setdefault(label, []).append((n_queries, page.rows(response) if page.rows else None))
        transaction.set_rollback(True)
    return {label: Measured((a[0], b[0]), None if a[1] is None else (a[1], b[1] or 0))
            for label, (a, b) in found.items()}


def assert_constant(measured: Measured, *, max_queries: int) -> None:
    """The same queries at both sizes (and not many), for more rows at the larger size."""
    if measured.rows is not None:
        assert 0 < measured.rows[0] < measured.rows[1], f"the page must list more rows when larger: {measured.rows}"
    assert measured.queries[0] == measured.queries[1], f"queries grow with the rows: {measured.queries}"
    assert measured.queries[1] <= max_queries, measured.queries
