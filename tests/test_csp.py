"""Content-Security-Policy: the header is on every page, with a fresh nonce; no template has an inline script,
inline event handler, hx-on attribute or style attribute, and every <style>/<script> block carries the nonce."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from tests.annotations.factories import person

ROOT = Path(settings.BASE_DIR)
TEMPLATE_DIRS = [ROOT / "templates", *sorted(ROOT.glob("*/templates"))]
SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
STYLE = re.compile(r"<style\b([^>]*)>", re.IGNORECASE)
HANDLER = re.compile(r"""<[^>]*\s(on[a-z]+|hx-on[:\-][\w:\-]*|hx-on)\s*=""", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"""<[^>]*\sstyle\s*=""", re.IGNORECASE)
NONCE = re.compile(r"""nonce="\{\{\s*(CSP_NONCE|request\.csp_nonce)\s*\}\}\"""")


def templates() -> list[Path]:
    found = [path for folder in TEMPLATE_DIRS for path in folder.rglob("*.html")]
    assert len(found) > 40  # the walk really found the templates
    return found


def test_no_template_has_an_inline_script_or_style_without_the_nonce() -> None:
    problems = []
    for path in templates():
        text = path.read_text(encoding="utf-8")
        for match in SCRIPT.finditer(text):
            attributes = match.group(1)
            if "src=" in attributes or re.search(r'type="application/(ld\+)?json"', attributes):
                continue  # an external file, or a data block the browser never runs
            if not NONCE.search(attributes):
                problems.append(f"{path.relative_to(ROOT)}: inline <script> without the nonce")
        for match in STYLE.finditer(text):
            if not NONCE.search(match.group(1)):
                problems.append(f"{path.relative_to(ROOT)}: <style> without the nonce")
        for match in HANDLER.finditer(text):
            problems.append(f"{path.relative_to(ROOT)}: inline event handler {match.group(1)}=")
        if STYLE_ATTRIBUTE.search(text):
            problems.append(f"{path.relative_to(ROOT)}: style attribute (use a class)")
    assert problems == []


def test_the_checks_above_catch_what_they_look_for(tmp_path: Path) -> None:
    bad = '<script>alert(1)</script><select onchange="x()"><div hx-on:click="y()"><p style="color:red"><style>'
    assert SCRIPT.search(bad) and not NONCE.search(SCRIPT.search(bad).group(1))  # type: ignore[union-attr]
    assert [m.group(1) for m in HANDLER.finditer(bad)] == ["onchange", "hx-on:click"]
    assert STYLE_ATTRIBUTE.search(bad) and STYLE.search(bad)


def policy(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in (p.strip() for p in header.split(";")) if part}


@pytest.mark.django_db
def test_every_page_sends_the_policy_with_a_fresh_nonce_that_its_style_blocks_carry(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(person())
    first, second = client.get(reverse("annotations:queue")), client.get(reverse("annotations:queue"))
    assert first.status_code == second.status_code == 200
    directives = policy(first["Content-Security-Policy"])
    assert directives["default-src"] == ["'self'"] and directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"] and directives["base-uri"] == ["'self'"]
    script_nonce = [s for s in directives["script-src"] if s.startswith("'nonce-")]
    assert directives["script-src"][0] == "'self'" and len(script_nonce) == 1
    assert "'unsafe-inline'" not in directives["script-src"] + directives["style-src"]
    assert "'unsafe-eval'" not in directives["script-src"]
    nonce = script_nonce[0].removeprefix("'nonce-").removesuffix("'")
    assert f'<style nonce="{nonce}">' in first.content.decode()
    assert nonce not in second["Content-Security-Policy"]  # a new nonce per response
    sign_in = client.get(reverse("account_login"))
    assert "Content-Security-Policy" in sign_in and "'unsafe-inline'" not in sign_in["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_api_docs_load_swagger_ui_from_our_own_static_files_with_the_nonce(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(person("admin"))
    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    header = response["Content-Security-Policy"]
    directives = policy(header)
    assert "http" not in header  # no CDN or any other host: everything is 'self' (drf-spectacular-sidecar)
    assert "'unsafe-inline'" not in directives["script-src"] + directives["style-src"]
    nonce = next(s for s in directives["script-src"] if s.startswith("'nonce-")).removeprefix("'nonce-").removesuffix("'")
    body = response.content.decode()
    assert f'<script nonce="{nonce}">' in body and f'<style nonce="{nonce}">' in body
    assert 'src="/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"' in body
    assert 'href="/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css"' in body
    assert "//" not in body.replace("http://www.w3.org", "").split("<body>")[0].replace("<!--", "")  # no remote URL
    assert '"validatorUrl": null' in body  # no badge image from validator.swagger.io


@pytest.mark.django_db
def test_favicon_is_served_and_linked(client) -> None:  # type: ignore[no-untyped-def]
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon["Content-Type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file
    page = client.get(reverse("account_login")).content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    from django.contrib.staticfiles import finders

    assert finders.find("favicon.svg")  # collected with the other static files
