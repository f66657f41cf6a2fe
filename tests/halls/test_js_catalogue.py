"""The JavaScript side's language: the djangojs catalogues (complete, compiled, in step with the .js files)
and the catalogue each page loads (the request's language on staff pages, the venue's on public screens)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from halls.models import Room, Screen

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
LANGUAGES = ("es", "en")
JS_APPS = ("bingo", "halls", "jackpots", "machines")  # every app with static .js (jackpots/tables inside)


def catalogue(language: str, suffix: str = "po") -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"djangojs.{suffix}"


def msgfmt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["msgfmt", *args], capture_output=True, text=True, check=True)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_msgid_is_translated_and_none_is_fuzzy(language: str) -> None:
    stats = msgfmt("--check", "--statistics", "-o", "/dev/null", str(catalogue(language))).stderr
    assert "translated message" in stats
    assert "fuzzy" not in stats and "untranslated" not in stats, stats
    assert "#, fuzzy" not in catalogue(language).read_text(encoding="utf-8")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_committed_mo_is_compiled_from_the_po(language: str, tmp_path: Path) -> None:
    fresh = tmp_path / "djangojs.mo"
    msgfmt("-o", str(fresh), str(catalogue(language)))
    assert fresh.read_bytes() == catalogue(language, "mo").read_bytes(), "run msgfmt (make messages) again"


def test_makemessages_finds_every_msgid_of_the_js_in_the_catalogue(tmp_path: Path, monkeypatch) -> None:
    """makemessages over a copy of the .js files and the catalogue: it must find nothing new, nothing gone."""
    for app in JS_APPS:
        for script in (ROOT / app).rglob("static/**/*.js"):
            target = tmp_path / script.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(script, target)
    shutil.copytree(LOCALE / "es", tmp_path / "locale" / "es")
    monkeypatch.chdir(tmp_path)
    with override_settings(LOCALE_PATHS=[tmp_path / "locale"]):
        call_command("makemessages", domain="djangojs", locale=["es"], no_obsolete=True, verbosity=0)
    extracted = tmp_path / "locale" / "es" / "LC_MESSAGES" / "djangojs.po"
    # msgcmp DEF REF: every msgid of REF is in DEF (and, both ways, the two hold the same texts).
    for defined, reference in ((catalogue("es"), extracted), (extracted, catalogue("es"))):
        result = subprocess.run(
            ["msgcmp", "--use-untranslated", "--use-fuzzy", str(defined), str(reference)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr


def test_the_catalogue_of_each_language_says_which_it_is(client: Client) -> None:
    spanish = client.get("/jsi18n/es/")
    assert spanish.status_code == 200
    text = spanish.content.decode()
    assert '"LANGUAGE_CODE": "es"' in text
    assert '"Bola %(ordinal)s de 90"' in text
    assert "max-age=86400" in spanish["Cache-Control"]
    english = client.get("/jsi18n/en/").content.decode()
    assert '"LANGUAGE_CODE": "en"' in english
    assert client.get("/jsi18n/fr/").status_code == 404


def test_a_screen_loads_its_venues_catalogue_whatever_the_browser_says(
    client: Client, screen: Screen
) -> None:
    page = client.get(f"/screens/{screen.token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'src="/jsi18n/es/?v=' in page
    assert page.index("/jsi18n/es/") < page.index("halls/format.js") < page.index("halls/stream.js")


def test_a_staff_page_loads_the_catalogue_of_the_requests_language(
    client: Client, room: Room, caller: User
) -> None:
    client.force_login(caller)
    path = f"/console/rooms/{room.pk}/"
    assert 'src="/jsi18n/es/?v=' in client.get(path, HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()
    client.cookies["django_language"] = "en"
    page = client.get(path, HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()
    assert 'src="/jsi18n/en/?v=' in page
    assert page.index("halls/format.js") < page.index("halls/api.js") < page.index("bingo/console.js")
