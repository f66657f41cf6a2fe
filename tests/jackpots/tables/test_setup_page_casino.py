"""The casino part of the setup page (/setup/, bingo.venuewide.setup_casino) as its forms post it, in
Spanish: an
AN10 carrusel (all or some of the tables, CJ-AN10-04) created over one table, a second added and taken out
again; a table closed only with a reason; each refusal shown on the page with its status and nothing
written."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from halls.models import Proposal
from jackpots.models import Pool, PoolMember
from jackpots.rulepacks import PACKS
from jackpots.tables.models import CasinoTable, TableState
from tests.four_eyes_support import approve_proposal
from tests.jackpots.tables.conftest import Casino, make_table, nothing_written

pytestmark = pytest.mark.django_db

PACK = "AN10_PSD_CARRUSEL"


def _page(house: Casino) -> Client:
    client = Client()
    client.force_login(house.operator)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    return client


def _refused(answer: Any, status: int, code: str, words: str) -> None:
    assert answer.status_code == status, answer.content.decode()[:2000]
    page = answer.content.decode()
    assert f'data-code="{code}"' in page and words in page, page[:4000]


def test_a_carrusel_is_created_and_its_tables_added_and_taken_out_on_the_page() -> None:
    house = Casino("AN10")
    one, two = (make_table(house.venue, house.operator, PACK) for _ in range(2))
    page = _page(house)
    empty = page.get("/setup/").content.decode()  # the boxes pre-filled in Spanish, as a person types them
    assert 'name="carousel_bet" value="1,00"' in empty and 'name="seed" value="5000,00"' in empty
    form = {
        "action": "carrusel_create",
        "section": "carrusels",
        "venue": house.venue.pk,
        "name": "Carrusel Póquer",
        "code": "CARR-AN",
        "rule_pack": PACK,
        "authorisation_ref": "AUT-7",
        "carousel_bet": "1,00",
        "seed": "5000",
        "contribution_percent": "70",
        "tables": [one.pk],
    }
    with nothing_written():
        low = page.post("/setup/", {**form, "seed": "4999"})
        _refused(low, 400, "seed_below_minimum", "por debajo del mínimo")
        assert 'value="CARR-AN"' in low.content.decode()  # the form comes back as filled
        fine = page.post("/setup/", {**form, "contribution_percent": "70,12345"})  # a rate of 7 decimals
        _refused(fine, 400, "bad_percent", "debe ser un porcentaje de 0 a 100 con 4 decimales como mucho")
        _refused(
            page.post("/setup/", {**form, "contribution_percent": "101"}), 400, "bad_percent", "porcentaje"
        )
    assert page.post("/setup/", form).status_code == 302
    pool = Pool.objects.get(code="CARR-AN")
    assert pool.carousel_bet is not None and str(pool.carousel_bet) == "1.00"
    assert pool.levels.get().contribution_rate == Decimal("0.70")  # 70 % (halls.money.rate)
    shown = page.get("/setup/").content.decode()
    assert 'data-carrusel="CARR-AN"' in shown and "5.000,00\u00a0€" in shown  # the |money filter
    row = shown[shown.index(f'data-table="{one.number}"') :].split("</tr>")[0]
    cells = row.split("<td>")
    assert cells[3].startswith(f"{PACKS[PACK].title}</td>"), cells  # the rule pack by its title, no code

    # Four eyes: the page proposes; the table joins (and leaves) once a second operator approves.
    add = {"action": "carrusel_add", "section": "carrusels", "pool": pool.pk, "tables": [two.pk]}
    assert page.post("/setup/", add).status_code == 302
    assert CasinoTable.objects.get(pk=two.pk).pool is None
    waiting = Proposal.objects.get(kind="table.form_carrusel", status="proposed")
    assert f'data-proposal="{waiting.pk}"' in page.get("/setup/").content.decode()
    approve_proposal(waiting)
    assert CasinoTable.objects.get(pk=two.pk).pool == pool
    remove = {"action": "carrusel_remove", "section": "carrusels", "table": two.pk}
    assert page.post("/setup/", remove).status_code == 302
    assert CasinoTable.objects.get(pk=two.pk).pool == pool
    approve_proposal(Proposal.objects.get(kind="table.leave_pool", status="proposed"))
    assert CasinoTable.objects.get(pk=two.pk).pool is None
    assert not PoolMember.objects.filter(pool=pool, source_id=str(two.pk), removed_at__isnull=True).exists()

    close = {"action": "table_state", "section": "tables", "table": one.pk, "state": "closed"}
    other = Casino("AN10")
    foreign = make_table(other.venue, other.operator, PACK)
    with nothing_written():
        _refused(page.post("/setup/", close), 400, "reason_required", "Indique por qué se cierra la mesa")
        _refused(page.post("/setup/", {**close, "table": foreign.pk}), 404, "unknown", "No hay mesa")
    assert page.post("/setup/", {**close, "reason": "Sin crupier"}).status_code == 302
    assert CasinoTable.objects.get(pk=one.pk).state == TableState.CLOSED
    shown = page.get("/setup/").content.decode()
    assert f'data-table="{one.number}" data-state="closed"' in shown and "Cerrada temporalmente" in shown
