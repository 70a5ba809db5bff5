"""compose.yaml cannot be run here (no Docker): it is checked as data — valid YAML, the three services, and the
same web and worker commands as the Makefile's `serve` recipe, so the two documented deployments agree."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent


def makefile_variable(name: str) -> list[str]:
    match = re.search(rf"^{name}\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert match, f"Makefile defines no {name}"
    return shlex.split(match.group(1))


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_has_the_database_the_web_processes_and_the_worker() -> None:
    services = compose()["services"]
    assert {"db", "web", "worker", "migrate"} <= set(services)
    assert services["db"]["image"].startswith("postgres:")
    for name in ("web", "worker", "migrate"):
        assert services[name]["build"] == "."
        assert services[name]["environment"]["DJANGO_SETTINGS_MODULE"] == "config.settings.prod"
        assert services[name]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])


def test_compose_runs_the_same_commands_as_make_serve() -> None:
    services = compose()["services"]
    assert services["web"]["command"] == makefile_variable("SERVE_WEB")
    assert services["worker"]["command"] == makefile_variable("SERVE_WORKER")
    makefile = (ROOT / "Makefile").read_text()
    for step in ("migrate --noinput", "createcachetable"):  # what `serve-prepare` does before starting them
        assert step in makefile and step in services["migrate"]["command"][-1]


def test_the_image_collects_static_files_and_starts_the_web_command() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "collectstatic --noinput" in dockerfile
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE)
    assert cmd and yaml.safe_load(cmd.group(1)) == makefile_variable("SERVE_WEB")


def test_gunicorn_config_reads_its_sizes_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import runpy

    path = str(ROOT / "config" / "gunicorn.conf.py")
    monkeypatch.setenv("GUNICORN_THREADS", "1")
    monkeypatch.setenv("WEB_CONCURRENCY", "7")
    conf = runpy.run_path(path)
    assert (conf["workers"], conf["threads"], conf["worker_class"]) == (7, 1, "sync")
    monkeypatch.delenv("WEB_CONCURRENCY")
    monkeypatch.setenv("GUNICORN_THREADS", "4")
    conf = runpy.run_path(path)
    assert conf["workers"] == conf["cores"] + 1 and conf["worker_class"] == "gthread"
    assert conf["preload_app"] is True and conf["timeout"] == 30


def test_the_worker_is_supervised_wherever_it_runs() -> None:
    """Compose restarts the worker and checks its heartbeat; `make serve` runs it under the same supervisor as
    `make run` (config/supervise.py), with the same two commands."""
    worker = compose()["services"]["worker"]
    assert worker["restart"] == "unless-stopped"
    assert worker["healthcheck"]["test"] == ["CMD", "python", "manage.py", "worker_health"]
    recipe = re.search(r"^serve: serve-prepare\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert recipe, "the Makefile has no serve recipe"
    assert 'manage.py run_production --web "$(SERVE_WEB)" --worker "$(SERVE_WORKER)"' in recipe.group(1)


def test_compose_sends_report_downloads_through_nginx_from_a_shared_volume() -> None:
    services = compose()["services"]
    web, proxy = services["web"], services["proxy"]
    assert web["environment"]["FAITHBENCH_DOWNLOADS_OFFLOAD"] == "x-accel-redirect"
    root = web["environment"]["FAITHBENCH_DOWNLOADS_ROOT"]
    assert f"downloads:{root}" in web["volumes"] and "ports" not in web  # only nginx is published
    assert f"downloads:{proxy['environment']['FAITHBENCH_DOWNLOADS_ROOT']}:ro" in proxy["volumes"]
    assert proxy["environment"]["FAITHBENCH_UPSTREAM"] == "web:8000" and proxy["ports"] == ["8000:8000"]
    assert proxy["environment"]["FAITHBENCH_DOWNLOADS_UPSTREAM"] == "web:8000"  # one pool (benchmarks/README.md)
    template = "config/nginx/faithbench.conf.template"
    assert any(v.startswith(f"./{template}:/etc/nginx/templates/") for v in proxy["volumes"])
    text = (ROOT / template).read_text()
    names = set(re.findall(r"\$\{([A-Z_]+)\}", text))
    assert names == set(proxy["environment"]), "every ${NAME} of the template is set, and nothing else"
    from django.conf import settings

    # nginx's internal location is the prefix Django puts in X-Accel-Redirect
    assert f"location {settings.DOWNLOADS_ACCEL_PREFIX} {{\n        internal;" in text
