"""Truth with rater severity on the calibrated leaderboard (issue 34 §6): the severity-adjusted truth beside the
panel-mean one, per model and dimension, with the shift, on the page, CSV, JSON, PDF and API; words where the rater
model cannot be fitted; old versions still read; the cycle report's α unchanged.

Known truth: experts with known severities (the many-facet graded model of `stats.raters`) score two models of the
same known quality, and the severe experts score one model far more often. The panel mean then says that model is
worse; the severity-adjusted truth must recover the known quality better."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from collections import defaultdict

import numpy as np
import pytest
from django.test import TestCase
from django.urls import reverse
from scipy.special import expit

from calibration.calibrated.build import InputRow, Options, calibrated_leaderboard_build, severity_sensitivity
from calibration.calibrated.files import inputs_csv, inputs_csv_parse, report_json, tables_csv
from calibration.calibrated.render import severity_view
from calibration.calibrated.schema import CalibratedReport
from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
from calibration.cycles.fair_truth import PanelRating, severity_corrections
from evidence.models import Snapshot

STEPS = np.array([-1.2, 0.0, 1.2])
SEVERITY = np.array([-0.4, -0.4, -0.4, -0.4, 0.8, 0.8])  # mean 0: the fair score is an expert of severity 0's
KEYS = ("a", "b")  # two sub-dimensions of equal weight: composite = mean score / 3


def _score(rng: np.random.Generator, theta: float, severity: float) -> int:
    at_least = expit(theta - severity - STEPS)  # P(X ≥ 1), P(X ≥ 2), P(X ≥ 3)
    probs = np.concatenate([[1.0], at_least]) - np.concatenate([at_least, [0.0]])
    return int(rng.choice(4, p=probs / probs.sum()))


def _world(seed: int, per_model: int = 80) -> tuple[list[InputRow], dict[str, float]]:
    """Two models of the same quality distribution; each response scored by three experts of one panel — for
    model "A" the two severe experts and one lenient one, for "B" three lenient ones. Returns the board's input rows
    (expert = panel-mean composite, expert_fair = severity-adjusted) and each model's known fair-truth mean."""
    rng = np.random.default_rng(seed)
    ratings, truth_of, model_of = [], {}, {}
    for index in range(2 * per_model):
        model = "A" if index < per_model else "B"
        theta = float(rng.normal(0.2, 1.0))
        lenient = [int(x) for x in rng.choice(4, size=3, replace=False)]
        raters = [4, 5, lenient[0]] if model == "A" else lenient
        for rater in raters:
            for key in KEYS:
                ratings.append(PanelRating("Panel", index, rater, key, _score(rng, theta, SEVERITY[rater])))
        truth_of[index] = float(expit(theta - STEPS).sum()) / 3  # expected composite from an average expert
        model_of[index] = model
    corrections, notes = severity_corrections(ratings)
    assert notes == []
    scores: dict[tuple[int, str], list[int]] = defaultdict(list)
    for r in ratings:
        scores[(r.item, r.key)].append(r.score)
    rows = []
    for index, model in model_of.items():
        panel = [float(np.mean(scores[(index, k)])) for k in KEYS]
        fair = [panel[j] + corrections[(index, k)] for j, k in enumerate(KEYS)]
        rows.append(InputRow(response_id=index + 1, model=model, family=model, dimension="doctrinal",
                             tradition="none", difficulty="medium", judge=0.5,
                             expert=round(float(np.mean(panel)) / 3, 6), expert_gold=None, inclusion_probability=1.0,
                             inclusion_basis="drawn", n_raters=3, expert_fair=round(float(np.mean(fair)) / 3, 6)))
    known = {m: float(np.mean([truth_of[i] for i, mm in model_of.items() if mm == m])) for m in ("A", "B")}
    return rows, known


def test_rater_severity_fair_truth_recovers_model_quality_better_than_the_panel_mean() -> None:
    """Over 8 simulated panels: the panel mean under-states model A (scored by the severe experts) by a clear margin;
    the severity-adjusted truth is closer to A's known quality in at least 7 of them and on average, and it shrinks
    the false gap between A and B (same quality) to under half."""
    closer, panel_errors, fair_errors, panel_gaps, fair_gaps = 0, [], [], [], []
    for seed in range(8):
        rows, known = _world(seed)
        a = severity_sensitivity([r for r in rows if r.model == "A"])
        b = severity_sensitivity([r for r in rows if r.model == "B"])
        assert a.n == a.labelled == 80 and a.words is None
        assert a.panel_mean is not None and a.severity_adjusted is not None and a.shift is not None
        assert b.panel_mean is not None and b.severity_adjusted is not None
        panel_error, fair_error = abs(a.panel_mean - known["A"]), abs(a.severity_adjusted - known["A"])
        closer += fair_error < panel_error
        panel_errors.append(panel_error)
        fair_errors.append(fair_error)
        panel_gaps.append((b.panel_mean - a.panel_mean) - (known["B"] - known["A"]))
        fair_gaps.append((b.severity_adjusted - a.severity_adjusted) - (known["B"] - known["A"]))
        assert a.shift > 0  # the severe experts pulled A down: taking them out lifts it
        assert a.shift == pytest.approx(a.severity_adjusted - a.panel_mean, abs=1e-6)
    assert np.mean(panel_gaps) > 0.05  # the design does make A look worse than B under the panel mean
    assert closer >= 7 and np.mean(fair_errors) < 0.5 * np.mean(panel_errors)
    assert abs(np.mean(fair_gaps)) < 0.5 * np.mean(panel_gaps)


def test_rater_severity_truth_is_on_the_board_and_recomputes_from_inputs_csv() -> None:
    rows, _ = _world(1, per_model=40)
    options = Options(n_resamples=50, severity_notes=())
    report = calibrated_leaderboard_build(rows, options)
    entry = {e.model: e for e in report.models}["A"]
    assert entry.severity_truth is not None and entry.severity_truth.shift is not None
    assert set(entry.severity_truth_by_dimension or {}) == {"doctrinal"}
    assert report.meta.severity_notes == [] and report.meta.severity_truth
    data = inputs_csv(rows)
    assert b"expert_fair" in data.splitlines()[0]
    assert report_json(calibrated_leaderboard_build(inputs_csv_parse(data), options)) == report_json(report)
    table = tables_csv(report).decode()
    assert "A,overall,all,truth_severity_shift," in table and "A,dimension,doctrinal,truth_panel_mean," in table
    # the calibrated scores themselves do not move: the block is a sensitivity beside them
    plain = calibrated_leaderboard_build(rows, Options(n_resamples=50))
    assert [e.calibrated for e in plain.models] == [e.calibrated for e in report.models]
    assert all(e.severity_truth is None for e in plain.models) and plain.meta.severity_truth is None


def test_rater_severity_words_when_the_panel_cannot_be_fitted_never_a_silent_number() -> None:
    rows, _ = _world(2, per_model=20)
    unfitted = [InputRow(**{**r.__dict__, "expert_fair": None}) if r.model == "B" else r for r in rows]
    half = [InputRow(**{**r.__dict__, "expert_fair": None}) if r.response_id % 2 else r for r in rows]
    notes = ("Panel: the rater model cannot be fitted (only 12 ratings; it needs at least 20; panel mean kept)",)
    report = calibrated_leaderboard_build(unfitted, Options(n_resamples=20, severity_notes=notes))
    b = {e.model: e for e in report.models}["B"].severity_truth
    assert b is not None and b.severity_adjusted is None and b.shift is None and b.panel_mean is None
    assert b.labelled == 20 and b.n == 0 and "could not be fitted" in (b.words or "")
    view = severity_view(report)
    assert view.notes == list(notes) and any(r.words and r.shift == "—" for r in view.rows)
    a_half = severity_sensitivity([r for r in half if r.model == "A"])
    assert a_half.n == 10 and a_half.labelled == 20 and "10 of 20" in (a_half.words or "")
    none = severity_sensitivity([InputRow(**{**r.__dict__, "expert": None, "expert_fair": None}) for r in rows])
    assert none.labelled == 0 and none.panel_mean is None and "no judged, expert-labelled" in (none.words or "")


@pytest.mark.parametrize("problem, ratings, words", [
    ("too few items", [PanelRating("P", i, r, "a", (i + r) % 4) for i in range(4) for r in (1, 2)],
     "only 8 ratings; it needs at least 20"),
    ("one category", [PanelRating("P", i, r, "a", 1) for i in range(20) for r in (1, 2)],
     "every score is in one category"),
    ("no anchors", [PanelRating("P", i, 1 if i < 15 else 2, k, (i + j) % 4) for i in range(30)
                    for j, k in enumerate("ab")], "no common items (anchors)"),
])
def test_rater_severity_unfittable_panels_are_named_with_their_reason(problem: str, ratings: list[PanelRating],
                                                                     words: str) -> None:
    corrections, notes = severity_corrections(ratings)
    assert corrections == {}, problem
    assert len(notes) == 1 and notes[0].startswith("P: the rater model cannot be fitted") and words in notes[0]


def test_rater_severity_a_version_stored_before_it_still_reads_and_says_so() -> None:
    rows, _ = _world(3, per_model=20)
    stored = calibrated_leaderboard_build(rows, Options(n_resamples=20)).to_json()  # no severity keys, as before
    assert "severity_truth" not in stored["meta"] and "severity_truth" not in stored["models"][0]
    report = CalibratedReport.from_json(stored)
    assert severity_view(report).computed is False
    lines = inputs_csv(rows).decode().splitlines()  # a file from before issue 34: the columns up to panel_var
    kept = lines[0].split(",").index("expert_fair")
    old = "\n".join(",".join(line.split(",")[:kept]) for line in lines) + "\n"
    parsed = inputs_csv_parse(old.encode())
    assert len(parsed) == len(rows) and all(r.expert_fair is None for r in parsed)


# --- through the database ----------------------------------------------------------------------------------

def _pdf_text(data: bytes) -> str:
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is missing: apt-get install -y poppler-utils (the PDF tests must not be skipped)")
    done = subprocess.run(["pdftotext", "-layout", "-", "-"], input=data, capture_output=True, check=True)
    return " ".join(done.stdout.decode().split())


@pytest.mark.django_db
def test_rater_severity_truth_on_page_csv_json_pdf_and_api(client, immediate_tasks) -> None:
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, run = judged_world()
    client.force_login(world.admin)
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("calibrated:compute", args=[run.pk]),
                               {"cycle": world.cycle.pk, "target_half_width": "0.1", "seed": "1", "n_resamples": "50"})
    assert response.status_code == 302
    snapshot = Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).get(version=1)
    assert snapshot.status == Snapshot.Status.READY, snapshot.error
    payload = snapshot.payload
    assert payload["meta"]["severity_truth"] and isinstance(payload["meta"]["severity_notes"], list)
    for entry in payload["models"]:
        block = entry["severity_truth"]
        # a number with its n, or words saying why not: never neither
        assert (block["shift"] is not None and block["n"] > 0) or block["words"]
        assert set(entry["severity_truth_by_dimension"]) <= set(entry["by_dimension"])
    page = client.get(reverse("calibrated:board", args=[run.pk])).content.decode()
    assert 'data-testid="severity-truth"' in page and "Severity-adjusted truth" in page
    assert page.count('data-testid="severity-row"') == sum(1 + len(e["severity_truth_by_dimension"])
                                                          for e in payload["models"])
    table = client.get(reverse("calibrated:export", args=[run.pk, "csv"])).content.decode()
    assert table.count(",truth_severity_shift,") == page.count('data-testid="severity-row"')
    download = client.get(reverse("calibrated:export", args=[run.pk, "pdf"]))
    pdf = b"".join(download.streaming_content) if download.streaming else download.content
    assert "Truth with rater severity" in _pdf_text(pdf)
    api = client.get(reverse("api-calibrated", args=[run.pk])).json()["leaderboard"]
    assert [e["severity_truth"] for e in api["models"]] == [e["severity_truth"] for e in payload["models"]]
    bundle = zipfile.ZipFile(io.BytesIO(bytes(snapshot.files.get(format="bundle").content)))
    names = {n.split("/", 1)[1]: n for n in bundle.namelist()}
    assert json.loads(bundle.read(names["report.json"]))["meta"]["severity_notes"] == payload["meta"]["severity_notes"]
    assert b"expert_fair" in bundle.read(names["inputs.csv"]).splitlines()[0]
    assert "severity" in bundle.read(names["README.txt"]).decode()


@pytest.mark.django_db
def test_rater_severity_truth_leaves_the_cycle_report_alpha_unchanged() -> None:
    """The cycle report's α is agreement among the experts' own scores: computing the severity-adjusted truth (and a
    calibrated version that shows it) must not move it, and it stays α of the raw scores (krippendorff's)."""
    import krippendorff

    from calibration.cycles.ratings import report_inputs
    from calibration.reports.build import calibration_report_build
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, run = judged_world()

    def report() -> dict:
        inputs = report_inputs(cycle=world.cycle, run=run)
        return calibration_report_build(inputs.ratings, judge=inputs.judge, gold=inputs.gold, units=inputs.units,
                                        n_resamples=0, seed=1).to_json()

    before = report()
    snapshot = calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=None, n_resamples=20)
    assert calibrated_snapshot_compute(snapshot_id=snapshot.pk).status == Snapshot.Status.READY
    assert report() == before
    inputs = report_inputs(cycle=world.cycle, run=run)
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for rating in inputs.ratings:
        cells[rating.unit.key][rating.rater] = rating.score
    raters = sorted({r for c in cells.values() for r in c})
    matrix = np.array([[c.get(r, np.nan) for c in cells.values()] for r in raters], dtype=float)
    overall = next(g for g in before["groups"] if g["kind"] == "overall")["experts"]
    reference = krippendorff.alpha(reliability_data=matrix, level_of_measurement=overall["level"])
    assert overall["krippendorff_alpha"] == pytest.approx(reference, abs=1e-6)
