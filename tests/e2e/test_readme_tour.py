"""The README's tour ("A tour of the demo"), step by step, in real Chromium, against the demo as `make run` serves it.

`make run` is `manage.py migrate`, `manage.py load_demo` and `manage.py runserver` with the development settings
(`config.settings.dev`: DEBUG on, two-factor sign-in required of the admin and the panel leads). This module does
exactly that once, into a SQLite file of its own, and serves it from a subprocess; every test is one step of the
tour: its sign-in, the page it names and what the README says you will see there. Two-factor codes come from
`manage.py demo_totp EMAIL`, as the README tells the reader. Each role signs in once per module (its session is
reused by the later steps), so no code is typed twice.

The steps run in the README's order (pytest keeps a module's order); a step run alone signs its role in itself.
Select them with `pytest tests/e2e -k tour`. Each step saves what it shows under tests/e2e/artifacts/tour/; with
`README_SCREENSHOTS=docs/screenshots` the README's screenshots are written there instead (small PNGs), so a changed
page gets a fresh picture by running the tour again.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PASSWORD = "faithbench-demo"  # the README: "every demo password is `faithbench-demo`"
EXPERT = "catholic1@faithbench.test"
LEAD = "lead.evangelical@faithbench.test"
ADMIN = "admin@faithbench.test"
# The demo's evaluated models (evaluations/demo): an expert's and a lead's pages must never name one.
DEMO_MODELS = ("gpt-4o", "claude-sonnet", "gemini-2.5-pro", "llama-3.3")
TOTP_MARGIN_SECONDS = 8  # time to start a subprocess and type a code on a busy machine
LOAD_TIMEOUT = 600
SCREENSHOT_HEIGHT = {1280: 800, 375: 812}  # seconds for migrate + load_demo on a busy 2-core machine

pytestmark = pytest.mark.e2e


@dataclass
class Tour:
    url: str
    env: dict[str, str]
    log: Path
    states: dict[str, Any] = field(default_factory=dict)  # role → Playwright storage state after sign-in

    def manage(self, *args: str) -> str:
        """Run `manage.py ARGS` against the tour's database, as the README's reader would; its standard output."""
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=LOAD_TIMEOUT)
        assert done.returncode == 0, f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}"
        return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tour]:
    """The demo, loaded once for the module, served by `manage.py runserver` with the development settings."""
    folder = tmp_path_factory.mktemp("readme-tour")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev", "PYTHONUNBUFFERED": "1",
           "DATABASE_URL": f"sqlite:///{folder / 'demo.sqlite3'}"}
    port = free_port()
    tour = Tour(url=f"http://127.0.0.1:{port}", env=env, log=folder / "runserver.log")
    tour.manage("migrate", "--noinput")
    logins = tour.manage("load_demo")
    for email in (EXPERT, LEAD, ADMIN):  # the logins the README's tour names are the ones load_demo prints
        assert email in logins, f"load_demo no longer prints {email}, which README.md's tour uses"
    with tour.log.open("w") as log:
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(tour.url + "/", timeout=5) as response:  # noqa: S310 - our own server
                        if response.status == 200:
                            break
                except (urllib.error.URLError, ConnectionError):
                    pass
                assert server.poll() is None, f"runserver exited: {tour.log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"runserver did not answer in 60 s: {tour.log.read_text()[-3000:]}"
                time.sleep(0.3)
            yield tour
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


def demo_totp_code(tour: Tour, email: str) -> str:
    """The code `manage.py demo_totp EMAIL` prints. It says how long the code stays valid; like a reader, take
    the next one when this one expires before it can be typed (allauth accepts no expired code)."""
    for _ in range(2):
        printed = tour.manage("demo_totp", email)
        found = re.search(r"\b(\d{6})\b.*?valid for (\d+) s", printed)
        assert found, f"demo_totp printed no code and validity: {printed!r}"
        if int(found.group(2)) >= TOTP_MARGIN_SECONDS:
            return found.group(1)
        time.sleep(int(found.group(2)) + 1)
    raise AssertionError(f"demo_totp printed only codes about to expire: {printed!r}")


def sign_in(page: Any, tour: Tour, email: str, *, two_factor: bool) -> None:
    """The README's sign-in: email and the demo password; for the admin and the leads, then the code that
    `manage.py demo_totp EMAIL` prints."""
    from playwright.sync_api import expect

    page.goto(f"{tour.url}/")
    page.get_by_role("link", name="Sign in").first.click()
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    if two_factor:
        page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
        page.fill("input[name=code]", demo_totp_code(tour, email))
        page.press("input[name=code]", "Enter")
    page.wait_for_load_state()
    assert "/accounts/login/" not in page.url and "/2fa/" not in page.url, \
        f"{email} is not signed in, still at {page.url}: {page.locator('main').inner_text()[:300]}"
    expect(page.locator("header")).to_contain_text("Sign out")


def open_page(new_context: Callable[..., Any], *, width: int = 1280, storage_state: Any = None) -> Any:
    """A new page in a new context (the conftest's, which fails the test on a CSP violation), `width` px wide."""
    context = new_context(storage_state=storage_state) if storage_state else new_context()
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    return page


def signed_in(tour: Tour, new_context: Callable[..., Any], email: str, *, two_factor: bool,
              width: int = 1280) -> Any:
    """A page signed in as `email`: the session of the tour's sign-in step when it ran, else a new sign-in."""
    if email in tour.states:
        return open_page(new_context, width=width, storage_state=tour.states[email])
    page = open_page(new_context, width=width)
    sign_in(page, tour, email, two_factor=two_factor)
    tour.states[email] = page.context.storage_state()
    return page


def screenshot(page: Any, name: str) -> None:
    """What this step shows, as the README's `docs/screenshots/<name>` (when README_SCREENSHOTS names that folder;
    reduced to 128 colours, a fraction of the bytes) or under tests/e2e/artifacts/tour/."""
    from PIL import Image

    folder = Path(os.environ.get("README_SCREENSHOTS") or ARTIFACTS / "tour")
    folder.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    page.set_viewport_size({"width": width, "height": SCREENSHOT_HEIGHT.get(width, 800)})
    page.screenshot(path=str(folder / name))
    image = Image.open(folder / name).convert("RGB")
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(folder / name, optimize=True)


def assert_names_no_model(page: Any) -> None:
    html = page.content()
    named = [m for m in DEMO_MODELS if m in html]
    assert named == [], f"{page.url} names evaluated models {named}: scoring and adjudication are blind"


def nav(page: Any, name: str) -> None:
    """Follow a link of the site's navigation bar, as the README's *Name* → *Name* steps do."""
    page.locator("header").get_by_role("link", name=name, exact=True).click()
    page.wait_for_load_state()


def test_readme_still_describes_the_tour_these_tests_walk() -> None:
    text = README.read_text(encoding="utf-8")
    for needle in (EXPERT, LEAD, ADMIN, PASSWORD, "demo_totp", "*Start scoring*", "*Adjudication*", "*Decide*",
                   "*Demo cycle 1*", "*IRR report*", "*Judge runs*", "*Leaderboard*", "*Calibrated leaderboard*",
                   "*What the experts changed, and why*", "*Validation*", "*Delphi*",
                   "*Close round 1*", "*Import file*", "tests/e2e/test_readme_tour.py"):
        assert needle in text, f"README.md's tour no longer mentions {needle}: update the tour tests with it"


# --- 1. An expert's queue ------------------------------------------------------------------------------------


def test_tour_1_expert_signs_in_and_lands_on_my_queue(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = open_page(new_context)
    sign_in(page, tour, EXPERT, two_factor=False)
    tour.states[EXPERT] = page.context.storage_state()
    page.wait_for_url(re.compile(r"/scoring/$"))
    expect(page.locator("h1")).to_have_text("My queue")
    expect(page.locator("[data-testid=progress-text]")).to_have_text(re.compile(r"^\d+ / 40 done$"))
    expect(page.locator("#resume")).to_have_text(re.compile(r"Start scoring|Continue where you left off"))
    expect(page.locator("main table tbody tr")).to_have_count(40)
    expect(page.locator("main table")).to_contain_text("Intertextual Reasoning")
    assert_names_no_model(page)
    screenshot(page, "queue-1280.png")


# --- 2. Score an answer with the keyboard --------------------------------------------------------------------


def test_tour_2_expert_scores_an_answer_with_the_keyboard(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, EXPERT, two_factor=False)
    page.goto(f"{tour.url}/scoring/")
    done_before = int(page.locator("[data-testid=progress-text]").inner_text().split("/")[0])
    page.locator("#resume").click()
    page.wait_for_url(re.compile(r"/scoring/a/[\w-]+/$"))
    expect(page.get_by_role("heading", name="Question")).to_be_visible()
    expect(page.get_by_role("heading", name="Answer")).to_be_visible()
    assert_names_no_model(page)
    subdimensions = page.locator("fieldset.subdim")
    count = subdimensions.count()
    assert count >= 2, "a dimension has several sub-dimensions, each with its 0–3 row"
    expect(subdimensions.first.get_by_role("radio")).to_have_count(4)  # the large 0–3 buttons

    page.keyboard.press("?")  # the list of keys
    expect(page.locator("#keys-help")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#keys-help")).to_be_hidden()

    subdimensions.first.focus()
    for _ in range(count):  # "Press 0–3 to score and move on"
        page.keyboard.press("2")
    expect(page.locator("fieldset.subdim.scored")).to_have_count(count)
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "scoring-desktop-1280.png")
    page.keyboard.press("Enter")  # "Enter submits once every sub-dimension is scored"
    expect(page.locator("[data-testid=item-message]")).to_contain_text("Submitted.")
    expect(page.locator("#undo-button")).to_be_visible()  # "Undo is offered for two minutes"
    page.goto(f"{tour.url}/scoring/")
    expect(page.locator("[data-testid=progress-text]")).to_have_text(f"{done_before + 1} / 40 done")


def test_tour_2_the_scoring_page_fits_a_phone(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    from tests.e2e.a11y import horizontal_overflow

    page = signed_in(tour, new_context, EXPERT, two_factor=False, width=375)
    page.goto(f"{tour.url}/scoring/")
    page.locator("#resume").click()
    page.wait_for_url(re.compile(r"/scoring/a/[\w-]+/$"))
    expect(page.locator("fieldset.subdim").first).to_be_visible()
    assert horizontal_overflow(page) == 0, "the README shows the scoring page at 375 px: it must not scroll sideways"
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "scoring-phone-375.png")


# --- 3. A panel lead adjudicates -----------------------------------------------------------------------------


def test_tour_3_panel_lead_signs_in_with_a_demo_totp_code(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = open_page(new_context)
    sign_in(page, tour, LEAD, two_factor=True)
    tour.states[LEAD] = page.context.storage_state()
    expect(page.locator("header").get_by_role("link", name="Adjudication", exact=True)).to_be_visible()


def test_tour_3_panel_lead_records_a_gold_score(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, LEAD, two_factor=True)
    page.goto(f"{tour.url}/")
    nav(page, "Adjudication")
    expect(page.locator("h1")).to_have_text("Items to adjudicate")
    rows = page.locator("main table tbody tr")
    waiting = rows.count()
    assert waiting >= 1, "the demo leaves items whose experts disagree for the tour's lead"
    expect(rows.first).to_contain_text(re.compile(r"scores span \d points|no majority"))
    screenshot(page, "adjudication-queue-1280.png")
    rows.first.get_by_role("link", name="Decide").click()
    page.wait_for_url(re.compile(r"/calibration/adjudication/\d+/$"))
    for label in ("Expert A", "Expert B"):  # anonymous labels
        expect(page.get_by_role("heading", name=label, exact=True)).to_be_visible()
    assert_names_no_model(page)

    gold = page.locator("form:has(button:has-text('Record gold score'))")
    names = sorted({gold.locator("input[type=radio]").nth(i).get_attribute("name")
                    for i in range(gold.locator("input[type=radio]").count())})
    assert names, "the gold form has a 0–3 choice per sub-dimension"
    for name in names:
        gold.locator(f"input[type=radio][name='{name}'][value='2']").check(force=True)
    reason = gold.locator("select[name=reason]")
    reason.select_option(index=1)  # the first real reason (index 0 is "— choose a reason —")
    gold.get_by_role("button", name="Record gold score").click()
    page.wait_for_url(re.compile(r"/calibration/adjudication/$"))
    expect(page.locator("body")).to_contain_text("Gold scores recorded. The experts' own scores are unchanged.")
    expect(rows).to_have_count(waiting - 1)


# --- 4. The admin reads the IRR report ------------------------------------------------------------------------


def test_tour_4_admin_signs_in_with_a_demo_totp_code_and_lands_on_calibration(
        tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = open_page(new_context)
    sign_in(page, tour, ADMIN, two_factor=True)
    tour.states[ADMIN] = page.context.storage_state()
    page.wait_for_url(re.compile(r"/calibration/$"))
    expect(page.locator("main")).to_contain_text("Calibration cycles")
    expect(page.get_by_role("link", name="Demo cycle 1", exact=True)).to_be_visible()


def test_tour_4_admin_reads_the_irr_report(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/calibration/")
    page.get_by_role("link", name="Demo cycle 1", exact=True).click()
    page.get_by_role("link", name="IRR report", exact=True).click()
    page.wait_for_url(re.compile(r"/calibration/cycles/\d+/report/$"))
    expect(page.locator("h1")).to_have_text("IRR report: Demo cycle 1")
    expect(page.locator("[data-testid=experts-summary]")).to_contain_text("α =")
    judge = page.locator("[data-testid=judge-summary]")
    expect(judge).to_contain_text("vs expert majority")
    expect(judge).to_contain_text("vs adjudicated gold")
    assert re.search(r"\b(pass|fail|uncertain)\b", page.locator("main").inner_text()), "no verdict on the report"
    assert page.locator("main svg").count() >= 3, "forest plots and confusion matrices are SVG charts"
    page.locator("[data-testid=experts-summary]").evaluate("e => e.closest('.card, section, div').scrollIntoView()")
    screenshot(page, "irr-report-1280.png")
    for name in ("citable bundle (zip)", "CSV (long)", "JSON", "PDF"):
        link = page.get_by_role("link", name=name, exact=True).first
        expect(link).to_be_visible()
        response = page.request.get(tour.url + str(link.get_attribute("href")))
        assert response.status == 200, f"the report's {name} download answered {response.status}"


# --- 5. Judge runs and the leaderboard --------------------------------------------------------------------------


def test_tour_5_admin_opens_judge_runs_and_the_leaderboard(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/calibration/")
    nav(page, "Judge runs")
    expect(page.locator("h1")).to_have_text("Judge runs")
    runs = page.locator("main table tbody tr")
    # the demo's run and its repeat, then the generation-conditions run and the languages run (older)
    expect(runs).to_have_count(4)
    for i in range(4):
        expect(runs.nth(i)).to_contain_text("Finished")
    for i in range(2):
        expect(runs.nth(i)).to_contain_text("184 / 184")
    nav(page, "Leaderboard")
    expect(page.locator("h1")).to_have_text("Judge leaderboard")
    board = page.locator("main table").first
    expect(board).to_contain_text("95 % CI")
    expect(board.locator("tbody tr")).to_have_count(4)  # the demo's four evaluated models, ranked
    expect(page.get_by_role("heading", name="By dimension")).to_be_visible()
    screenshot(page, "leaderboard-1280.png")


def test_tour_5_admin_reads_the_calibrated_leaderboard(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/calibration/")
    nav(page, "Calibrated leaderboard")
    expect(page.locator("h1")).to_have_text("Expert-calibrated leaderboard")
    expect(page.get_by_test_id("snapshot-line")).to_contain_text("Version 1")
    rows = page.get_by_test_id("calibrated-row")
    expect(rows).to_have_count(4)  # the four demo models, judge-only beside calibrated
    changed = page.get_by_test_id("what-changed")
    expect(changed).to_contain_text("What the experts changed, and why")
    expect(changed).to_contain_text("gemini")  # the demo experts are stricter than the judge on its own family
    expect(page.get_by_test_id("evidence-meter")).to_be_visible()
    expect(page.get_by_test_id("verdict").first).to_be_visible()  # a live verdict with its looks on every model
    expect(page.get_by_test_id("pair-verdict").first).to_contain_text("look")
    screenshot(page, "calibrated-1280.png")


# --- 6. Is the judge validated? --------------------------------------------------------------------------------


def test_tour_6_admin_opens_the_validation_page(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/")
    nav(page, "Calibration")
    page.locator("main").get_by_role("link", name="Validation", exact=True).first.click()
    page.wait_for_url(re.compile(r"/calibration/validation/"))
    expect(page.locator("h1")).to_have_text("Validation status")
    main = page.locator("main")
    expect(main).to_contain_text("Test cases validated by experts")
    for check in ("Position", "Verbosity", "Judge comparison"):  # the demo's three bias checks
        expect(main).to_contain_text(check)
    screenshot(page, "validation-1280.png")


# --- 7. Close a Delphi round --------------------------------------------------------------------------------------


def test_tour_7_admin_closes_delphi_round_1(tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/")
    nav(page, "Delphi")
    studies = page.locator("main table tbody tr")
    expect(studies).to_have_count(5)  # one weighting study per tradition
    hrefs = [studies.nth(i).get_by_role("link").first.get_attribute("href") for i in range(studies.count())]
    answered = None
    for href in hrefs:  # "Open the study whose panelists have answered round 1"
        page.goto(f"{tour.url}{href}")
        if page.locator("main td .ok", has_text="answered").count() and page.locator("#close-round").count():
            answered = href
            break
    assert answered, "no demo Delphi study has answers in round 1, so the README's 'Close round 1' cannot work"
    expect(page.locator("main")).to_contain_text("Round 1 is open.")
    screenshot(page, "delphi-1280.png")
    page.locator("#close-round").click()
    page.wait_for_load_state()
    main = page.locator("main")
    expect(main).to_contain_text(re.compile(r"Round 1 closed: \d+ of \d+ panelists answered"))
    if "Every weight converged" in main.inner_text():  # "… unless every weight has converged already"
        expect(page.locator("[data-testid=study-status]")).to_contain_text("ready to close")
        expect(page.locator("#close-study")).to_be_visible()
    else:  # "round 2 opens"
        expect(main).to_contain_text("Round 2 is open.")
        expect(page.locator("#close-round")).to_have_text("Close round 2")


# --- 8. The Django admin --------------------------------------------------------------------------------------------


def test_tour_8_admin_finds_imports_and_exports_in_the_django_admin(
        tour: Tour, new_context: Callable[..., Any]) -> None:
    from playwright.sync_api import expect

    page = signed_in(tour, new_context, ADMIN, two_factor=True)
    page.goto(f"{tour.url}/")
    nav(page, "Admin")
    page.wait_for_url(re.compile(r"/admin/$"))
    for model in ("Test cases", "Model responses"):
        page.goto(f"{tour.url}/admin/")
        page.get_by_role("link", name=model, exact=True).first.click()
        expect(page.get_by_role("link", name="Import file")).to_be_visible()
        actions = page.locator("select[name=action] option")
        labels = [actions.nth(i).inner_text() for i in range(actions.count())]
        assert "Export selected as CSV" in labels, f"{model}: no export action in {labels}"
