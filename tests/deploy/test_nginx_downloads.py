"""Report downloads through real nginx, configured from compose's template, in front of the live test server:
Django checks access, nginx sends the stored bytes with Django's headers, and the files' location is internal."""
from __future__ import annotations

import hashlib
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.urls import reverse

from evidence.models import Snapshot
from evidence.services import snapshot_store
from tests.annotations.factories import world_build

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
pytestmark = [
    pytest.mark.django_db(transaction=True),
    # `make test` installs nginx with the other test tools (Makefile: test-tools)
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install -y nginx)"),
]
BUNDLE = bytes(range(256)) * 4000  # 1 MB: more than nginx's proxy buffers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _stand_in_files_pass_the_checker(monkeypatch):  # type: ignore[no-untyped-def]
    """The stored bytes here are stand-ins: the artefact checker is told they pass (serving is what is tested)."""
    monkeypatch.setattr("evidence.services.snapshot_checks", lambda **kwargs: [])


@pytest.fixture
def nginx(live_server, tmp_path, settings):  # type: ignore[no-untyped-def]
    settings.ALLOWED_HOSTS = ["*"]
    settings.DOWNLOADS_OFFLOAD = "x-accel-redirect"
    downloads = Path(tempfile.mkdtemp(prefix="fb-nginx-downloads-"))  # pytest's tmp_path is private (0700)
    downloads.chmod(0o755)  # nginx's worker may run as another user (nobody, when nginx starts as root)
    settings.DOWNLOADS_ROOT = downloads
    port = free_port()
    upstream = live_server.url.split("//", 1)[1].replace("localhost", "127.0.0.1")
    values = {"FAITHBENCH_UPSTREAM": upstream, "FAITHBENCH_DOWNLOADS_UPSTREAM": upstream,
              "FAITHBENCH_LISTEN": f"127.0.0.1:{port}", "FAITHBENCH_DOWNLOADS_ROOT": str(downloads)}
    template = (ROOT / "config" / "nginx" / "faithbench.conf.template").read_text()
    (tmp_path / "site.conf").write_text(re.sub(r"\$\{([A-Z_]+)\}", lambda m: values[m.group(1)], template))
    (tmp_path / "tmp").mkdir()
    temp = " ".join(f"{kind}_temp_path {tmp_path / 'tmp'};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                         "scgi"))
    (tmp_path / "nginx.conf").write_text(
        f"daemon off; worker_processes 1; pid {tmp_path / 'nginx.pid'}; error_log {tmp_path / 'error.log'};\n"
        f"events {{}}\nhttp {{ access_log off; {temp} include {tmp_path / 'site.conf'}; }}\n")
    process = subprocess.Popen([str(NGINX), "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")])
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/accounts/login/", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        yield base, downloads
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(downloads, ignore_errors=True)


def fetch(url: str, session: str, *, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={session}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_nginx_sends_the_stored_bytes_to_the_admin_only(nginx, client) -> None:  # type: ignore[no-untyped-def]
    base, downloads = nginx
    world = world_build()
    snapshot = Snapshot.objects.create(kind="cycle_report", subject=str(world.cycle.pk), cycle=world.cycle, version=1, seed=1, n_resamples=0,
                                             status=Snapshot.Status.RUNNING)
    snapshot_store(snapshot=snapshot, files={"json": b"{}", "csv": b"a\n", "pdf": b"%PDF", "ratings": b"r\n",
                                             "bundle": BUNDLE}, input_hash="d" * 64)
    url = base + reverse("calibration:report_export", args=[world.cycle.pk, "zip"])
    client.force_login(world.admin)
    status, headers, body = fetch(url, client.cookies["sessionid"].value)
    sha = hashlib.sha256(BUNDLE).hexdigest()
    assert status == 200 and body == BUNDLE, (status, headers, body[:500])
    assert headers["Content-Type"] == "application/zip"
    assert headers["Content-Disposition"] == f'attachment; filename="irr-report-cycle-{world.cycle.pk}-v1.zip"'
    assert headers["ETag"] == f'"{sha}"' and headers["X-Input-Hash"] == "d" * 64
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "X-Accel-Redirect" not in headers  # nginx consumes it
    assert (downloads / sha[:2] / sha).read_bytes() == BUNDLE and "Last-Modified" in headers  # sent from disk
    client.force_login(world.expert)
    status, headers, body = fetch(url, client.cookies["sessionid"].value)
    assert status == 403 and BUNDLE not in body
    # the files' location answers only nginx's internal redirects
    status, _, body = fetch(f"{base}/_protected/snapshots/{sha[:2]}/{sha}", client.cookies["sessionid"].value)
    assert status == 404 and body != BUNDLE


def test_nginx_queues_one_sessions_download_burst_while_another_session_downloads_at_once(nginx, client) -> None:  # type: ignore[no-untyped-def]
    """The template's limit_req: one session's downloads go out at 1 a second, a burst of 10 queued and sent in
    turn; past that, 429. Another session (an expert's scoring is never under this limit) is not slowed."""
    from concurrent.futures import ThreadPoolExecutor

    from django.test import Client

    base, _downloads = nginx
    world = world_build()
    snapshot = Snapshot.objects.create(kind="cycle_report", subject=str(world.cycle.pk), cycle=world.cycle, version=1, seed=1, n_resamples=0,
                                             status=Snapshot.Status.RUNNING)
    snapshot_store(snapshot=snapshot, files={"json": b"{}", "csv": b"a\n", "pdf": b"%PDF", "ratings": b"r\n",
                                             "bundle": b"zip"}, input_hash="d" * 64)
    url = base + reverse("calibration:report_export", args=[world.cycle.pk, "json"])
    client.force_login(world.admin)
    greedy = client.cookies["sessionid"].value
    other = Client()
    other.force_login(world.admin)
    calm = other.cookies["sessionid"].value
    with ThreadPoolExecutor(max_workers=14) as pool:
        # the last queued request waits ≈ 10 s in nginx by design, more on a busy machine
        pending = [pool.submit(lambda: fetch(url, greedy, timeout=60)[0]) for _ in range(14)]
        time.sleep(1.0)  # the greedy session's burst is queued in nginx now
        started = time.monotonic()
        assert fetch(url, calm)[0] == 200
        calm_seconds = time.monotonic() - started
        still_queued = sum(not f.done() for f in pending)
        statuses = [f.result() for f in pending]
    assert still_queued >= 5  # the calm download went out while the greedy burst was still waiting its turn
    assert statuses.count(429) >= 1 and set(statuses) <= {200, 429}, statuses  # 1 now + 10 queued; the rest refused
    assert statuses.count(200) >= 10
    assert calm_seconds < 2.0  # not behind the greedy session's queue (≈ 10 s long)
