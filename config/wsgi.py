"""WSGI entry point. Importing it also loads the URLconf (every view module, DRF, allauth, drf-spectacular),
so a gunicorn worker — or the master, with `preload_app` — pays that before its first request, not during it."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")
application = get_wsgi_application()


def _warm_up() -> None:
    from django.db import connections
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 — imports the URLconf and every view module it names
    connections.close_all()  # nothing above should connect; a preloading master must not hand one to forks


_warm_up()
