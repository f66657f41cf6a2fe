"""The prize programs in the admin: read-only lists, and the "Simulate before activation" action, whose
intermediate page takes a sales profile and shows the simulator's report with its plot, writing nothing."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET  # parses only the SVG this project renders
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from bingo.traditional.models import (
    GamePick,
    GameProgram,
    PrizeProgram,
    PrizeProgramVersion,
    RoomBolsa,
    ScheduledNotice,
)
from bingo.traditional.services import programs
from halls.models import AuditEntry, Role, Room
from jackpots.models import Pool
from tests.conftest import make_user

AUTH = "ML-DGJ-2025/017"
PRIMA = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}
CHANGELIST = "/admin/bingo/prizeprogram/"
FORM = {
    "games_per_day": "20",
    "cards_per_game": "100",
    "spread": "30",
    "price": "1.00",
    "days": "30",
    "seed": "3",
}


def rows() -> dict[str, int]:
    tables = [PrizeProgram, PrizeProgramVersion, RoomBolsa, GameProgram, GamePick, Pool, AuditEntry]
    return {m.__name__: m._default_manager.count() for m in tables}


@pytest.fixture
def admin_client(room: Room) -> Client:
    user = make_user("hall-admin", room.venue, Role.OPERATOR)
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def prima(room: Room, operator: User) -> PrizeProgram:
    return programs.activate_program(
        room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30", actor=operator
    )


def run_action(client: Client, program: PrizeProgram, **data: Any) -> Any:
    return client.post(
        CHANGELIST, {"action": "simulate_before_activation", "_selected_action": [program.pk], **data}
    )


def test_the_program_lists_are_read_only(admin_client, prima):
    page = admin_client.get(CHANGELIST)
    assert page.status_code == 200
    text = page.content.decode()
    assert "PRIMA" in text and "Simulate before activation" in text
    assert admin_client.get(f"{CHANGELIST}add/").status_code == 403
    detail = admin_client.get(f"{CHANGELIST}{prima.pk}/change/")
    assert detail.status_code == 200
    assert "ML-DGJ-2025/017" in detail.content.decode()  # the version inline
    for model in (GameProgram, GamePick, RoomBolsa, ScheduledNotice):
        assert admin_client.get(f"/admin/bingo/{model._meta.model_name}/").status_code == 200


def test_the_action_asks_for_a_sales_profile_then_shows_the_report_and_plot(admin_client, prima):
    before = rows()
    form = run_action(admin_client, prima)
    assert form.status_code == 200
    text = form.content.decode()
    assert "Simulate Prima 30 before activation" in text
    assert 'name="games_per_day"' in text and 'name="seed"' in text
    # The parameters of the version in force, to try as they are or changed.
    assert json.loads(form.context["form"].initial["params"]) == PRIMA

    shown = run_action(admin_client, prima, simulate="1", params=json.dumps(PRIMA), **FORM)
    assert shown.status_code == 200
    result = shown.context["result"]
    report = result["report"]
    assert (report["days"], report["games"], report["seed"]) == (30, 600, 3)
    assert report["balanced"] is True and report["hits"] > 0
    text = shown.content.decode()
    assert 'id="simulate-plot"><svg' in text.replace("\n", "")
    assert f'id="simulate-hits">{report["hits"]} (' in text
    assert "Simulation of BA-1 Prima" in text
    assert rows() == before  # a simulation writes nothing


def test_changed_parameters_are_simulated_and_bad_ones_named(admin_client, prima):
    bigger = run_action(
        admin_client, prima, simulate="1", params=json.dumps({**PRIMA, "amount": 100.0}), **FORM
    )
    assert bigger.status_code == 200
    awards = bigger.context["result"]["report"]["awards"]
    assert awards and all(a["prize"] == "100.0" for a in awards)

    bad = run_action(admin_client, prima, simulate="1", params=json.dumps({**PRIMA, "amount": "35"}), **FORM)
    assert bad.status_code == 200 and bad.context["result"] is None
    assert "€35.00 is not a Prima level" in bad.content.decode()

    not_json = run_action(admin_client, prima, simulate="1", params="{amount: 30", **FORM)
    assert not_json.context["result"] is None
    assert "Not JSON" in not_json.content.decode()

    too_long = run_action(
        admin_client, prima, simulate="1", params=json.dumps(PRIMA), **{**FORM, "days": "3650"}
    )
    assert "too many for one page" in too_long.content.decode()


def test_the_simulation_page_in_spanish_says_refusals_and_the_plot_in_spanish(admin_client, prima):
    """A Spanish operator reads the rules' refusal and the plot's axis in Spanish, amounts as "1.234,56 €"."""
    spanish = {"HTTP_ACCEPT_LANGUAGE": "es"}
    bad = admin_client.post(
        CHANGELIST,
        {
            "action": "simulate_before_activation",
            "_selected_action": [prima.pk],
            "simulate": "1",
            "params": json.dumps({**PRIMA, "amount": "35"}),
            **FORM,
        },
        **spanish,
    )
    text = bad.content.decode()
    assert "el importe de 35,00 € no es un nivel de la Prima (30,00 €, 50,00 €, 100,00 €" in text
    assert "is not a Prima level" not in text and "€35.00" not in text

    shown = admin_client.post(
        CHANGELIST,
        {
            "action": "simulate_before_activation",
            "_selected_action": [prima.pk],
            "simulate": "1",
            "params": json.dumps(PRIMA),
            **FORM,
        },
        **spanish,
    )
    root = ET.fromstring(shown.context["result"]["svg"])  # noqa: S314 - the SVG this project renders
    texts = [e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}text")]
    axis = [
        e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}text") if e.get("text-anchor") == "end"
    ]
    assert axis[0] == "0,00 €" and len(axis) > 2
    assert all(re.fullmatch(r"\d{1,3}(\.\d{3})*,\d\d €", t) for t in axis), axis
    assert "Días" in texts and "Bote (€)" in texts
    assert any(t.startswith("Simulación de BA-1") for t in texts)
    assert not [t for t in texts if t.startswith("€") or t in ("Days", "paid", "award")]


def test_one_program_at_a_time_and_only_for_its_operator(admin_client, prima, room, operator):
    other = programs.activate_program(
        room=room,
        code="ACUM",
        program_type="BA-3",
        params={"funding_percent": "2", "authorisation_ref": AUTH},
        actor=operator,
    )
    answer = admin_client.post(
        CHANGELIST,
        {"action": "simulate_before_activation", "_selected_action": [prima.pk, other.pk]},
        follow=True,
    )
    assert "Choose one program to simulate." in answer.content.decode()

    # Staff who may view the list but are not the venue's operator get no simulation.
    clerk = make_user("clerk", room.venue, Role.CASHIER)
    clerk.is_staff = True
    clerk.save()
    clerk.user_permissions.add(Permission.objects.get(codename="view_prizeprogram"))
    client = Client()
    client.force_login(clerk)
    answer = client.post(
        CHANGELIST, {"action": "simulate_before_activation", "_selected_action": [prima.pk]}, follow=True
    )
    assert "This needs the operator role in this venue." in answer.content.decode()
    assert "result" not in (answer.context or {})
