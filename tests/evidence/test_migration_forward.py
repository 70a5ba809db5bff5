"""Evidence's migrations carry every stored artefact forward: report snapshots (of a cycle, a study, a calibrated
leaderboard) keep their rows, versions, hashes and files and gain their kind and subject; every case-review report,
IRT fit and bias check of calibration becomes a ready snapshot with its payload, version, hash and summary."""
from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.test_migrations import back_to_latest, latest, migrate  # noqa: F401 (a fixture)

BEFORE = [("calibration", "0012_case_review_report_cycle_in_casereview"), ("evidence", None)]
WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def payload_hash(payload: object) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.django_db(transaction=True)
def test_every_old_artefact_arrives_as_a_snapshot(back_to_latest: None) -> None:  # noqa: F811
    migrate(BEFORE)
    loader = MigrationExecutor(connection).loader
    nodes = [BEFORE[0], *(leaf for leaf in loader.graph.leaf_nodes() if leaf[0] not in ("calibration", "evidence"))]
    old = loader.project_state(nodes).apps  # every other app as it is now, calibration before 0013
    User = old.get_model("accounts", "User")
    RubricVersion = old.get_model("evaluations", "RubricVersion")
    admin = User.objects.create(email="old-admin@faithbench.test", password="x")
    rubric = RubricVersion.objects.get(version="1.0")
    cycle = old.get_model("annotations", "CalibrationCycle").objects.create(name="Old cycle", seed=1, rubric=rubric)
    run = old.get_model("evaluations", "JudgeRun").objects.create(primary_model="judge/a", base_url="http://x",
                                                                  rubric=rubric)
    pairwise = old.get_model("evaluations", "PairwiseRun").objects.create(model="judge/a", base_url="http://x")
    study = old.get_model("calibration", "Study").objects.create(name="Old study")
    panel = old.get_model("annotations", "Panel").objects.create(name="Old panel")
    review_cycle = old.get_model("casereview", "CaseReviewCycle").objects.create(name="Old review", panel=panel)

    ReportSnapshot = old.get_model("calibration", "ReportSnapshot")
    SnapshotFile = old.get_model("calibration", "SnapshotFile")
    reports = {
        "cycle_v1": ReportSnapshot.objects.create(cycle=cycle, version=1, status="ready", seed=20260101,
                                                  n_resamples=1000, input_hash="a" * 64, payload={"meta": {"v": 1}},
                                                  judge_run=run, requested_by=admin, rater_key={"R01": "x@y"}),
        "cycle_v2": ReportSnapshot.objects.create(cycle=cycle, version=2, status="failed", seed=1, n_resamples=0,
                                                  error="Boom"),
        "study_v1": ReportSnapshot.objects.create(study=study, version=1, status="ready", seed=0, n_resamples=50,
                                                  input_hash="b" * 64, payload={"meta": {"study": "Old study"}}),
        "calibrated_v1": ReportSnapshot.objects.create(label_cycle=cycle, judge_run=run, version=1, status="ready",
                                                       seed=3, n_resamples=10, input_hash="c" * 64,
                                                       payload={"rows": []}, input_counts={"target_half_width": 0.05}),
    }
    files = {}
    for key, snapshot in reports.items():
        if snapshot.status != "ready":
            continue
        for fmt in ("json", "csv", "pdf", "ratings", "bundle"):
            content = f"{key} {fmt}".encode()
            files[(key, fmt)] = content
            SnapshotFile.objects.create(snapshot=snapshot, format=fmt, content=content,
                                        sha256=hashlib.sha256(content).hexdigest(), size=len(content))

    CaseReviewReport = old.get_model("calibration", "CaseReviewReport")
    case_reports = [CaseReviewReport.objects.create(cycle=review_cycle, version=v, payload={"version": v},
                                                    input_hash=f"{v}" * 64, seed=v, created_by=admin)
                    for v in (1, 2)]
    DifficultyFit = old.get_model("calibration", "DifficultyFit")
    base = DifficultyFit.objects.create(dimension="doctrinal", rotation="r1", items=30, persons=150,
                                        payload={"items": [], "models": []}, created_by=admin)
    equated = DifficultyFit.objects.create(dimension="doctrinal", rotation="r2", items=30, persons=150,
                                           payload={"items": [], "models": [], "equating": {"to_fit": base.pk}},
                                           equated_to=base)
    BiasCheck = old.get_model("calibration", "BiasCheck")
    checks = [
        BiasCheck.objects.create(kind="position", pairwise_run=pairwise, flagged=False, n=60, payload={"p": 1}),
        BiasCheck.objects.create(kind="verbosity", judge_run=run, cycle=cycle, flagged=True, n=120, payload={"v": 1},
                                 requested_by=admin),
        BiasCheck.objects.create(kind="tradition", cycle=cycle, flagged=False, n=12, payload={"t": 1}),
        BiasCheck.objects.create(kind="judges", judge_run=run, flagged=True, n=108,
                                 payload={"j": 1, "n_resamples": 200}),
        BiasCheck.objects.create(kind="judges", judge_run=run, flagged=False, n=108, payload={"j": 2}),
    ]
    for model, rows, field in [(CaseReviewReport, case_reports, "created_at"), (DifficultyFit, [base, equated],
                               "created_at"), (BiasCheck, checks, "computed_at")]:
        model.objects.filter(pk__in=[r.pk for r in rows]).update(**{field: WHEN})

    migrate(latest())
    from evidence.models import Snapshot
    from evidence.models import SnapshotFile as NewFile

    def of(kind: str, subject: str, version: int) -> Snapshot:
        return Snapshot.objects.get(kind=kind, subject=subject, version=version)

    # report snapshots: same rows (same ids), kind and subject added, files untouched
    expected = {"cycle_v1": ("cycle_report", str(cycle.pk), 1), "cycle_v2": ("cycle_report", str(cycle.pk), 2),
                "study_v1": ("study_report", str(study.pk), 1), "calibrated_v1": ("calibrated", str(run.pk), 1)}
    for key, (kind, subject, version) in expected.items():
        snapshot = of(kind, subject, version)
        before = reports[key]
        assert snapshot.pk == before.pk
        assert (snapshot.status, snapshot.input_hash, snapshot.payload, snapshot.seed, snapshot.n_resamples) == (
            before.status, before.input_hash, before.payload, before.seed, before.n_resamples)
        stored = {f.format: bytes(f.content) for f in NewFile.objects.filter(snapshot=snapshot)}
        assert stored == {fmt: content for (k, fmt), content in files.items() if k == key}
        assert all(f.sha256 == hashlib.sha256(bytes(f.content)).hexdigest()
                   for f in NewFile.objects.filter(snapshot=snapshot))
    assert of("cycle_report", str(cycle.pk), 1).rater_key == {"R01": "x@y"}
    assert of("cycle_report", str(cycle.pk), 1).judge_run_id == run.pk
    assert of("cycle_report", str(cycle.pk), 2).error == "Boom"
    assert of("study_report", str(study.pk), 1).study_id == study.pk
    calibrated = of("calibrated", str(run.pk), 1)
    assert (calibrated.label_cycle_id, calibrated.input_counts) == (cycle.pk, {"target_half_width": 0.05})

    # case-review reports: one ready snapshot per version, hash and seed kept, dated as before
    for report in case_reports:
        snapshot = of("case_review", str(review_cycle.pk), report.version)
        assert (snapshot.status, snapshot.payload, snapshot.input_hash, snapshot.seed) == (
            "ready", report.payload, report.input_hash, report.seed)
        assert (snapshot.requested_by_id, snapshot.requested_at, snapshot.finished_at) == (admin.pk, WHEN, WHEN)

    # IRT fits: versions per dimension and rotation, the summary the page lists, equating by the new id
    new_base, new_equated = of("irt_fit", "doctrinal/r1", 1), of("irt_fit", "doctrinal/r2", 1)
    assert (new_base.dimension, new_base.rotation, new_base.items, new_base.persons, new_base.equated_to_id) == (
        "doctrinal", "r1", 30, 150, None)
    assert new_equated.equated_to_id == new_base.pk
    assert new_equated.payload["equating"]["to_fit"] == new_base.pk
    assert new_base.input_hash == payload_hash(base.payload) and new_base.status == "ready"

    # bias checks: one subject per check kind and what it read; versions count within it
    position = of("bias_check", f"position/pairwise-{pairwise.pk}", 1)
    assert (position.check_kind, position.flagged, position.n, position.pairwise_run_id, position.payload) == (
        "position", False, 60, pairwise.pk, {"p": 1})
    verbosity = of("bias_check", f"verbosity/run-{run.pk}", 1)
    assert (verbosity.flagged, verbosity.n, verbosity.cycle_id, verbosity.judge_run_id, verbosity.requested_by_id) \
        == (True, 120, cycle.pk, run.pk, admin.pk)
    assert of("bias_check", f"tradition/cycle-{cycle.pk}", 1).cycle_id == cycle.pk
    first, second = of("bias_check", f"judges/run-{run.pk}", 1), of("bias_check", f"judges/run-{run.pk}", 2)
    assert (first.payload, second.payload, first.n_resamples) == ({"j": 1, "n_resamples": 200}, {"j": 2}, 200)
    assert first.computed_at == WHEN and first.input_hash == payload_hash({"j": 1, "n_resamples": 200})

    assert Snapshot.objects.count() == 4 + 2 + 2 + 5
    assert NewFile.objects.count() == 3 * 5
