"""In real Chromium: a lead opens a case review cycle, three experts review blind (one case judged invalid by two
of them), the flag appears, the lead revises the case, and the history shows both versions with the reviews given
to the first. Debian's chromium is required; without it this FAILS. Screenshots: tests/e2e/artifacts/review-*.png.
"""
from __future__ import annotations

import re

import pytest

from accounts.models import User
from annotations.models import Panel
from casereview.models import CaseFlag, CaseReview
from evaluations.models import TestCase, TestCaseRevision
from tests.annotations.factories import CaseFactory, person, tradition
from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-review-2468"


def sign_in(new_context, base: str, email: str, landing: str):  # type: ignore[no-untyped-def]
    context = new_context()
    page = context.new_page()
    page.goto(f"{base}/accounts/login/?next={landing}")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(re.escape(landing) + "$"))
    return context, page


def answer(page, valid: str, reference: str, difficulty: str, clarity: str, comment: str = "") -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("group", name="Is this a valid test of its dimension?").get_by_label(valid, exact=True).check()
    page.get_by_role("group", name="Is the reference answer correct for this tradition?").get_by_label(
        reference, exact=True).check()
    page.get_by_role("group", name="How difficult is it?").get_by_label(difficulty, exact=True).check()
    page.get_by_role("group", name=re.compile("How clear is the question")).get_by_label(clarity, exact=True).check()
    if comment:
        page.get_by_label("Comment (optional)").fill(comment)
    page.click("#submit-review")


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_assign_three_blind_reviews_flag_revise_history(live_server, new_context) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    catholic = tradition("catholic")
    lead = person(User.Role.ADJUDICATOR, tradition=catholic, name="Lena Lead", email="lena@faithbench.test")
    experts = [person(tradition=catholic, name=n, email=f"{n.split()[0].lower()}@faithbench.test")
               for n in ("Anna Reviewer", "Boris Reviewer", "Chloe Reviewer")]
    for user in (lead, *experts):
        user.set_password(PASSWORD)
        user.save()
    panel = Panel.objects.create(name="Catholic panel", tradition=catholic, lead=lead)
    panel.members.set(experts)
    weak = CaseFactory(tradition=catholic, external_id="cath-weak", prompt="Name the sacraments, all of them, fast.",
                       reference_answer="Seven.")
    CaseFactory(tradition=catholic, external_id="cath-good", prompt="What does *ex opere operato* mean?")

    # 1. The lead opens the cycle in the browser.
    context, page = sign_in(new_context, live_server.url, lead.email, "/review/cycles/")
    page.select_option("#id_panel", label="Catholic panel")
    page.fill("#id_name", "Spring review")
    page.click("#open-review-cycle button[type=submit]")
    page.wait_for_url(re.compile(r"/review/cycles/\d+/$"))
    expect(page.get_by_test_id("review-progress")).to_contain_text("0 of 6 reviews submitted")
    cycle_url = page.url
    context.close()

    # 2. Three experts review blind: two call the weak case invalid with a wrong reference, one calls it valid.
    verdicts = {"anna@faithbench.test": ("No", "No", "Easy", "1", "MARK-ANNA-only-mine"),
                "boris@faithbench.test": ("No", "Partly", "Medium", "1", "MARK-BORIS-only-mine"),
                "chloe@faithbench.test": ("Yes", "No", "Easy", "2", "")}
    for index, expert in enumerate(experts):
        context, page = sign_in(new_context, live_server.url, expert.email, "/review/")
        expect(page.get_by_test_id("open-reviews")).to_have_text("2 cases to review.")
        page.get_by_role("link", name="cath-good").click()
        body = page.content()
        for other in experts:  # blind: nobody else's name, email or comment, and no count of reviews
            if other is not expert:
                assert other.display_name not in body and other.email not in body
        assert "MARK-ANNA" not in body and "MARK-BORIS" not in body and "of 3" not in body
        expect(page.get_by_test_id("case-prompt")).to_contain_text("ex opere operato")
        answer(page, "Yes", "Yes", "Medium", "3")
        page.wait_for_url(re.compile(r"/review/r/[\w-]+/$"))  # on to the next case to review
        expect(page.get_by_test_id("case-prompt")).to_contain_text("Name the sacraments")
        if index == 2:
            page.screenshot(path=str(ARTIFACTS / "review-expert.png"), full_page=True)
        answer(page, *verdicts[expert.email])
        page.wait_for_url(re.compile(r"/review/$"))
        expect(page.get_by_test_id("open-reviews")).to_have_text("0 cases to review.")
        context.close()
    assert CaseReview.objects.filter(submitted_at__isnull=False).count() == 6

    # 3. The flag is on the lead's page; the lead revises the case.
    context, page = sign_in(new_context, live_server.url, lead.email, "/review/cycles/")
    page.goto(cycle_url)
    flags = page.get_by_test_id("flags")
    expect(flags).to_contain_text("cath-weak")
    expect(flags).to_contain_text("most reviewers say it is not a valid test of its dimension")
    expect(flags).not_to_contain_text("cath-good")
    page.click("#compute-review-report")
    expect(page.get_by_test_id("agreement")).to_contain_text("Valid test of its dimension")
    page.screenshot(path=str(ARTIFACTS / "review-lead-cycle.png"), full_page=True)
    flags.get_by_role("link", name="Resolve").click()
    page.get_by_label("Revise the case (a new version)").check()
    page.fill("#id_prompt", "Name the seven sacraments of the Catholic Church and group them as the Catechism does.")
    page.fill("#id_reference_answer", "Baptism, Confirmation, Eucharist; Penance, Anointing; Holy Orders, Matrimony.")
    page.fill("#id_note", "The reviewers found the question unclear.")
    page.click("#resolve")
    page.wait_for_url(cycle_url)
    expect(page.locator(".messages")).to_contain_text("now version 2")
    expect(page.get_by_test_id("flags")).to_contain_text("Revised (now v2)")

    # 4. The history keeps version 1 with its three reviews; version 2 has none yet.
    page.get_by_test_id("flags").get_by_role("link", name="History").click()
    v1, v2 = page.get_by_test_id("version-1"), page.get_by_test_id("version-2")
    expect(v1).to_contain_text("Name the sacraments, all of them, fast.")
    expect(v1).to_contain_text("Reviews given to this version (3)")
    expect(v2).to_contain_text("Name the seven sacraments")
    expect(v2).to_contain_text("Reviews given to this version (0)")
    expect(v2).to_contain_text("The reviewers found the question unclear.")
    page.screenshot(path=str(ARTIFACTS / "review-history.png"), full_page=True)
    context.close()
    weak.refresh_from_db()
    assert weak.version == 2 and TestCaseRevision.objects.filter(test_case=weak).count() == 2
    assert CaseFlag.objects.get().status == CaseFlag.Status.REVISED
    assert TestCase.objects.get(external_id="cath-good").version == 1
