import pytest
from django.conf import settings

from config.catalogues import PSEUDO_ACCENTED, PSEUDO_LOCALES, PSEUDO_RTL, pseudo_catalogue
from tests.annotations.factories import world  # noqa: F401  (fixture)


@pytest.fixture(scope="session")
def pseudo_dir(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The pseudo-locales generated once per session from the shipped Spanish catalogue's messages."""
    from pathlib import Path

    out = tmp_path_factory.mktemp("pseudo-locale")
    source = Path(settings.LOCALE_PATHS[0]) / "es" / "LC_MESSAGES" / "django.po"
    for code in PSEUDO_LOCALES:
        pseudo_catalogue(source, out, code)
    return out


@pytest.fixture
def pseudo_settings(settings, pseudo_dir):  # type: ignore[no-untyped-def]
    """LANGUAGES and LOCALE_PATHS with the pseudo-locales added (Django's setting_changed resets its caches)."""
    settings.LOCALE_PATHS = [str(pseudo_dir), *map(str, settings.LOCALE_PATHS)]
    settings.LANGUAGES = [*settings.LANGUAGES, (PSEUDO_ACCENTED, "Pseudo (accented)"), (PSEUDO_RTL, "Pseudo (RTL)")]
    return settings
