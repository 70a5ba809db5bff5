"""Demo people, panels and calibration cycles, created after the benchmark data is loaded."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from accounts.models import User
from accounts.services import user_create
from annotations.lifecycle import cycle_close
from annotations.models import CalibrationCycle, Panel
from calibration.validation.store import CheckKind, bias_checks
from delphi.demo import demo_delphi_create
from evaluations.models import JudgeRun, ModelResponse, TestCase, Tradition
from evidence.models import Snapshot

from .cycles.sampling import DrawParams
from .reports.snapshots import report_snapshot_compute, report_snapshot_request

DEMO_PASSWORD = "faithbench-demo"  # noqa: S105 - local demo only, printed by load_demo
DEMO_CYCLE_NAME = "Demo cycle 1"
DEMO_SEED = 20251122
# The demo has 32 responses per dimension, fewer than the methodology's 50: the demo cycle draws 16 per
# dimension, which leaves room for a second cycle's 25 % refresh.
DEMO_PER_DIMENSION = 16
DEMO_RETEST_SHARE = Decimal("0.20")  # the demo cycle's test–retest share (calibration/demo.py, _demo_retests)

# (tradition key, [(name, degree, institution, languages)], lead name). Qualifications follow §6.1.1.
DEMO_PANELS: tuple[tuple[str, list[tuple[str, str, str, str]], str], ...] = (
    ("catholic", [
        ("Maria Conti", "S.T.D., dogmatic theology", "Pontifical Gregorian University", "Latin, Greek, Italian"),
        ("Thomas Brennan", "Ph.D., Catholic theology", "Catholic University of America", "Latin, Greek"),
        ("Ana Ribeiro", "S.T.L., patristics", "Institutum Patristicum Augustinianum", "Latin, Greek, Portuguese"),
    ], "Paul Lefèvre"),
    ("orthodox", [
        ("Nikolaos Papadakis", "Th.D., Orthodox theology", "Holy Cross Greek Orthodox School of Theology", "Greek"),
        ("Elena Morozova", "M.Th., patristics", "St Vladimir's Orthodox Theological Seminary", "Greek, Russian"),
        ("George Haddad", "Ph.D., liturgical theology", "University of Balamand", "Greek, Arabic, Syriac"),
    ], "Irene Stavrou"),
    ("reformed", [
        ("Johannes de Vries", "M.Div., Th.M.", "Westminster Theological Seminary", "Greek, Hebrew, Dutch"),
        ("Sarah MacLeod", "M.Div., Ph.D. Old Testament", "Reformed Theological Seminary", "Hebrew, Greek"),
        ("Daniel Kim", "M.Div.", "Calvin Theological Seminary", "Greek, Hebrew, Korean"),
    ], "Margaret Lindqvist"),
    ("evangelical", [
        ("Rebecca Okafor", "Ph.D., New Testament (faculty)", "Wheaton College", "Greek"),
        ("James Whitfield", "D.Min. (pastor, 15 years)", "Trinity Evangelical Divinity School", "Greek, Hebrew"),
        ("Lucía Fernández", "Th.M., systematic theology", "Dallas Theological Seminary", "Greek, Spanish"),
    ], "Samuel Adeyemi"),
    ("pentecostal", [
        ("Grace Mensah", "Ph.D., pneumatology", "Regent University School of Divinity", "Greek"),
        ("David Ortiz", "M.A., theology; Assemblies of God minister", "Assemblies of God Theological Seminary",
         "Greek, Spanish"),
    ], "Ruth Kapoor"),
)
NEUTRAL_PANEL_NAME = "Tradition-neutral panel"


def _person(email: str, *, role: str, name: str, tradition: Tradition | None, degree: str = "",
            institution: str = "", languages: str = "") -> User:
    user = User.objects.filter(email=email).first()
    if user is None:
        user = user_create(email=email, password=DEMO_PASSWORD, role=role, display_name=name, tradition=tradition,
                           degree=degree, institution=institution, languages=languages)
    return user


@transaction.atomic
def demo_people_create() -> list[tuple[str, str, str]]:
    """Create the demo accounts, panels and one calibration cycle; returns (role, email, password) to print."""
    from allauth.account.models import EmailAddress

    logins: list[tuple[str, str, str]] = []
    admin, created = User.objects.get_or_create(
        email="admin@faithbench.test",
        defaults={"role": User.Role.ADMIN, "is_staff": True, "is_superuser": True, "display_name": "Demo Admin"},
    )
    if created:
        admin.set_password(DEMO_PASSWORD)
        admin.save()
    EmailAddress.objects.get_or_create(user=admin, email=admin.email, defaults={"primary": True, "verified": True})
    logins.append(("admin", admin.email, DEMO_PASSWORD))

    traditions = {t.key: t for t in Tradition.objects.all()}
    first_members: list[User] = []
    for key, experts, lead_name in DEMO_PANELS:
        tradition = traditions.get(key)
        if tradition is None:
            continue
        lead = _person(f"lead.{key}@faithbench.test", role=User.Role.ADJUDICATOR, name=lead_name,
                       tradition=tradition, degree="Ph.D.", institution="Panel lead")
        logins.append(("adjudicator", lead.email, DEMO_PASSWORD))
        members = []
        for index, (name, degree, institution, languages) in enumerate(experts, start=1):
            expert = _person(f"{key}{index}@faithbench.test", role=User.Role.EXPERT, name=name,
                             tradition=tradition, degree=degree, institution=institution, languages=languages)
            members.append(expert)
            logins.append(("expert", expert.email, DEMO_PASSWORD))
        panel, _ = Panel.objects.get_or_create(
            tradition=tradition, defaults={"name": f"{tradition.name} panel", "lead": lead}
        )
        panel.members.add(*members)
        first_members.append(members[0])

    neutral, _ = Panel.objects.get_or_create(
        name=NEUTRAL_PANEL_NAME, defaults={"tradition": None, "lead": User.objects.filter(
            email="lead.reformed@faithbench.test").first()},
    )
    neutral.members.add(*first_members[:4])

    _demo_cycle_create(admin=admin, neutral=neutral)
    return logins


def _demo_cycle_create(*, admin: User, neutral: Panel) -> CalibrationCycle | None:
    """One committed demo cycle (idempotent); nothing when no responses are loaded yet."""
    from .cycles.services import RetestSettings, cycle_commit

    existing = CalibrationCycle.objects.filter(name=DEMO_CYCLE_NAME).first()
    if existing is not None or not ModelResponse.objects.exists():
        return existing
    cycle, _report = cycle_commit(
        name=DEMO_CYCLE_NAME,
        params=DrawParams(seed=DEMO_SEED, min_per_dimension=DEMO_PER_DIMENSION),
        neutral_panel=neutral,
        created_by=admin,
        # A demo expert submits about 20 items: 20 % re-served gives each about four (16 sub-scores scored twice),
        # enough for Panel health to show intra-rater agreement; a real cycle keeps the 5 % default.
        retest=RetestSettings(share=DEMO_RETEST_SHARE),
    )
    return cycle


FEATURED_EXPERT = "catholic1@faithbench.test"  # left with an untouched queue, to try scoring in the browser
# Panel health's tour: one expert scores a point lower than the others most of the time throughout (severe), one
# starts like the panel and grows stricter through the cycle (drift). Each has a random stream of their own, so
# the other experts' scores are those they had before.
SEVERE_EXPERT = "evangelical3@faithbench.test"
DRIFTING_EXPERT = "reformed3@faithbench.test"
DEMO_CYCLE_WEEKS = 4  # the demo cycle's submissions are spread over this many weeks, in each expert's queue order
DEMO_RATIONALES = {
    0: "Misreads the question and misstates the tradition's position; the key term is handled wrongly.",
    3: "Precise, well sourced and faithful to the tradition's own vocabulary; handles the original language well.",
}


@transaction.atomic
def demo_scores_create(*, share: float = 0.85, seed: int = DEMO_SEED) -> int:
    """Scores from the demo experts (through the real scoring service) so reports have data (idempotent).

    Every expert except FEATURED_EXPERT finishes about `share` of their queue: scores follow the demo
    judge's raw scores where they exist, with seeded noise of ±1 so that experts disagree now and then;
    a few items are skipped as outside the expert's expertise. Then a third of the items whose experts
    disagree get a gold decision from the demo admin, so the judge-vs-gold comparison has data.
    The experts rate answers of the judge's own family (gemini) a point lower than the judge does four times in five —
    methodology §8.2's self-preference, which the calibrated leaderboard then shows as that model's shift.
    SEVERE_EXPERT and DRIFTING_EXPERT then lower some of their scores (`_rater_effect`), and every expert's
    submissions are dated through the cycle's DEMO_CYCLE_WEEKS weeks in queue order, so drift by week can be read.
    """
    import random

    from annotations.models import Assignment
    from annotations.services import AnnotationInput, annotation_skip, annotation_submit, sub_dimension_keys
    from calibration.adjudication.selectors import item_states
    from calibration.adjudication.services import adjudication_record
    from calibration.cycles.ratings import majority
    from evaluations.judge.config import judge_family as config_judge_family
    from evaluations.models import JudgeResult, JudgeRun, JudgeScore

    cycle = CalibrationCycle.objects.filter(name=DEMO_CYCLE_NAME).first()
    if cycle is None or Assignment.objects.filter(cycle=cycle).exclude(status=Assignment.Status.PENDING).exists():
        return 0
    rng = random.Random(seed)
    stricter = random.Random(seed + 1)  # its own stream: the other models' scores stay as they were
    own_family = {fam for model in JudgeRun.objects.values_list("primary_model", flat=True)
                  if (fam := config_judge_family(model))}
    judged: dict[tuple[int, str], int] = {}
    scored_results = JudgeResult.objects.filter(status=JudgeResult.Status.SCORED, role=JudgeResult.Role.PRIMARY)
    for response_id, key, raw in JudgeScore.objects.filter(result__in=scored_results).values_list(
            "result__response_id", "sub_dimension", "raw_score"):
        judged[(response_id, key)] = raw
    done = 0
    assignments = list(Assignment.objects.filter(cycle=cycle).exclude(expert__email=FEATURED_EXPERT)
                       .select_related("expert", "item__response__model", "cycle").order_by("expert_id", "position"))
    queue_place = _queue_places(assignments)
    effects = {SEVERE_EXPERT: random.Random(seed + 2), DRIFTING_EXPERT: random.Random(seed + 3)}
    for assignment in assignments:
        if rng.random() > share:
            continue
        if rng.random() < 0.03:
            annotation_skip(assignment=assignment, actor=assignment.expert, reason="outside_expertise")
            done += 1
            continue
        scores = {}
        favoured = assignment.item.response.model.family in own_family
        for key in sub_dimension_keys(assignment=assignment):
            base = judged.get((assignment.item.response_id, key), rng.randint(1, 2))
            if favoured and stricter.random() < 0.8:
                base -= 1
            scores[key] = max(0, min(3, base + rng.choice([-1, 0, 0, 0, 1])))
        if assignment.expert.email in effects:
            scores = _rater_effect(scores, email=assignment.expert.email, place=queue_place[assignment.pk],
                                   rng=effects[assignment.expert.email])
        extreme = next((s for s in scores.values() if s in DEMO_RATIONALES), None)
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=scores, rationale=DEMO_RATIONALES[extreme] if extreme is not None else ""))
        done += 1
    _submissions_spread(cycle=cycle, queue_place=queue_place)
    admin = User.objects.get(email="admin@faithbench.test")
    disputed = sorted((s for s in item_states(cycle_ids=[cycle.pk]).values() if s.needs_adjudication),
                      key=lambda s: s.item_id)
    for state in disputed[::3]:
        gold = {key: majority(values) for key, values in state.scores.items()}
        adjudication_record(item_id=state.item_id, adjudicator=admin, scores=gold, reason="rubric_ambiguity",
                            note="Demo: settled on the panel's median after discussion.")
    _demo_retests(seed=seed)
    return done


def _demo_retests(*, seed: int) -> int:
    """Serve the re-served (test–retest) items now due (the cycle's share of each expert's submissions, those
    submitted a week or more ago) and score most of them: the first scores again, a sub-score one point off about
    one time in six, so Panel health shows intra-rater agreement. Re-served scores are counted nowhere else, so no
    other demo number moves (the golden files do not change)."""
    import random

    from annotations.models import Annotation, Assignment
    from annotations.retests import retests_serve_all
    from annotations.services import AnnotationInput, annotation_submit

    retests_serve_all()
    rng = random.Random(seed + 4)  # its own stream: nothing else in the demo draws from it
    scored = 0
    for retest in (Assignment.objects.retests().select_related("expert").order_by("expert_id", "pk")):
        first = Annotation.objects.filter(assignment__retests=retest).prefetch_related("scores").first()
        if first is None or rng.random() < 0.1:  # a few are left for later, like any open item
            continue
        scores = {s.key: max(0, min(3, s.score + rng.choice([-1, 1]))) if rng.random() < 1 / 6 else s.score
                  for s in first.scores.all()}
        extreme = next((v for v in scores.values() if v in DEMO_RATIONALES), None)
        rationale = first.rationale or (DEMO_RATIONALES[extreme] if extreme is not None else "")
        annotation_submit(assignment=retest, actor=retest.expert,
                          data=AnnotationInput(scores=scores, rationale=rationale))
        scored += 1
    return scored


def _queue_places(assignments: list[Any]) -> dict[int, float]:
    """Each assignment's place in its expert's queue, from 0 (first) to 1 (last)."""
    by_expert: dict[int, list[int]] = {}
    for assignment in assignments:
        by_expert.setdefault(assignment.expert_id, []).append(assignment.pk)
    return {pk: index / max(1, len(pks) - 1) for pks in by_expert.values() for index, pk in enumerate(pks)}


def _rater_effect(scores: dict[str, int], *, email: str, place: float, rng: Any) -> dict[str, int]:
    """The severe expert scores a point lower about half the time; the drifting one never in the first quarter of
    their queue, then more and more often, and always in its last quarter. One draw per sub-score from the
    expert's own stream."""
    chance = 0.45 if email == SEVERE_EXPERT else min(1.0, max(0.0, 2 * place - 0.5))
    return {key: max(0, score - 1) if rng.random() < chance else score for key, score in scores.items()}


def _submissions_spread(*, cycle: CalibrationCycle, queue_place: dict[int, float]) -> None:
    """Date the cycle's submissions through DEMO_CYCLE_WEEKS weeks ending now, in each expert's queue order (the
    last an hour before the weeks are up, so the final week is a whole one)."""
    from django.utils import timezone

    from annotations.models import Annotation

    now = timezone.now()
    span = timedelta(weeks=DEMO_CYCLE_WEEKS) - timedelta(hours=1)
    annotations = list(Annotation.objects.filter(assignment__cycle=cycle, submitted_at__isnull=False))
    for annotation in annotations:
        annotation.submitted_at = now - span * (1 - queue_place.get(annotation.assignment_id, 1.0))
    Annotation.objects.bulk_update(annotations, ["submitted_at"])


def demo_totp_activate() -> list[str]:
    """Activate a TOTP authenticator for the demo admin and panel leads (idempotent).

    Staff and adjudicators must use two-factor sign-in. So that the local demo can be tried without
    an authenticator app, `manage.py demo_totp EMAIL` prints the current code (development only).
    """
    from allauth.mfa.models import Authenticator

    from accounts.totp import totp_activate, totp_secret_new

    emails = []
    for user in User.objects.filter(email__endswith="@faithbench.test").filter(
            Q(is_staff=True) | Q(role=User.Role.ADJUDICATOR)).order_by("email"):
        if not Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists():
            totp_activate(user=user, secret=totp_secret_new())
        emails.append(user.email)
    return emails


def demo_report_snapshot_create() -> Snapshot | None:
    """Version 1 of the demo cycle's IRR report, so the tour has a report to read (once; later runs keep it)."""
    cycle = CalibrationCycle.objects.filter(name=DEMO_CYCLE_NAME).first()
    if cycle is None or Snapshot.objects.of(Snapshot.Kind.CYCLE_REPORT, cycle.pk).exists():
        return None
    snapshot = report_snapshot_request(cycle=cycle, requested_by=None)
    return report_snapshot_compute(snapshot_id=snapshot.pk)


def demo_bias_checks_create() -> list[Snapshot]:
    """The validation page's demo: a position check from a pairwise run, a verbosity check of the demo judge run
    against the demo cycle's experts, and a comparison with a second fake judge (once; later runs keep them)."""
    from evaluations.judge.demo import DEMO_LABEL, SECOND_JUDGE, SECOND_LABEL, judge_demo_run
    from evaluations.judge.fake_server import FakeLLMServer
    from evaluations.judge.pairwise import pairwise_run_create, pairwise_run_execute

    from .validation.agreement import agreement_check
    from .validation.position import position_check
    from .validation.verbosity import verbosity_check

    cycle = CalibrationCycle.objects.filter(name=DEMO_CYCLE_NAME).first()
    first = JudgeRun.objects.filter(label=DEMO_LABEL, status=JudgeRun.Status.FINISHED).first()
    if cycle is None or first is None or bias_checks().exists():
        return []
    second = judge_demo_run(label=SECOND_LABEL, primary_model=SECOND_JUDGE)
    # older than the demo run, so that one stays "the latest finished run" that pages and reports default to
    JudgeRun.objects.filter(pk=second.pk).update(created_at=first.created_at - timedelta(seconds=1))
    with FakeLLMServer() as server:  # position bias: 60 pairs of answers to the same case, each in both orders
        pairwise = pairwise_run_execute(run=pairwise_run_create(model=first.primary_model, limit=60,
                                                                base_url=server.base_url))
    return [position_check(run=pairwise), verbosity_check(run=first, cycle=cycle),
            agreement_check(runs=[first, second], kind=CheckKind.JUDGES, n_resamples=200)]


@transaction.atomic
def demo_panel_work_create() -> tuple[list[tuple[str, str, str]], int, list[str]]:
    """The demo's people, their scores, the Delphi studies and two-factor logins, in one transaction: the logins,
    the number of finished assignments and the emails with an authenticator."""
    logins = demo_people_create()
    scored = demo_scores_create()
    demo_delphi_create()
    return logins, scored, demo_totp_activate()


# --- languages (issue 35): a Spanish and a Korean panel, translated cases, their own cycle and judge run ----------
LANGUAGE_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo-languages"
LANGUAGE_CYCLE_NAME = "Demo language cycle"
LANGUAGE_JUDGE_LABEL = "demo (languages: sources and their translations)"
LANGUAGE_MODELS = ("openai/gpt-4o", "anthropic/claude-sonnet-4.5")  # the models that answered the translations
# (tradition key, language, panel name, [(name, degree, institution)]): three experts each, led by the tradition's lead
LANGUAGE_PANELS: tuple[tuple[str, str, str, list[tuple[str, str, str]]], ...] = (
    ("catholic", "es", "Catholic panel (Spanish)", [
        ("Carmen Vidal", "Dra. en Teología Dogmática", "Pontificia Universidad Católica Argentina"),
        ("Javier Morales", "Lic. en Sagrada Escritura", "Universidad de Navarra"),
        ("Sofía Herrera", "Dra. en Patrística", "Pontificia Universidad Javeriana"),
    ]),
    ("reformed", "ko", "Reformed panel (Korean)", [
        ("Min-jun Park", "Th.D., systematic theology", "Chongshin University"),
        ("Ji-woo Lee", "Ph.D., church history", "Presbyterian University and Theological Seminary"),
        ("Seo-yeon Choi", "Th.M., New Testament", "Hapdong Theological Seminary"),
    ]),
)


def _language_panels_create() -> list[Panel]:
    """The Spanish Catholic and Korean Reformed panels (tradition × language), their experts scoring their language
    and English."""
    from accounts.models import ExpertProfile

    panels = []
    for key, language, name, experts in LANGUAGE_PANELS:
        tradition = Tradition.objects.filter(key=key).first()
        if tradition is None:
            continue
        members = [_person(f"{key}.{language}{i}@faithbench.test", role=User.Role.EXPERT, name=person_name,
                           tradition=tradition, degree=degree, institution=institution,
                           languages="Korean, English" if language == "ko" else "Spanish, English")
                   for i, (person_name, degree, institution) in enumerate(experts, start=1)]
        ExpertProfile.objects.filter(user__in=members).update(scoring_languages=[language, "en"])
        panel, _ = Panel.objects.get_or_create(tradition=tradition, language=language, defaults={
            "name": name, "lead": User.objects.filter(email=f"lead.{key}@faithbench.test").first()})
        panel.members.add(*members)
        panels.append(panel)
    return panels


def _language_judge_run(external_ids: list[str]) -> JudgeRun:
    """The fake judge over every answer to the sources and their translations, dated before the other demo runs
    so the main demo run stays "the latest finished run"."""
    from evaluations.judge.fake_server import FakeLLMServer
    from evaluations.judge.pipeline import judge_run_execute
    from evaluations.judge.services import judge_run_create
    from evaluations.selectors import rubric_active

    with FakeLLMServer() as server:
        run = judge_run_create(rubric=rubric_active(), label=LANGUAGE_JUDGE_LABEL, base_url=server.base_url,
                               cases={"external_id": external_ids})
        judge_run_execute(run=run)
    oldest = JudgeRun.objects.exclude(pk=run.pk).order_by("created_at").values_list("created_at", flat=True).first()
    if oldest is not None:
        JudgeRun.objects.filter(pk=run.pk).update(created_at=oldest - timedelta(seconds=2))
    run.refresh_from_db()
    return run


def _language_cycle_create(*, admin: User, run: JudgeRun, external_ids: list[str]) -> CalibrationCycle:
    """A cycle of every answer of LANGUAGE_MODELS to the sources and their translations (all of them: probability
    1), assigned by tradition × language, and scored by its experts near the judge's scores."""
    import random

    from annotations.models import Assignment, CycleItem
    from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
    from evaluations.models import JudgeScore

    from .cycles.services import cycle_assignments_create

    cycle = CalibrationCycle.objects.create(name=LANGUAGE_CYCLE_NAME, rubric=run.rubric, seed=DEMO_SEED,
                                            created_by=admin)
    from evaluations.demo import CONDITIONS_RUN_LABEL

    # one answer per model and case: the standard condition's first, not the conditions demo's repetitions
    responses = ModelResponse.objects.filter(
        test_case__external_id__in=external_ids, model__name__in=LANGUAGE_MODELS, condition__is_standard=True,
        repetition=1).exclude(run_label=CONDITIONS_RUN_LABEL).order_by("pk")
    CycleItem.objects.bulk_create(CycleItem(cycle=cycle, response=r, source=CycleItem.Source.RANDOM,
                                            inclusion_probability=1.0, inclusion_basis=CycleItem.InclusionBasis.DRAWN,
                                            stratum=["languages demo"]) for r in responses)
    cycle_assignments_create(cycle=cycle)
    # the README tour's expert keeps one untouched queue (Demo cycle 1's 40 items): none of this cycle's items
    Assignment.objects.filter(cycle=cycle, expert__email=FEATURED_EXPERT).delete()
    judged = {(r, k): s for r, k, s in JudgeScore.objects.filter(result__run=run, result__status="scored").values_list(
        "result__response_id", "sub_dimension", "raw_score")}
    rng = random.Random(DEMO_SEED + 35)
    for assignment in Assignment.objects.filter(cycle=cycle).select_related(
            "expert", "item", "cycle").order_by("expert_id", "position"):
        scores = {key: max(0, min(3, judged.get((assignment.item.response_id, key), 2) + rng.choice([-1, 0, 0, 1])))
                  for key in sub_dimension_keys(assignment=assignment)}
        extreme = next((v for v in scores.values() if v in DEMO_RATIONALES), None)
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=scores, rationale=DEMO_RATIONALES[extreme] if extreme is not None else ""))
    # scored and closed: a finished cycle to read (My calibration, its report), never items in the tour's queue
    return cycle_close(cycle=cycle, actor=admin, reason="demo: the languages cycle is finished")


def demo_languages_create() -> list[str]:
    """Issue 35's demo (once): six cases translated into Spanish and Korean with their provenance (imported through
    the case importer), answers in those languages, a Spanish Catholic and a Korean Reformed panel, a judge run over
    the sources and translations, a cycle scored by every panel in its language, its report (α per language) and
    its calibrated leaderboard (a score per language). Lines to print; nothing when it exists or data is missing."""
    from evaluations.importing import import_file

    from .calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request

    admin = User.objects.filter(email="admin@faithbench.test").first()
    if admin is None or CalibrationCycle.objects.filter(name=LANGUAGE_CYCLE_NAME).exists():
        return []
    for name, kind in (("cases.json", "cases"), ("responses.jsonl", "responses")):  # the importer logs each
        import_file(path=LANGUAGE_DIR / name, kind=kind, name=f"fixtures/demo-languages/{name}")
    translated = list(TestCase.objects.filter(source_case__isnull=False).values_list("external_id",
                                                                                   "source_case__external_id"))
    external_ids = sorted({i for pair in translated for i in pair})
    panels = _language_panels_create()
    run = _language_judge_run(external_ids)
    with transaction.atomic():
        cycle = _language_cycle_create(admin=admin, run=run, external_ids=external_ids)
    report = report_snapshot_compute(snapshot_id=report_snapshot_request(
        cycle=cycle, requested_by=None, run_id=run.pk).pk)
    board = calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=run, cycle=cycle, requested_by=None).pk)
    return [f"languages: {len(translated)} translated cases, panels {', '.join(p.name for p in panels)}; "
                 f"judge run #{run.pk}; {cycle.name}: report version {report.version} ({report.status}), calibrated "
                 f"leaderboard version {board.version} ({board.status}) — /calibrated/runs/{run.pk}/, "
                 f"/calibration/validation/translations/?run={run.pk}"]
