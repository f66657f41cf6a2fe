"""The machine floor, hand-pay and reconciliation pages: who may see what, and what the snapshots carry.

Staff of the venue (any role) watch the floor; hand-pays need the cashier role (operators hold every role);
another venue's machines are 404 (halls.access: staff cannot even learn they exist); anonymous users are
sent to the login page, and the JSON snapshots answer them with the API's error instead of HTML.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from halls.cashier.models import Till
from halls.cashier.services import shifts
from halls.models import Role, StaffRole, Venue
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from machines import protocol
from machines.models import Machine, ProgressiveHit
from machines.services import gateway, handpay, links, liveness, registry
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

D = Decimal
FLOOR = "/machines/floor/"
FLOOR_SNAPSHOT = "/machines/floor/snapshot/"
HANDPAYS = "/machines/handpays/"
HANDPAYS_SNAPSHOT = "/machines/handpays/snapshot/"


def register(
    venue: Venue, actor: Any, asset: str, *, location: str = "", denomination: str = "0.20"
) -> Machine:
    machine, _token = registry.register_machine(
        venue=venue,
        asset_number=asset,
        machine_type="C",
        modality="individual",
        manufacturer="Zitro",
        model="Link King",
        serial=f"SN-{asset}",
        denomination=D(denomination),
        paytable_id="PT-92",
        software_version="1.4.2",
        location=location,
        actor=actor,
    )
    return machine


def machine_pool(venue: Venue, actor: Any, code: str = "SLOT-1") -> Pool:
    return pools.create_pool(
        name="Gran Progresivo",
        code=code,
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-MQ-2026/01",
        rule_pack="",
        venue=venue,
        levels=[
            LevelSpec(name="Mayor", seed=D("1000.00"), contribution_rate=D("0.02")),
            LevelSpec(name="Menor", seed=D("100.00"), contribution_rate=D("0.01")),
        ],
        carousel_bet=None,
        actor=actor,
    )


def play(seq: int, bet: str = "1.00", win: str = "0.00") -> protocol.Play:
    return protocol.Play(seq=seq, game_id=f"g-{seq}", bet=D(bet), win=D(win))


@pytest.fixture(autouse=True)
def _spanish(settings: Any) -> None:
    """The floor pages are read here in Spanish, the hall's default language."""
    settings.LANGUAGE_CODE = "es"


@pytest.fixture
def floor(venue: Venue, operator: User) -> dict[str, Any]:
    """Three linked machines: one played (meters and plays today), one locked by a hit, one never seen."""
    pool = machine_pool(venue, operator)
    group = links.create_link_group(venue=venue, code="LNK-A", name="Isla A", pool=pool, actor=operator)
    played = register(venue, operator, "1001", location="Isla A · 1")
    winner = register(venue, operator, "1002", location="Isla A · 2")
    idle = register(venue, operator, "1003", location="Almacén")
    for machine in (played, winner):
        links.join_link(group=group, machine=machine, actor=operator)
    for machine in (played, winner):
        gateway.hello(machine_id=machine.pk)
    gateway.receive(
        machine_id=played.pk,
        messages=[
            play(1, "1.00", "0.00"),
            play(2, "2.00", "4.00"),
            play(3, "0.60"),
            protocol.Meters(
                seq=4,
                coin_in=D("3.60"),
                coin_out=D("4.00"),
                jackpots_paid=D("0.00"),
                credits=D("12.40"),
                games_played=3,
            ),
        ],
    )
    replies = gateway.receive(
        machine_id=winner.pk,
        messages=[play(1), protocol.Hit(seq=2, level="Menor", game_id="g-2")],
    )
    assert replies[1]["status"] == "accepted", replies
    return {"pool": pool, "group": group, "played": played, "winner": winner, "idle": idle}


def rows_by_asset(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["asset_number"]: row for row in data["machines"]}


# --- who may see the pages ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [FLOOR, HANDPAYS])
def test_anonymous_users_are_sent_to_log_in(client: Client, venue: Venue, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/accounts/login/?next={path}")


def test_anonymous_reconciliation_is_sent_to_log_in(client: Client, floor: dict[str, Any]) -> None:
    path = f"/machines/{floor['played'].pk}/reconciliation/"
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("path", [FLOOR_SNAPSHOT, HANDPAYS_SNAPSHOT])
def test_anonymous_snapshots_answer_json_not_the_login_page(client: Client, venue: Venue, path: str) -> None:
    response = client.get(f"{path}?venue={venue.pk}")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_authenticated"


def test_staff_of_another_venue_get_404_everywhere(
    client: Client, floor: dict[str, Any], venue: Venue, other_venue: Venue
) -> None:
    stranger = make_user("stranger", other_venue, Role.OPERATOR)
    client.force_login(stranger)
    for path in (FLOOR, HANDPAYS):
        assert client.get(f"{path}?venue={venue.pk}").status_code == 404
    for path in (FLOOR_SNAPSHOT, HANDPAYS_SNAPSHOT):
        response = client.get(f"{path}?venue={venue.pk}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
        assert "1001" not in response.content.decode()
    assert client.get(f"/machines/{floor['played'].pk}/reconciliation/").status_code == 404
    # Their own venue has no machine of ours.
    own = client.get(f"{FLOOR_SNAPSHOT}?venue={other_venue.pk}").json()
    assert own["venue"] == other_venue.pk and own["machines"] == []


def test_bad_venue_parameters_are_404(client: Client, operator: User, venue: Venue) -> None:
    client.force_login(operator)
    for raw in ("abc", "-1", "999999"):
        assert client.get(f"{FLOOR}?venue={raw}").status_code == 404


def test_a_user_without_any_role_is_refused(client: Client, venue: Venue) -> None:
    client.force_login(make_user("nobody"))
    assert client.get(FLOOR).status_code == 403
    assert client.get(HANDPAYS).status_code == 403


def test_every_staff_role_watches_the_floor_but_only_cashiers_see_hand_pays(
    client: Client, floor: dict[str, Any], venue: Venue, caller: User, cashier: User
) -> None:
    client.force_login(caller)
    page = client.get(FLOOR)
    assert page.status_code == 200
    body = page.content.decode()
    assert f'data-snapshot-url="/machines/floor/snapshot/?venue={venue.pk}"' in body
    assert "machines/floor.js" in body
    assert "Pagos manuales" not in body  # no link to a page the caller may not open
    assert client.get(f"{FLOOR_SNAPSHOT}?venue={venue.pk}").status_code == 200
    assert client.get(HANDPAYS).status_code == 403
    response = client.get(f"{HANDPAYS_SNAPSHOT}?venue={venue.pk}")
    assert response.status_code == 403 and response.json()["error"]["code"] == "role_required"

    client.force_login(cashier)
    assert "Pagos manuales" in client.get(FLOOR).content.decode()
    page = client.get(HANDPAYS)
    assert page.status_code == 200
    assert f'data-snapshot-url="/machines/handpays/snapshot/?venue={venue.pk}"' in page.content.decode()
    assert "csrftoken" in page.cookies  # the page posts the payment with it


def test_a_user_of_two_venues_picks_one(client: Client, venue: Venue, other_venue: Venue) -> None:
    user = make_user("both", venue, Role.OPERATOR)
    StaffRole.objects.create(user=user, venue=other_venue, role=Role.CASHIER)
    client.force_login(user)
    # By name: "Bingo Andalucía" comes before "Bingo Melilla Centro".
    first = client.get(FLOOR)
    assert first.context["venue"] == other_venue
    assert 'id="venue-select"' in first.content.decode()
    assert client.get(f"{FLOOR}?venue={venue.pk}").context["venue"] == venue


# --- what the snapshots carry ------------------------------------------------------------------------


def test_the_floor_snapshot_shows_each_machine(client: Client, floor: dict[str, Any], venue: Venue) -> None:
    client.force_login(make_user("watcher", venue, Role.CALLER))
    response = client.get(f"{FLOOR_SNAPSHOT}?venue={venue.pk}")
    assert response.status_code == 200
    assert "no-cache" in response["Cache-Control"]
    data = response.json()
    assert (data["venue"], data["currency"]) == (venue.pk, venue.currency)
    rows = rows_by_asset(data)
    assert list(rows) == ["1001", "1002", "1003"]

    played = rows["1001"]
    assert (played["machine_type"], played["denomination"], played["location"]) == ("C", "0.20", "Isla A · 1")
    assert (played["state"], played["lock_reason"], played["online"]) == ("in_service", "", True)
    assert played["plays_today"] == 3
    meters = played["meters"]
    assert (meters["coin_in"], meters["coin_out"], meters["credits"], meters["games_played"]) == (
        "3.60",
        "4.00",
        "12.40",
        3,
    )
    assert played["group"]["code"] == "LNK-A"
    assert played["pending_hits"] == 0

    winner = rows["1002"]
    assert (winner["state"], winner["lock_reason"]) == ("locked", "hand_pay")
    hit = ProgressiveHit.objects.get(machine=floor["winner"])
    assert winner["pending_hits"] == 1
    assert D(winner["pending_amount"]) == hit.amount

    idle = rows["1003"]
    assert (idle["online"], idle["group"], idle["meters"], idle["plays_today"]) == (False, None, None, 0)


def test_the_floor_snapshot_follows_the_machines(
    client: Client, floor: dict[str, Any], venue: Venue, operator: User
) -> None:
    """A machine gone silent shows offline and locked (link lost); one taken out of service shows so."""
    client.force_login(operator)
    later = timezone.now() + timedelta(seconds=30)
    changed = liveness.mark_silent_machines_offline(now=later, silence_seconds=5)
    assert floor["played"].pk in changed
    registry.set_machine_state(machine=floor["idle"], state="out_of_service", reason="", actor=operator)
    rows = rows_by_asset(client.get(f"{FLOOR_SNAPSHOT}?venue={venue.pk}").json())
    assert (rows["1001"]["online"], rows["1001"]["state"], rows["1001"]["lock_reason"]) == (
        False,
        "locked",
        "link_lost",
    )
    assert rows["1003"]["state"] == "out_of_service"


def test_the_hand_pay_snapshot_lists_pending_hits_until_paid(
    client: Client, floor: dict[str, Any], venue: Venue, cashier: User
) -> None:
    client.force_login(cashier)
    data = client.get(f"{HANDPAYS_SNAPSHOT}?venue={venue.pk}").json()
    hit = ProgressiveHit.objects.get(machine=floor["winner"])
    assert [(h["id"], h["asset_number"], h["level_name"], D(h["amount"])) for h in data["hits"]] == [
        (hit.pk, "1002", "Menor", hit.amount)
    ]
    assert hit.amount >= D("100.00")  # the seed at least: the level's whole meter
    # Paid at the cashier: by a cashier on shift whose drawer holds the prize.
    payer = make_user("floor-cashier", venue, Role.CASHIER)
    till = Till.objects.create(venue=venue, name="Caja sala de máquinas")
    shifts.open_shift(till=till, cashier=payer, float_amount=D("1000.00"), actor=payer)
    handpay.pay_hand_pay(hit=hit, actor=payer, payment_ref="caja-7")
    assert client.get(f"{HANDPAYS_SNAPSHOT}?venue={venue.pk}").json()["hits"] == []
    floor["winner"].refresh_from_db()
    assert (floor["winner"].state, floor["winner"].lock_reason) == ("in_service", "")


def test_the_reconciliation_page_shows_the_meter_intervals(
    client: Client, floor: dict[str, Any], caller: User
) -> None:
    machine = floor["played"]
    gateway.receive(
        machine_id=machine.pk,
        messages=[
            play(5, "1.00"),
            play(6, "1.00"),
            protocol.Meters(
                seq=7,
                coin_in=D("5.60"),
                coin_out=D("4.00"),
                jackpots_paid=D("0.00"),
                credits=D("10.40"),
                games_played=5,
            ),
            play(8, "0.40"),
        ],
    )
    client.force_login(caller)
    response = client.get(f"/machines/{machine.pk}/reconciliation/")
    assert response.status_code == 200
    assert [row["status"] for row in response.context["rows"]] == ["first", "ok", "open"]
    body = response.content.decode()
    assert "Máquina 1001" in body
    assert body.count('class="rc-row') == 3
    assert 'data-status="ok"' in body and "Cuadra" in body
    assert "Primera lectura" in body and "En curso" in body
