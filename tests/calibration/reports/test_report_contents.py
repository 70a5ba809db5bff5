"""The cycle report page: a table of contents whose every link lands on a section, forest plots in a scroll box
that keeps them full size on a phone, and groups named for people."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.calibration.reports.test_report_views import compute, scored_world


@pytest.mark.django_db
def test_the_report_has_contents_and_scrollable_named_forest_plots(client, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    world, _run = scored_world()
    client.force_login(world.admin)
    compute(client, world.cycle, n_resamples=20)
    html = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    contents = re.search(r'<nav class="card toc"[^>]*data-testid="report-contents">(.*?)</nav>', html, re.S)
    assert contents, "no table of contents"
    targets = re.findall(r'href="#([\w-]+)"', contents.group(1))
    assert len(targets) >= 9
    ids = set(re.findall(r'\sid="([\w-]+)"', html))
    assert [t for t in targets if t not in ids] == [], "a contents link leads nowhere"
    # Each forest plot sits in a focusable, named region that scrolls sideways; the plot keeps 870 px there.
    plots = re.findall(r'<div class="plot-scroll" tabindex="0" role="region" aria-label="[^"]+">\s*<svg', html)
    assert len(plots) == 2
    assert re.search(r"@media \(max-width: 760px\) \{\s*\.plot-scroll \{ overflow-x: auto; \}\s*"
                     r"\.plot-scroll svg \{ width: 870px; max-width: none;", html)
    # Groups read as names, in the table and in the plots: no raw keys.
    assert "Dimension: Doctrinal Precision" in html and "Tradition: Catholic" in html
    assert not re.search(r">(sub_dimension|dimension|tradition): ", html)
