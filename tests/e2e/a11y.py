"""Accessibility checks for the browser tests: axe-core (vendored), horizontal overflow, and the demo's pages.

`demo_pages()` lists every HTML page of the application for each role, with ids taken from the demo data
(`manage.py load_demo`): the pages an expert, a panel lead and an admin use, and the signed-out ones.
Django's own admin (`/admin/`) and the API's Swagger page are not ours and are left out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
# What "accessible" means here: WCAG 2.0/2.1/2.2 A and AA rules, plus axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
BLOCKING = ("serious", "critical")
NOT_FOUND_URL = "/no-such-page/"  # the 404 page is a page too


@dataclass
class Role:
    name: str
    email: str | None  # None: signed out
    urls: list[str] = field(default_factory=list)


def demo_pages() -> list[Role]:
    """Every page of every role, with the demo's ids (call after `load_demo`)."""
    from annotations.models import Annotation, Assignment, CalibrationCycle, CycleItem
    from calibration.models import DelphiStudy
    from evaluations.models import JudgeRun

    expert = "catholic1@faithbench.test"
    lead = "lead.catholic@faithbench.test"
    admin = "admin@faithbench.test"
    mine = Assignment.objects.filter(expert__email=expert).order_by("position", "pk")
    open_item = mine.filter(status__in=["pending", "draft"]).first()
    cycle = CalibrationCycle.objects.order_by("pk").first()
    run = JudgeRun.objects.order_by("pk").first()
    study = DelphiStudy.objects.filter(panelists__email=expert).order_by("pk").first()
    any_study = DelphiStudy.objects.order_by("pk").first()
    done = (Annotation.objects.filter(assignment__expert__email=expert, status="submitted")
            .values_list("assignment__public_id", flat=True).first())
    lead_item = (CycleItem.objects.filter(assignments__panel__lead__email=lead)
                 .exclude(assignments__expert__email=lead).order_by("pk").values_list("pk", flat=True).first())
    reassignable = (Assignment.objects.filter(panel__lead__email=lead, status__in=["pending", "draft"])
                    .order_by("pk").values_list("public_id", flat=True).first())

    from casereview.models import CaseFlag, CaseReview, CaseReviewCycle, TheoBertAudit

    open_review = (CaseReview.objects.filter(expert__email=expert, submitted_at__isnull=True).order_by("pk")
                   .values_list("public_id", flat=True).first())
    done_review = (CaseReview.objects.filter(expert__email=expert, submitted_at__isnull=False).order_by("pk")
                   .values_list("public_id", flat=True).first())
    open_audit = (TheoBertAudit.objects.filter(expert__email=expert, submitted_at__isnull=True).order_by("pk")
                  .values_list("public_id", flat=True).first())
    review_cycle = CaseReviewCycle.objects.filter(panel__lead__email=lead).order_by("pk").first()
    review_flag = CaseFlag.objects.filter(cycle=review_cycle).order_by("pk").first() if review_cycle else None

    signed_in = ["/", "/accounts/profile/", "/accounts/inbox/", "/accounts/email/", "/accounts/password/change/",
                 "/accounts/2fa/"]
    expert_urls = [*signed_in, "/scoring/", "/delphi/", "/review/"]
    expert_urls += ["/help/", "/help/scoring-and-blinding/"]  # the help pages: rendered docs/*.md
    expert_urls += [f"/review/r/{p}/" for p in (open_review, done_review) if p]
    if open_audit:
        expert_urls.append(f"/review/theobert/a/{open_audit}/")
    if open_item is not None:
        expert_urls.append(f"/scoring/a/{open_item.public_id}/")
    if done:
        expert_urls.append(f"/scoring/a/{done}/")
    if study is not None:
        expert_urls.append(f"/delphi/{study.pk}/")
    lead_urls = [*signed_in, "/scoring/", "/scoring/lead/", "/scoring/lead/assignments/", "/calibration/adjudication/",
                 "/delphi/"]
    if lead_item is not None:
        lead_urls.append(f"/calibration/adjudication/{lead_item}/")
    lead_urls.append("/review/cycles/")
    lead_urls.append("/calibrated/")  # the newest finished run's calibrated leaderboard (leads may read it)
    lead_urls.append("/calibrated/history/")
    lead_urls.append("/judge/conditions/")  # leaderboards per generation condition, with deltas (leads may read it)
    if review_cycle is not None:
        lead_urls.append(f"/review/cycles/{review_cycle.pk}/")
    if review_flag is not None:
        lead_urls += [f"/review/flags/{review_flag.pk}/", f"/review/cases/{review_flag.test_case_id}/history/"]
    if reassignable:
        lead_urls.append(f"/scoring/a/{reassignable}/reassign/")
    admin_urls = [*signed_in, "/calibration/", "/calibration/panels/", "/calibration/cycles/draw/",
                  "/calibration/progress/", "/judge/runs/", "/judge/leaderboard/", "/delphi/", "/delphi/new/",
                  "/evaluations/", "/calibration/validation/", "/calibration/studies/", "/review/theobert/",
                  "/review/difficulty/"]
    admin_urls += ["/help/statistics/", "/help/judge-pipeline/"]  # the widest tables and the longest page of docs/
    if cycle is not None:
        admin_urls += [f"/calibration/cycles/{cycle.pk}/", f"/calibration/cycles/{cycle.pk}/report/"]
    if run is not None:
        admin_urls.append(f"/judge/runs/{run.pk}/")
    admin_urls += ["/judge/runs/new/", "/calibration/validation/pairwise/new/"]
    from evaluations.models import PairwiseRun

    pairwise = PairwiseRun.objects.order_by("pk").first()
    if pairwise is not None:
        admin_urls.append(f"/calibration/validation/pairwise/{pairwise.pk}/")
    newest = JudgeRun.objects.filter(status="finished").order_by("-pk").first()
    if newest is not None:
        admin_urls += [f"/calibrated/runs/{newest.pk}/", f"/calibrated/runs/{newest.pk}/variance-budget/"]
    if any_study is not None:
        admin_urls.append(f"/delphi/{any_study.pk}/")
    admin_urls.append("/calibration/studies/upload/")  # its later steps need an upload: tests/e2e/test_study_upload.py
    anonymous = ["/", "/accounts/login/", "/accounts/signup/", "/accounts/password/reset/", NOT_FOUND_URL]
    return [Role("anonymous", None, anonymous), Role("expert", expert, expert_urls),
            Role("panel lead", lead, lead_urls), Role("admin", admin, admin_urls)]


def axe_violations(page: Any) -> list[dict]:
    """Run axe-core on the page as it is now; return its violations (each with impact, id, help, nodes).

    The site's Content-Security-Policy refuses injected scripts: open the page in a context created with
    ``bypass_csp=True`` (the CSP itself is checked by tests/test_csp.py and by the other browser tests).
    """
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}))"
        ".violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5), count: v.nodes.length}))",
        AXE_TAGS,
    )
    return list(result)


def horizontal_overflow(page: Any) -> int:
    """How many CSS pixels the page scrolls sideways (0: none)."""
    return int(page.evaluate(
        "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - document.documentElement.clientWidth"))


def describe(violations: list[dict]) -> str:
    return "; ".join(f"{v['impact']} {v['id']} ×{v['count']} ({v['help']}): {', '.join(v['nodes'])}"
                     for v in violations)


def contrast_ratio(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2.x contrast ratio of two sRGB colours (0–255 channels): (L1 + 0.05) / (L2 + 0.05).

    Relative luminance as defined in WCAG 2.2, "relative luminance" (sRGB, linearised with 0.04045 / 12.92 /
    ((c + 0.055) / 1.055) ** 2.4, weights 0.2126, 0.7152, 0.0722).
    """
    def luminance(rgb: tuple[float, float, float]) -> float:
        def channel(c: float) -> float:
            c /= 255
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b_ = (channel(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b_
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# The focused element's outline colour and width, and the background it is drawn on (the nearest opaque one).
FOCUS_JS = r"""() => {
  const el = document.activeElement; if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  let node = el.parentElement, bg = [255, 255, 255];
  while (node) { const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.99)) { bg = c.slice(0, 3); break; } node = node.parentElement; }
  return {tag: el.tagName.toLowerCase() + (el.id ? '#' + el.id : ''), style: style.outlineStyle,
          width: parseFloat(style.outlineWidth), color: rgb(style.outlineColor).slice(0, 3), background: bg};
}"""


def focus_ring(page: Any) -> dict | None:
    """The focused element's outline (style, width in px, colour) and the background behind it."""
    return page.evaluate(FOCUS_JS)


# --- the crawl: every page a role can reach by following links from its seed pages ----------------------------
# Seeds are `demo_pages()`; from each page every same-origin link is followed once per *kind* of page (URL name
# and query keys: one adjudication item stands for all, `?page=2` for every page number), so forms that only a
# link leads to (the Delphi response form) are measured too. Not followed: Django's admin and the API (not ours),
# sign-out, downloads (a file, not a page) and the static files.
NOT_CRAWLED = re.compile(r"^/(admin|api|static|media)/|^/accounts/logout/")
CRAWL_LIMIT = 150  # pages per role: far more kinds of page than the application has, a stop against a loop

LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]'))
  .filter(a => !a.hasAttribute('download'))
  .map(a => a.href)"""


def page_kind(url: str) -> tuple[str, tuple[str, ...]] | None:
    """(URL name, query keys) of a same-site path; None for what the crawl leaves alone."""
    from django.urls import Resolver404, resolve

    parts = urlsplit(url)
    if NOT_CRAWLED.search(parts.path):
        return None
    try:
        match = resolve(parts.path)
    except Resolver404:
        return None
    name = match.view_name
    if any(word in name for word in ("export", "download", "json", "gold_export")) or "." in parts.path.rsplit("/", 1)[-1]:
        return None
    return name, tuple(sorted(parse_qs(parts.query)))


def crawl_links(page: Any, base: str) -> list[str]:
    """The same-origin links of the page as site paths (with their query), without fragments."""
    found = []
    for href in page.evaluate(LINKS_JS):
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != base:
            continue
        found.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found
