"""Running a network's Gran Línea / Gran Bingo (AB-05, AB-08) without a human at every game: the operator's
doors (create the prize, join / leave a speciality), rounds that open by themselves for the halls' next
games (at a contribution, and by the beat, idempotent), the meter in the screen's and the terminal's
snapshots labelled by its kind, and a result naming more than 500 winning cards counted whole."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from bingo.electronic.services.readmodels import terminal_snapshot
from bingo.network.interconnected import tasks
from bingo.network.interconnected.models import (
    EGameRound,
    KnownRound,
    NetworkPrize,
    PrizeRound,
    RoundShare,
    SpecialityMembership,
)
from bingo.network.interconnected.services import payloads, prizes, rounds
from halls import money
from halls.errors import InvalidInput
from halls.models import Role, Screen, StaffRole
from jackpots.services import reports
from tests.api_support import api_client, refused
from tests.bingo.network.interconnected.gran_support import (
    EHall,
    deliver,
    follow,
    line_at,
    make_ehall,
    make_gran,
    make_network,
    play,
    sell,
)
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def halls() -> list[EHall]:
    return [make_ehall(n) for n in (1, 2)]


@pytest.fixture
def gran_linea(halls: list[EHall]) -> NetworkPrize:
    return make_gran(make_network(halls), halls)


def _open(prize: NetworkPrize) -> list[int]:
    return list(prize.rounds.filter(state="open").order_by("number").values_list("number", flat=True))


def test_a_gran_prizes_rounds_open_by_themselves_one_for_each_next_game(halls, gran_linea) -> None:
    # The first round opened with the prize; the beat finds it fresh and opens nothing (idempotent).
    assert (gran_linea.auto_rounds, _open(gran_linea)) == (True, [1])
    assert prizes.ensure_rounds() == []
    follow()
    # A hall's game joins round 1: its contribution opens round 2 at the central, for the next games.
    play(sell(halls[0]), line_at(5))
    deliver(halls[0])
    assert _open(gran_linea) == [1, 2]
    follow()
    assert list(KnownRound.objects.order_by("number").values_list("number", flat=True)) == [1, 2]
    # The same hall's next game joins round 2 (it has played round 1); the other hall's joins round 1.
    play(sell(halls[0], "2"), line_at(6))
    play(sell(halls[1]), line_at(7))
    assert sorted(EGameRound.objects.values_list("venue_id", "round__number")) == sorted(
        [(halls[0].venue.pk, 1), (halls[0].venue.pk, 2), (halls[1].venue.pk, 1)]
    )
    # A retried delivery counts nothing twice and opens no second round for the same game.
    deliver(halls[0])
    deliver(halls[0])
    deliver(halls[1])
    assert _open(gran_linea) == [2, 3]  # round 1 decided (both halls reported); 3 is the fresh one
    assert PrizeRound.objects.get(prize=gran_linea, number=1).rule == "all_reported"
    assert prizes.ensure_rounds() == []  # a fresh round stands: nothing more
    # Past every wait with no game: the beat decides them and opens a fresh round on its own.
    later = timezone.now() + timedelta(seconds=gran_linea.wait_seconds + 1)
    decided = rounds.decide_overdue(now=later)
    assert len(decided) == 2
    [opened] = prizes.ensure_rounds(now=later)
    assert PrizeRound.objects.get(pk=opened).number == 4
    assert prizes.ensure_rounds(now=later) == []
    assert reports.balance(gran_linea.pool).holds


def test_an_interconnected_prize_still_waits_for_its_operator(halls) -> None:
    network = make_network(halls)
    prize = prizes.create_prize(
        network=network,
        code="IB9",
        name="Interconexionado",
        percent=Decimal("10"),
        max_ball=40,
        seed=Decimal("50.00"),
        wait_seconds=900,
        authorisation_ref="ML-IB-2026/9",
        halls=[h.venue for h in halls],
        actor="central-operator",
    )
    assert (prize.auto_rounds, _open(prize)) == (False, [])
    assert tasks.decide_overdue_rounds() == 0
    assert _open(prize) == []


def test_the_operators_doors_create_a_gran_prize_and_join_and_leave_a_speciality(halls) -> None:
    network = make_network(halls)
    boss = make_user("network-operator")
    for hall in halls:
        StaffRole.objects.create(user=boss, venue=hall.venue, role=Role.OPERATOR)
    client = api_client(boss)
    body = {
        "network": network.code,
        "kind": "gran_linea",
        "code": "GL7",
        "name": "Gran Línea Melilla",
        "percent": "0.50",
        "seed": "100.00",
        "wait_seconds": 600,
        "authorisation_ref": "ML-AB-2026/7",
        "halls": [h.venue.licence_number for h in halls],
    }
    refused(client.post("/api/network/prizes/", {**body, "max_ball": 40}, format="json"), 400, "bad_max_ball")
    refused(
        client.post("/api/network/prizes/", {**body, "kind": "interconnected"}, format="json"),
        400,
        "bad_max_ball",
    )
    refused(client.post("/api/network/prizes/", {**body, "kind": "gran"}, format="json"), 400, "invalid")
    assert not NetworkPrize.objects.exists()
    created = client.post("/api/network/prizes/", body, format="json")
    assert created.status_code == 201, created.content
    shown = created.json()
    assert (shown["kind"], shown["auto_rounds"], shown["max_ball"]) == ("gran_linea", True, 90)
    assert _open(NetworkPrize.objects.get(code="GL7")) == [1]

    door = "/api/network/specialities/"
    mine = halls[0]
    join = {
        "speciality": mine.speciality.pk,
        "network": network.code,
        "prize": "GL7",
        "table_code": "granlinea",
    }
    operator = api_client(mine.operator)
    refused(operator.post(door, {**join, "table_code": "linea"}, format="json"), 400, "not_a_network_prize")
    refused(operator.post(door, {**join, "network": "NOPE"}, format="json"), 404, "unknown_network")
    refused(
        api_client(halls[1].operator).post(door, join, format="json"), 404, "unknown_speciality"
    )  # another venue's speciality
    refused(api_client(mine.cashier).post(door, join, format="json"), 403, "role_required")
    joined = operator.post(door, join, format="json")
    assert joined.status_code == 201, joined.content
    refused(operator.post(door, join, format="json"), 409, "prize_room_taken")
    listed = operator.get(door).json()
    assert [(m["prize"], m["table_code"], m["active"]) for m in listed] == [("GL7", "granlinea", True)]
    assert api_client(halls[1].operator).get(door).json() == []

    leave = f"{door}{joined.json()['id']}/leave/"
    refused(api_client(halls[1].operator).post(leave), 404, "unknown_speciality_membership")
    left = operator.post(leave)
    assert (left.status_code, left.json()["active"]) == (200, False)
    refused(operator.post(leave), 409, "already_left")
    # Left: its next game plays no Gran prize; it may join again.
    follow()
    play(sell(mine), line_at(5))
    assert not EGameRound.objects.exists()
    assert operator.post(door, join, format="json").status_code == 201
    assert SpecialityMembership.objects.filter(active=True).count() == 1


def test_the_gran_meter_is_in_the_screen_and_terminal_snapshots_labelled_by_kind(
    client: Client, halls, gran_linea
) -> None:
    follow()  # the round's opening and its meter: 100.01
    screen = Screen.objects.create(venue=halls[0].venue, room=halls[0].speciality.room, name="Pantalla")
    # A screen or terminal (re)connecting reads it from its snapshot, before any new meter entry.
    [shown] = client.get(f"/screens/{screen.token}/snapshot/").json()["sections"]["network"]["prizes"]
    assert {k: shown[k] for k in ("prize", "kind", "name", "amount", "max_ball")} == {
        "prize": "GL1",
        "kind": "gran_linea",
        "name": "Gran Línea Melilla",
        "amount": "100.01",
        "max_ball": None,  # the speciality's own Gran Línea sets none: the first in the network wins
    }
    [meter] = terminal_snapshot(halls[0].terminal)["network"]
    assert (meter["prize"], meter["kind"], meter["amount"]) == ("GL1", "gran_linea", "100.01")
    page = client.get(f"/screens/{screen.token}/").content.decode()
    assert 'id="ib-prize"' in page and "bingo_network/screen.js" in page


def test_a_result_naming_more_than_500_winning_cards_counts_them_all(halls, gran_linea) -> None:
    sold = [{"series": "E", "ranges": [[1, 400], [1001, 1400]]}]
    many = [payloads.card_label("E", n) for n in (*range(1, 400), *range(1001, 1302))]
    assert len(payloads.winning_cards({"cards": many}, sold)) == 700
    with pytest.raises(InvalidInput) as refused_card:
        payloads.winning_cards({"cards": [*many, "E-0500"]}, sold)
    assert refused_card.value.code == "card_not_sold"

    rnd = gran_linea.rounds.get(number=1)
    sales = Decimal("800.00")
    split = money.split_contribution(sales, Decimal("0.10"), Decimal(0))
    rounds.accept_contribution(
        venue_id=halls[0].venue.pk,
        payload={
            "prize": "GL1",
            "round": 1,
            "game": 1,
            "number": 1,
            "sales": "800.00",
            "to_meter": str(split.to_meter),
            "to_reserve": str(split.to_reserve),
            "cards_sold": 800,
            "sold": sold,
        },
    )
    answer = rounds.accept_result(
        venue_id=halls[0].venue.pk,
        payload={"prize": "GL1", "round": 1, "game": 1, "void": False, "ordinal": 5, "cards": many},
    )
    assert answer["counted"]
    rounds.decide_overdue(now=timezone.now() + timedelta(seconds=gran_linea.wait_seconds + 1))
    rnd.refresh_from_db()
    assert (rnd.state, rnd.ordinal) == ("decided", 5)
    assert RoundShare.objects.filter(round=rnd).count() == 700
    paid = sum(RoundShare.objects.filter(round=rnd).values_list("amount", flat=True))
    assert rnd.share == Decimal("0.25") and paid + rnd.remainder == rnd.pool_amount  # (100.01 + 80) / 700
    assert reports.balance(gran_linea.pool).holds


def test_a_game_does_not_join_a_round_about_to_end(halls, gran_linea) -> None:
    follow()
    # Round 1's wait ends in 10 s: too close for a game's contribution and result to reach the central.
    KnownRound.objects.filter(number=1).update(closes_at=timezone.now() + timedelta(seconds=10))
    play(sell(halls[0]), line_at(5))
    assert not EGameRound.objects.exists()
    assert not PrizeRound.objects.get(prize=gran_linea, number=1).contributions.exists()
