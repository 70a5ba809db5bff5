"""The Delphi pages in the accented pseudo-locale (issue 35 §1): an expert's study list, study page and round-2 form
(feedback, histogram, rationales), and the lead's study page, carry no English outside the catalogue."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from config.catalogues import PSEUDO_ACCENTED
from evaluations.models import RubricDimension, RubricSubDimension, Tradition
from tests.delphi.factories import RATIONALE_MARKER, close, delphi_world_build, submit_all

from .pseudo import unmarked_strings

pytestmark = pytest.mark.django_db


def _client(user) -> Client:  # type: ignore[no-untyped-def]
    user.language = PSEUDO_ACCENTED
    user.save(update_fields=["language"])
    client = Client()
    client.force_login(user)
    return client


def test_i18n_pseudo_locale_crawl_of_the_delphi_pages(pseudo_settings):  # type: ignore[no-untyped-def]
    world = delphi_world_build()
    submit_all(world, world.round(1), [-15, -5, 5, 15, 0])
    close(world.round(1), world)
    data = [world.study.name, world.expert.display_name, "FaithBench Calibration"]
    data += [f"{RATIONALE_MARKER} shift {shift}" for shift in (-15, -5, 5, 15, 0)]  # the panel's rationales (data)
    data += list(Tradition.objects.values_list("name", flat=True))
    data += list(RubricDimension.objects.values_list("description", flat=True))
    data += list(RubricSubDimension.objects.values_list("description", flat=True))
    data = sorted({d for d in data if d}, key=len, reverse=True)
    pages = {world.expert: [reverse("delphi:index"), reverse("delphi:study", args=[world.study.pk]),
                            reverse("delphi:respond", args=[world.study.pk])],
             world.admin: [reverse("delphi:study", args=[world.study.pk])]}
    problems = {}
    for user, urls in pages.items():
        client = _client(user)
        for url in urls:
            page = client.get(url)
            assert page.status_code == 200, url
            html = page.content.decode()
            assert '<html lang="en-xa"' in html and "⟦" in html
            found = unmarked_strings(html, allow=data)
            if found:
                problems[f"{user.role} {url}"] = found
    assert problems == {}
