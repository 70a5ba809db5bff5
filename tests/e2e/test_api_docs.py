"""The API docs work offline: with every request to a host other than the live server aborted, Swagger UI
(drf-spectacular-sidecar's static files) renders the operations, nothing tries to reach the internet, and the
Content-Security-Policy is not violated (the `new_context` fixture fails the test on any violation)."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import ARTIFACTS

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def offline_page(new_context):  # type: ignore[no-untyped-def]
    """A page whose requests to any non-local host are aborted (and recorded)."""
    context = new_context()
    remote: list[str] = []

    def route(route):  # type: ignore[no-untyped-def]
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS or route.request.url.startswith("data:"):
            route.continue_()
        else:
            remote.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page, remote


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_api_docs_swagger_ui_renders_the_operations_offline(live_server, new_context) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client
    from playwright.sync_api import expect

    from tests.annotations.factories import person

    page, remote = offline_page(new_context)
    client = Client()
    client.force_login(person("admin"))  # the docs are for those who may use the API
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.goto(f"{live_server.url}/api/v1/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("FaithBench Calibration API")
    operations = page.locator(".opblock .opblock-summary-path")
    expect(operations.first).to_be_visible()
    assert operations.count() >= 10
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/reports/").first).to_be_visible()
    # Opening an operation shows its description and parameters, from the schema the page fetched locally.
    page.locator(".opblock-summary-path", has_text="/api/v1/reports/").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "api-docs-offline.png"))
    assert remote == [], f"the docs tried to reach the internet: {remote}"
    assert [url for url in failed if urlsplit(url).hostname in LOCAL_HOSTS] == []
    favicon = page.request.get(f"{live_server.url}/favicon.ico")
    assert favicon.status == 200 and favicon.headers["content-type"] in ("image/x-icon", "image/vnd.microsoft.icon")
