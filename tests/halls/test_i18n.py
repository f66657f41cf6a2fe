"""Languages: the catalogues are whole and compiled, the staff pages speak Spanish unless asked for English,
a public screen speaks its venue's language, and an API refusal keeps its code in either language."""

from __future__ import annotations

import gettext
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client

from halls.models import Screen, Venue
from tests.conftest import make_user

ROOT = Path(django_settings.BASE_DIR)
LOCALE = ROOT / "locale"
# What `make messages` leaves out; everything else (every app, the settings, the catalogues) is copied.
NOT_SOURCES = (".*", "__pycache__", "*.mo", "tests", "bench", "var", "deploy", "node_modules")


def read_po(path: Path) -> dict[str, Any]:
    """msgid -> msgstr (a tuple of forms for a plural; None when the entry is fuzzy), header left out. A
    msgid with a context (pgettext) is keyed as gettext keys it in the compiled file: context, EOT, msgid."""
    entries: dict[str, Any] = {}
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        fuzzy = any(line.startswith("#,") and "fuzzy" in line for line in block.splitlines())
        parts: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith(("msgctxt", "msgid", "msgstr")):
                key, _, rest = line.partition(" ")
                parts[key] = json.loads(rest)
            elif line.startswith('"') and key:
                parts[key] += json.loads(line)
        if not parts.get("msgid"):
            continue
        if "msgctxt" in parts:
            parts["msgid"] = f"{parts['msgctxt']}\x04{parts['msgid']}"
        if "msgid_plural" in parts:
            forms = tuple(parts[k] for k in sorted(parts) if k.startswith("msgstr["))
            entries[parts["msgid"]] = None if fuzzy else forms
        else:
            entries[parts["msgid"]] = None if fuzzy else parts.get("msgstr", "")
    return entries


def test_every_spanish_msgid_is_translated() -> None:
    entries = read_po(LOCALE / "es" / "LC_MESSAGES" / "django.po")
    assert entries
    untranslated = [
        msgid
        for msgid, msgstr in entries.items()
        if msgstr is None or (all(msgstr) if isinstance(msgstr, tuple) else msgstr) in ("", False)
    ]
    assert untranslated == []


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_compiled_catalogues_match_their_sources(language: str) -> None:
    folder = LOCALE / language / "LC_MESSAGES"
    with (folder / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    for msgid, msgstr in read_po(folder / "django.po").items():
        if isinstance(msgstr, tuple):
            if any(msgstr):
                assert compiled.ngettext(msgid, msgid, 1) == msgstr[0], msgid
        elif msgstr:
            # `%%` in a template's msgid stays as written in both files.
            assert compiled.gettext(msgid) == msgstr, f"{language}: {msgid!r} is stale: run make messages"


def test_makemessages_finds_no_text_outside_the_catalogue(tmp_path: Path) -> None:
    """A new text marked for translation and not in the catalogue fails here (run `make messages`)."""
    tmp_path = tmp_path / "hall"
    shutil.copytree(ROOT, tmp_path, ignore=shutil.ignore_patterns(*NOT_SOURCES), symlinks=True)
    run = subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "es", "--no-location", "--no-obsolete"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    found = set(read_po(tmp_path / "locale" / "es" / "LC_MESSAGES" / "django.po"))
    committed = set(read_po(LOCALE / "es" / "LC_MESSAGES" / "django.po"))
    assert sorted(found - committed) == []


@pytest.fixture
def home_client(venue: Venue) -> Client:
    client = Client()
    client.force_login(make_user("cashier-es", venue, "cashier"))
    return client


def test_staff_pages_speak_spanish_by_default_english_when_asked(settings: Any, home_client: Client) -> None:
    settings.LANGUAGE_CODE = "es"  # the hall's own default (the test run reads English)
    spanish = home_client.get("/").content.decode()
    assert "Inicio" in spanish and "Caja" in spanish and 'lang="es"' in spanish
    english = home_client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Home" in english and "Cashier" in english and 'lang="en"' in english


def test_the_language_switch_keeps_english_in_a_cookie(settings: Any, home_client: Client) -> None:
    settings.LANGUAGE_CODE = "es"
    answer = home_client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert answer.status_code == 302
    assert "Home" in home_client.get("/").content.decode()
    home_client.post("/i18n/setlang/", {"language": "es", "next": "/"})
    assert "Inicio" in home_client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_a_screen_speaks_its_venues_language_whatever_the_browser_asks(screen: Screen) -> None:
    url = f"/screens/{screen.token}/"
    page = Client().get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert page.headers["Content-Language"] == "es"
    assert "Últimas bolas" in page.content.decode() and 'lang="es"' in page.content.decode()
    Venue.objects.filter(pk=screen.venue_id).update(language="en")
    page = Client().get(url, HTTP_ACCEPT_LANGUAGE="es")
    assert "Last balls" in page.content.decode() and 'lang="en"' in page.content.decode()
    assert Client().get(url + "snapshot/").json()["language"] == "en"


def test_an_api_refusal_keeps_its_code_and_speaks_the_request_language(settings: Any, db: None) -> None:
    settings.LANGUAGE_CODE = "es"
    spanish = Client().get("/api/no-such-thing/").json()["error"]
    english = Client().get("/api/no-such-thing/", HTTP_ACCEPT_LANGUAGE="en").json()["error"]
    assert spanish == {"code": "not_found", "message": "No existe ese recurso."}
    assert english == {"code": "not_found", "message": "There is no such resource."}


def test_a_service_refusal_speaks_spanish_by_default_and_english_when_asked(
    settings: Any, caller: Any, room: Any
) -> None:
    from rest_framework.test import APIClient

    settings.LANGUAGE_CODE = "es"
    api = APIClient()
    api.force_authenticate(caller)
    body = {"room": room.pk, "draw_source": "manual"}
    spanish = api.post("/api/games/", body, format="json")
    english = api.post("/api/games/", body, format="json", HTTP_ACCEPT_LANGUAGE="en")
    assert spanish.status_code == english.status_code == 409
    assert spanish.json()["error"]["code"] == english.json()["error"]["code"] == "no_session"
    assert spanish.json()["error"]["message"] == (
        f"La sala {room.name} no tiene ninguna sesión abierta: abra una con sus comprobaciones primero."
    )
    assert english.json()["error"]["message"] == (
        f"Room {room.name} has no open session: open one with its checks first."
    )


def test_a_hit_on_the_screens_is_worded_in_each_venues_language() -> None:
    from django.utils import translation

    from jackpots.services.readmodels import screens

    with translation.override("es"):
        assert screens.source_label("table:3", {}) == "Mesa 3"
        assert str(screens.CATEGORY_LABELS["full_house"]) == "Full"
    with translation.override("en"):
        assert screens.source_label("table:3", {}) == "Table 3"
        assert str(screens.CATEGORY_LABELS["full_house"]) == "Full house"
