"""The expert-calibrated leaderboard: known-truth cases for the builder, the bad inputs the issue names, the bundle
reproducing byte for byte, the snapshot service, pages, API and who may see them (experts never)."""
from __future__ import annotations

import io
import json
import zipfile
from decimal import Decimal

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.test import TestCase
from django.urls import reverse

from annotations.models import AdjudicationDecision, Assignment, CalibrationCycle, CycleItem, GoldScore
from annotations.services import AnnotationInput, annotation_skip, annotation_submit, sub_dimension_keys
from calibration.calibrated.build import InputRow, Options
from calibration.calibrated.build import calibrated_leaderboard_build as leaderboard_build
from calibration.calibrated.files import InputsError, inputs_csv, inputs_csv_parse, report_json
from calibration.calibrated.schema import SnapshotRef
from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
from calibration.cycles.truth import response_truths
from evaluations.methodology import DIFFICULTY_WEIGHTS
from evaluations.models import JudgeResult, JudgeRun
from evidence.models import Snapshot
from tests.annotations.factories import world_build

DIMENSIONS = ("doctrinal", "textual")
DIFFICULTIES = ("easy", "medium", "hard", "expert")


def calibrated_leaderboard_build(rows: list[InputRow], options: Options) -> dict:
    """The leaderboard's JSON (what a snapshot stores and these tests read)."""
    return leaderboard_build(rows, options).to_json()


def population(seed: int = 3, *, models: int = 3, per_model: int = 800, bias: dict[int, float] | None = None,
               label_share: float = 0.25, judge_noise: float = 0.05) -> tuple[list[InputRow], dict[str, float]]:
    """Judged responses with a known expert truth for every one of them; a random `label_share` is labelled
    (inclusion probability = label_share). Returns the rows and each model's true difficulty-weighted mean."""
    rng = np.random.default_rng(seed)
    bias = bias or {}
    rows, truths = [], {}
    rid = 0
    for m in range(models):
        values, weights = [], []
        noise = rng.normal(0, judge_noise, per_model)
        noise -= noise.mean()  # the judge's error averages to exactly its bias over each model's responses
        for i in range(per_model):
            rid += 1
            difficulty = DIFFICULTIES[i % 4]
            truth = float(np.clip(0.4 + 0.1 * m + rng.normal(0, 0.08), 0, 1))  # far from the bounds: no clipping
            judge = float(np.clip(truth + bias.get(m, 0.0) + noise[i], 0, 1))
            labelled = rng.random() < label_share
            rows.append(InputRow(
                response_id=rid, model=f"model-{m}", family=f"fam{m}", dimension=DIMENSIONS[i % 2],
                tradition=("catholic", "orthodox", "none")[i % 3], difficulty=difficulty, judge=round(judge, 6),
                expert=round(truth, 6) if labelled else None, expert_gold=None,
                inclusion_probability=label_share if labelled else None,
                inclusion_basis="drawn" if labelled else "", n_raters=3 if labelled else 0))
            values.append(round(truth, 6))
            weights.append(float(DIFFICULTY_WEIGHTS[difficulty]))
        truths[f"model-{m}"] = float(np.average(values, weights=weights))
    return rows, truths


def by_model(report: dict) -> dict[str, dict]:
    return {entry["model"]: entry for entry in report["models"]}


def test_calibrated_interval_covers_the_expert_truth_that_the_judge_only_interval_misses() -> None:
    rows, truths = population(bias={1: 0.1})
    report = calibrated_leaderboard_build(rows, Options(n_resamples=300))
    models = by_model(report)
    biased = models["model-1"]
    # the judge inflates model 1 by 0.1: its own interval sits above the truth, the calibrated one covers it
    assert biased["judge_only"]["lower"] > truths["model-1"]
    assert biased["calibrated"]["lower"] <= truths["model-1"] <= biased["calibrated"]["upper"]
    assert biased["shift"]["upper"] < 0 < -biased["shift"]["lower"]  # calibrated − judge is clearly negative
    assert abs(biased["shift"]["estimate"] + 0.1) < 0.03
    for name in ("model-0", "model-2"):
        assert models[name]["calibrated"]["lower"] <= truths[name] <= models[name]["calibrated"]["upper"]
    assert any("over-scores model-1 by" in s for s in report["statements"])
    assert not any("model-0 by" in s or "model-2 by" in s for s in report["statements"])
    # a good judge earns a large λ, and PPI's interval is narrower than the experts' own on the same labels
    assert models["model-0"]["calibrated"]["lam"] > 0.5
    assert models["model-0"]["calibrated"]["n"] == sum(1 for r in rows if r.model == "model-0" and r.expert is not None)


def test_rank_sets_separate_clear_gaps_and_tie_close_models() -> None:
    rows, _ = population(models=3, per_model=600)
    close = [InputRow(**{**r.__dict__, "response_id": r.response_id + 10_000, "model": "model-2b"})
             for r in rows if r.model == "model-2"]
    report = calibrated_leaderboard_build(rows + close, Options(n_resamples=0))
    ranks = {e["model"]: e["rank_set"] for e in report["models"]}
    # model-2 and its copy are indistinguishable: both hold ranks 1–2; model-0 is clearly last
    assert ranks["model-2"] == ranks["model-2b"] == [1, 2]
    assert ranks["model-0"] == [4, 4]
    pair = next(p for p in report["pairs"] if {p["model_a"], p["model_b"]} == {"model-2", "model-2b"})
    assert pair["adjacent"] and not pair["separated"]


def test_a_model_with_no_expert_labels_gets_a_statement_not_a_number() -> None:
    rows, _ = population(models=2, per_model=200)
    rows = [InputRow(**{**r.__dict__, "expert": None, "inclusion_probability": None, "inclusion_basis": ""})
            if r.model == "model-1" else r for r in rows]
    report = calibrated_leaderboard_build(rows, Options(n_resamples=0))
    unlabelled = by_model(report)["model-1"]
    assert unlabelled["calibrated"]["estimate"] is None
    assert "No expert-labelled response" in unlabelled["calibrated"]["note"]
    assert unlabelled["rank_set"] is None
    assert unlabelled["evidence"]["more_labels"] is None and "fewer than 2" in unlabelled["evidence"]["note"]
    assert unlabelled["judge_only"]["estimate"] is not None  # the judge-only board still shows it


def test_small_sample_a_dimension_without_labels_is_left_out_and_one_label_says_so_in_words() -> None:
    rows, _ = population(models=1, per_model=400)
    kept_one = False
    one, none = [], []
    for r in rows:
        unlabelled = InputRow(**{**r.__dict__, "expert": None, "inclusion_probability": None, "inclusion_basis": ""})
        none.append(unlabelled if r.dimension == "textual" else r)
        if r.dimension == "textual" and r.expert is not None:
            one.append(unlabelled if kept_one else r)
            kept_one = True
        else:
            one.append(r)
    model = calibrated_leaderboard_build(none, Options(n_resamples=0))["models"][0]
    skipped = model["calibrated"]["skipped"]
    assert [s["stratum"] for s in skipped] == ["textual"] and skipped[0]["n"] == 0
    # only doctrinal (easy and hard cases: weight 3 of 7.5) is covered, and it says so
    assert model["calibrated"]["covered_weight"] == pytest.approx(0.4)
    # the doctrinal-only estimate equals the model's doctrinal cell: nothing of textual leaked in
    assert model["calibrated"]["estimate"] == model["by_dimension"]["doctrinal"]["calibrated"]["estimate"]
    assert model["by_dimension"]["textual"]["calibrated"]["estimate"] is None
    assert model["by_dimension"]["textual"]["calibrated"]["status"] == "no_labels"
    assert "no expert labels yet" in model["by_dimension"]["textual"]["calibrated"]["words"]
    cell = calibrated_leaderboard_build(one, Options(n_resamples=0))["models"][0]["by_dimension"]["textual"]
    calibrated = cell["calibrated"]
    assert calibrated["n"] == 1 and calibrated["status"] == "few_labels" and "1 expert label" in calibrated["words"]
    assert (calibrated["lower"], calibrated["upper"]) == (0.0, 1.0)  # one label: the whole scale, never a point


def test_a_constant_judge_still_gives_the_experts_estimate() -> None:
    rows, truths = population(models=1, per_model=600)
    rows = [InputRow(**{**r.__dict__, "judge": 0.5}) for r in rows]
    report = calibrated_leaderboard_build(rows, Options(n_resamples=0))
    model = report["models"][0]
    assert model["calibrated"]["estimate"] is not None
    assert model["calibrated"]["lower"] <= truths["model-0"] <= model["calibrated"]["upper"]
    json.dumps(report, allow_nan=False)  # no NaN anywhere


def test_edge_cases_count_as_certain_and_draws_without_probabilities_are_excluded_with_a_warning() -> None:
    rows, _ = population(models=1, per_model=300)
    labelled = [r for r in rows if r.expert is not None]
    edge, legacy = labelled[0].response_id, labelled[1].response_id
    rows = [InputRow(**{**r.__dict__, "inclusion_basis": "edge_case", "inclusion_probability": 1.0})
            if r.response_id == edge else
            InputRow(**{**r.__dict__, "inclusion_basis": "unknown", "inclusion_probability": None})
            if r.response_id == legacy else r for r in rows]
    report = calibrated_leaderboard_build(rows, Options(n_resamples=0))
    assert report["counts"]["excluded"] == {"unknown_inclusion_probability": 1}
    assert report["counts"]["used"] == len(labelled) - 1
    assert any("take-all stratum" in w for w in report["warnings"])
    assert any("could not be recovered" in w for w in report["warnings"])


def test_inputs_csv_reproduces_report_json_byte_for_byte() -> None:
    rows, _ = population(models=2, per_model=300)
    options = Options(n_resamples=200, seed=5, seconds_per_item=240.0, judge_families=("fam1",))
    first = report_json(leaderboard_build(rows, options))
    again = report_json(leaderboard_build(inputs_csv_parse(inputs_csv(rows)), options))
    assert first == again


def test_a_broken_inputs_csv_names_the_line_and_column() -> None:
    rows, _ = population(models=1, per_model=5)
    data = inputs_csv(rows).decode().splitlines()
    data[3] = data[3].replace(",drawn,", ",drawn,").split(",")
    data[3][6] = "high"  # the judge column
    text = "\n".join(data[:3] + [",".join(data[3])] + data[4:]) + "\n"
    with pytest.raises(InputsError, match="line 4, column judge"):
        inputs_csv_parse(text.encode())
    with pytest.raises(InputsError, match="line 1"):
        inputs_csv_parse(b"model,score\nx,1\n")


# --- through the database ----------------------------------------------------------------------------------

def judged_world(*, judge_offset: int = 1):
    """A committed cycle scored by its experts (one skip), one gold decision, and a finished judge run that scores
    every response `judge_offset` points above the experts' first score."""
    world = world_build(catholic_cases=10)
    CycleItem.objects.filter(cycle=world.cycle).update(inclusion_probability=1.0, inclusion_basis="drawn")
    rng = np.random.default_rng(1)
    base: dict[int, int] = {}
    assignments = list(Assignment.objects.select_related("expert", "item__response").order_by("item_id", "public_id"))
    for index, assignment in enumerate(assignments):
        keys = sub_dimension_keys(assignment=assignment)
        level = base.setdefault(assignment.item_id, int(rng.integers(0, 3)))
        if index == 0:
            annotation_skip(assignment=assignment, actor=assignment.expert, reason="outside_expertise")
            continue
        annotation_submit(assignment=assignment, actor=assignment.expert,
                          data=AnnotationInput(scores={k: level for k in keys}, rationale="because"))
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="google/gemini-3-flash-preview",
                                  fallback_model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    for item in CycleItem.objects.filter(cycle=world.cycle).select_related("response__test_case"):
        level = min(3, base.get(item.pk, 1) + judge_offset)
        JudgeResult.objects.create(run=run, response=item.response, judge_model=run.primary_model, role="primary",
                                   status="scored", composite=Decimal(level) / 3, attempts=1)
    return world, run


@pytest.mark.django_db
def test_expert_truth_takes_gold_over_the_panel_mean_and_ignores_skips() -> None:
    world, _run = judged_world()
    item = CycleItem.objects.filter(cycle=world.cycle, response__test_case__dimension="doctrinal").first()
    keys = sub_dimension_keys(assignment=Assignment.objects.filter(item=item).first())
    submitted = Assignment.objects.filter(item=item, annotations__status="submitted").count()
    truths = response_truths(cycle=world.cycle)
    before = truths[item.response_id]
    assert before.source == "panel_mean" and before.n_raters == submitted
    # a decision that covers one sub-dimension (written directly: the truth rule is per sub-dimension)
    decision = AdjudicationDecision.objects.create(item=item, adjudicator=world.lead,
                                                   reason=AdjudicationDecision.Reason.values[0])
    GoldScore.objects.create(decision=decision, key=keys[0], score=3)
    after = response_truths(cycle=world.cycle)[item.response_id]
    assert after.scores[keys[0]] == 3.0 and after.source == "gold_and_panel"
    assert after.scores[keys[1]] == before.scores[keys[1]]  # the others stay the panel's mean
    assert item.response_id not in response_truths(cycle=world.cycle, basis="gold")  # not every key adjudicated
    GoldScore.objects.bulk_create(GoldScore(decision=decision, key=k, score=0) for k in keys[1:])
    gold_only = response_truths(cycle=world.cycle, basis="gold")[item.response_id]
    assert gold_only.source == "gold" and gold_only.composite == pytest.approx(0.35)  # lexical… 3/3 × 35 %


@pytest.mark.django_db
def test_snapshot_service_stores_a_reproducible_bundle_and_refuses_a_second_queue() -> None:
    world, run = judged_world()
    snapshot = calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=world.admin, n_resamples=100)
    with pytest.raises(ValidationError, match="Version 1 is queued"):
        calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=world.admin)
    snapshot = calibrated_snapshot_compute(snapshot_id=snapshot.pk)
    assert snapshot.status == Snapshot.Status.READY, snapshot.error
    report = snapshot.payload
    # the judge scores one point above the panel: the calibrated score is lower, the shift clearly negative
    for entry in report["models"]:
        assert entry["shift"]["estimate"] < 0
        assert entry["calibrated"]["estimate"] < entry["judge_only"]["estimate"]
    bundle = zipfile.ZipFile(io.BytesIO(bytes(snapshot.files.get(format="bundle").content)))
    names = {n.split("/", 1)[1]: n for n in bundle.namelist()}
    assert {"README.txt", "report.json", "tables.csv", "report.pdf", "inputs.csv", "SHA256SUMS"} <= set(names)
    meta = json.loads(bundle.read(names["report.json"]))["meta"]
    rebuilt = leaderboard_build(inputs_csv_parse(bundle.read(names["inputs.csv"])), Options(
        alpha=meta["alpha"], n_resamples=meta["n_resamples"], seed=meta["seed"],
        target_half_width=meta["target_half_width"], seconds_per_item=meta["seconds_per_item"],
        judge_families=tuple(meta["judge_families"]), severity_notes=tuple(meta["severity_notes"]),
        min_cases=meta.get("min_cases", 1)))
    rebuilt.meta.snapshot = SnapshotRef(**meta["snapshot"])
    assert report_json(rebuilt) == bundle.read(names["report.json"])
    # a second version may be asked for now
    assert calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=None).version == 2


@pytest.mark.django_db
def test_a_cross_tradition_cycle_or_an_unfinished_run_is_refused_with_the_field_named() -> None:
    world, run = judged_world()
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(kind=CalibrationCycle.Kind.CROSS_TRADITION)
    world.cycle.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=None)
    assert "cycle" in refused.value.message_dict
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(kind=CalibrationCycle.Kind.STANDARD)
    world.cycle.refresh_from_db()
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    run.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=None)
    assert "run" in refused.value.message_dict


@pytest.mark.django_db
def test_calibrated_pages_and_api_for_admins_and_leads_never_experts(client, immediate_tasks) -> None:
    world, run = judged_world()
    client.force_login(world.admin)
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("calibrated:compute", args=[run.pk]),
                               {"cycle": world.cycle.pk, "target_half_width": "0.1", "seed": "1", "n_resamples": "50"})
    assert response.status_code == 302, response.content.decode()[:1000]
    page = client.get(reverse("calibrated:board", args=[run.pk])).content.decode()
    assert "Both leaderboards, side by side" in page and 'data-testid="calibrated-row"' in page
    assert "over-scores" in page  # the judge's one-point inflation, in words
    for fmt in ("json", "csv", "pdf", "ratings", "zip"):
        download = client.get(reverse("calibrated:export", args=[run.pk, fmt]))
        assert download.status_code == 200 and download["ETag"]
    api = client.get(reverse("api-calibrated", args=[run.pk])).json()
    assert api["version"] == 1 and api["leaderboard"]["counts"]["used"] > 0
    cycle_page = client.get(reverse("calibration:cycle", args=[world.cycle.pk])).content.decode()
    assert 'data-testid="cycle-evidence"' in cycle_page and "version 1" in cycle_page
    queued = client.post(reverse("api-calibrated-versions", args=[run.pk]), {"cycle": 999_999},
                         content_type="application/json")
    assert queued.status_code == 400 and "cycle" in queued.json()
    # issue 31: the API carries the verdicts, looks and lever; a margin outside (0, 1) is refused in words
    board = api["leaderboard"]
    assert all(e["evidence"]["verdict"]["words"] and "looks" in e["evidence"]["verdict"] for e in board["models"])
    assert board["meta"]["margin"] == 0.05
    for margin in (0, 1.5):
        refused = client.post(reverse("api-calibrated-versions", args=[run.pk]), {"cycle": world.cycle.pk,
                              "margin": margin}, content_type="application/json")
        assert refused.status_code == 400 and "equivalence margin" in refused.json()["margin"][0]
    assert "Verdict · more expert items" in cycle_page

    client.force_login(world.lead)
    assert client.get(reverse("calibrated:board", args=[run.pk])).status_code == 200
    assert client.post(reverse("calibrated:compute", args=[run.pk]), {"cycle": world.cycle.pk}).status_code == 403
    for expert in (world.expert, world.other_panel_expert):
        client.force_login(expert)
        for url in (reverse("calibrated:index"), reverse("calibrated:board", args=[run.pk]),
                    reverse("calibrated:export", args=[run.pk, "json"]), reverse("api-calibrated", args=[run.pk])):
            assert client.get(url).status_code == 403, url
        assert "Calibrated leaderboard" not in client.get(reverse("annotations:queue")).content.decode()


@pytest.mark.django_db
def test_command_computes_a_version_and_exports_its_stored_bytes(tmp_path) -> None:
    from django.core.management import CommandError, call_command

    world, run = judged_world()
    out = io.StringIO()
    call_command("calibrated_leaderboard", str(run.pk), "--resamples", "50", stdout=out, stderr=io.StringIO())
    assert "version 1" in out.getvalue() and "calibrated" in out.getvalue()
    target = tmp_path / "board.json"
    call_command("calibrated_leaderboard", str(run.pk), "--version", "1", "--format", "json", "--out", str(target),
                 stdout=io.StringIO())
    stored = Snapshot.objects.of("calibrated", run.pk).get(version=1).files.get(format="json")
    assert target.read_bytes() == bytes(stored.content)
    with pytest.raises(CommandError, match="--cycle"):
        call_command("calibrated_leaderboard", str(run.pk), "--cycle", "no such cycle", stdout=io.StringIO())


def test_the_evidence_meter_says_enough_only_when_a_verdict_is_reached() -> None:
    rows, _ = population(models=1, per_model=40, label_share=0.5)
    few = calibrated_leaderboard_build(rows, Options(n_resamples=0))["models"][0]["evidence"]
    assert few["verdict"]["verdict"] == "continue" and few["more_labels"] != 0
    assert few["advice"]["lever"] in ("labels", "experts") and few["advice"]["words"]
    rows, _ = population(models=1, per_model=800, label_share=0.5)
    many = calibrated_leaderboard_build(rows, Options(n_resamples=0))["models"][0]["evidence"]
    # a judge that tracks the truth (noise 0.05, no bias) is settled equivalent within ±0.05 on ~400 labels
    assert many["verdict"]["verdict"] == "equivalent" and many["more_labels"] == 0
    assert many["advice"]["lever"] == "none" and many["advice"]["words"].startswith("enough")


@pytest.mark.django_db
def test_anytime_arrival_is_the_experts_submission_order_and_a_recompute_keeps_it() -> None:
    from annotations.models import Annotation
    from calibration.calibrated.selectors import calibrated_inputs

    world, run = judged_world()
    inputs = calibrated_inputs(run=run, cycle=world.cycle)
    first: dict[int, object] = {}
    for response, submitted in Annotation.objects.filter(
            assignment__cycle=world.cycle, status=Annotation.Status.SUBMITTED).values_list(
            "assignment__item__response_id", "submitted_at"):
        first[response] = min(first.get(response, submitted), submitted)  # type: ignore[type-var]
    arrived = sorted((r for r in inputs.rows if r.arrival is not None), key=lambda r: r.arrival or 0)
    assert [r.arrival for r in arrived] == list(range(1, len(first) + 1))
    assert [r.response_id for r in arrived] == sorted(first, key=lambda r: (first[r], r))
    assert all(r.case is not None for r in inputs.rows)
    assert any(r.panel_var is not None for r in arrived)  # two or more experts: the panel's noise is measured
    again = calibrated_inputs(run=run, cycle=world.cycle)  # later: the clock is the experts', not the recompute's
    assert inputs_csv(again.rows) == inputs_csv(inputs.rows)
