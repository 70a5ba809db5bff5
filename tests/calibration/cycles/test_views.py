"""Admin pages of calibration: draw preview → commit, cycle page, panels, progress with medians."""
from __future__ import annotations

import re
import statistics

import pytest
from django.urls import reverse

from annotations.models import Annotation, Assignment, CalibrationCycle
from annotations.services import AnnotationInput, annotation_submit
from evaluations.models import RubricSubDimension
from tests.annotations.factories import MODEL_NAME_MARKER, world_build

pytestmark = pytest.mark.django_db


def draw_data(**extra: str) -> dict[str, str]:
    return {"name": "Cycle two", "seed": "31337", "min_per_dimension": "50", "refresh_fraction": "0.25",
            "edge_fraction": "0.10", **extra}


def test_draw_preview_shows_the_stratification_table_and_stores_nothing(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    response = client.post(reverse("calibration:draw"), draw_data(action="preview"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Stratification: dimension × difficulty × tradition × model" in html
    assert MODEL_NAME_MARKER in html  # admins see the models in the table
    assert "fewer than the minimum of 50 per dimension" in html and "BELOW" in html
    assert 'name="fingerprint"' in html and "Commit" in html
    assert CalibrationCycle.objects.count() == 1  # only the world's cycle


def test_commit_creates_the_cycle_and_its_assignments(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    preview = client.post(reverse("calibration:draw"), draw_data(action="preview", previous=str(world.cycle.pk)))
    fingerprint = preview.context["fingerprint"]
    response = client.post(reverse("calibration:draw"),
                           draw_data(action="commit", fingerprint=fingerprint, previous=str(world.cycle.pk),
                                     neutral_panel=str(world.catholic.pk)))
    cycle = CalibrationCycle.objects.get(name="Cycle two")
    assert response.status_code == 302 and response["Location"] == reverse("calibration:cycle", args=[cycle.pk])
    assert cycle.seed == 31337 and cycle.previous == world.cycle
    assert Assignment.objects.filter(cycle=cycle).exists()
    page = client.get(response["Location"])
    assert page.status_code == 200 and b"31337" in page.content


def test_commit_with_a_stale_fingerprint_is_refused(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, _ = admin_client_world
    response = client.post(reverse("calibration:draw"), draw_data(action="commit", fingerprint="0000000000000000"))
    assert response.status_code == 200
    assert b"changed since the preview" in response.content
    assert not CalibrationCycle.objects.filter(name="Cycle two").exists()


def test_panels_page_warns_about_small_panels(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    world.catholic.members.remove(world.other_expert, *world.catholic.members.exclude(pk=world.expert.pk))
    html = client.get(reverse("calibration:panels")).content.decode()
    assert "Catholic panel has 1 expert(s), below the minimum of 3" in html
    assert "Reformed has no panel" in html
    admin_page = client.get(reverse("admin:annotations_panel_changelist")).content.decode()
    assert "below the minimum of 3" in admin_page


def test_progress_page_counts_and_medians(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    spent: dict[str, list[int]] = {}
    for seconds, assignment in zip((30, 90, 60), world.assignments(world.expert)[:3], strict=True):
        keys = list(RubricSubDimension.objects.filter(
            dimension__rubric=world.cycle.rubric, dimension__key=assignment.item.response.test_case.dimension,
        ).values_list("key", flat=True))
        annotation_submit(assignment=assignment, actor=world.expert, data=AnnotationInput(scores=dict.fromkeys(keys, 2)))
        Annotation.objects.filter(assignment=assignment).update(seconds_spent=seconds)
        spent.setdefault(assignment.panel.name, []).append(seconds)
    response = client.get(reverse("calibration:progress"), {"cycle": world.cycle.pk})
    assert response.status_code == 200
    for entry in response.context["panels"]:
        alice = next((row for row in entry.experts if "alice@faithbench.test" in row.label), None)
        if alice is None:
            continue
        mine = spent.get(entry.panel.label, [])
        assert alice.done == len(mine)
        assert alice.total == Assignment.objects.filter(expert=world.expert, panel__name=entry.panel.label).count()
        assert alice.median_seconds == (statistics.median(mine) if mine else None)
        assert entry.panel.done == len(mine)
    assert "Median time per item" in response.content.decode()


def test_progress_medians_leave_out_items_without_a_recorded_duration(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    mine = [a for a in world.assignments(world.expert) if a.panel_id == world.catholic.pk][:2]
    for assignment in mine:
        keys = list(RubricSubDimension.objects.filter(
            dimension__rubric=world.cycle.rubric, dimension__key=assignment.item.response.test_case.dimension,
        ).values_list("key", flat=True))
        annotation_submit(assignment=assignment, actor=world.expert, data=AnnotationInput(scores=dict.fromkeys(keys, 2)))
    # Submitted without any heartbeat: 0 s recorded, which is unknown, not instant.
    assert set(Annotation.objects.filter(assignment__in=mine).values_list("seconds_spent", flat=True)) == {0}
    response = client.get(reverse("calibration:progress"), {"cycle": world.cycle.pk})
    catholic = next(e for e in response.context["panels"] if e.panel.label == world.catholic.name)
    alice = next(row for row in catholic.experts if "alice@faithbench.test" in row.label)
    assert (alice.done, alice.median_seconds, catholic.panel.median_seconds) == (len(mine), None, None)
    html = response.content.decode()
    assert "median — per item" in html and "0.0 s" not in html and ">0 s<" not in html
    Annotation.objects.filter(assignment=mine[0]).update(seconds_spent=75)  # one recorded duration
    response = client.get(reverse("calibration:progress"), {"cycle": world.cycle.pk})
    catholic = next(e for e in response.context["panels"] if e.panel.label == world.catholic.name)
    assert catholic.panel.median_seconds == 75.0
    assert "median 75 s per item" in response.content.decode()


def test_the_preview_keeps_the_entries_as_they_were_typed(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, _world = admin_client_world
    html = client.post(reverse("calibration:draw"), draw_data(action="preview")).content.decode()
    seed = draw_data(action="preview")["seed"]
    assert f'value="{seed}"' in html
    assert "[&#x27;" not in html and "['" not in html  # no list repr of a value in any input


@pytest.fixture
def admin_client_world(client):  # type: ignore[no-untyped-def]
    world = world_build()
    client.force_login(world.admin)
    return client, world


def test_an_invalid_draw_shows_the_errors_next_to_their_fields_and_stores_nothing(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, world = admin_client_world
    response = client.post(reverse("calibration:draw"),
                           draw_data(action="preview", seed="-1", refresh_fraction="1.5", name=world.cycle.name))
    assert response.status_code == 422
    html = response.content.decode()
    for field, message in (("seed", "Ensure this value is greater than or equal to 0."),
                           ("refresh_fraction", "Ensure this value is less than or equal to 1."),
                           ("name", "A cycle with this name exists.")):
        assert re.search(rf'<ul class="errorlist" id="id_{field}_error"><li>{re.escape(message)}</li></ul>\s*'
                         rf'<input[^>]* name="{field}"', html), field
    assert "Stratification" not in html  # no preview was computed
    assert CalibrationCycle.objects.count() == 1


def test_an_unknown_action_is_refused_by_the_form(admin_client_world) -> None:  # type: ignore[no-untyped-def]
    client, _ = admin_client_world
    response = client.post(reverse("calibration:draw"), draw_data(action="delete"))
    assert response.status_code == 422 and "Select a valid choice. delete is not one of the available choices." in \
        response.content.decode()
    assert not CalibrationCycle.objects.filter(name="Cycle two").exists()


def test_overview_lists_the_cycles_a_page_at_a_time(admin_client_world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from calibration.cycles import views
    from calibration.cycles.sampling import DrawParams
    from calibration.cycles.services import cycle_commit

    client, world = admin_client_world
    for seed in (11, 12):
        cycle_commit(name=f"Cycle seed {seed}", params=DrawParams(seed=seed, min_per_dimension=2))
    monkeypatch.setattr(views, "CYCLES_PAGE_SIZE", 2)
    first = client.get(reverse("calibration:index"))
    second = client.get(reverse("calibration:index"), {"page": "2"})
    names = [c.name for c in first.context["cycles"]] + [c.name for c in second.context["cycles"]]
    assert names == ["Cycle seed 12", "Cycle seed 11", world.cycle.name]  # newest first, each once
    assert "Page 1 of 2" in first.content.decode() and "?page=2" in first.content.decode()
