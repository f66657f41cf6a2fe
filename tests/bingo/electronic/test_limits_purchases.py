"""A terminal refuses a purchase past the player's limit (which limit, what is left, when it resets) and a
purchase while a reality check waits, writing nothing; alone or in a group of purchases; the reality check
is acknowledged once (a retry answers the same), audited."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone, translation
from rest_framework.test import APIClient

from bingo.electronic.models import ECard, Purchase, Terminal
from bingo.electronic.services import messages, sales
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, PlaySession, RealityCheck, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import limits, player_cards
from halls.errors import DomainError
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, more_terminals, on_sale
from tests.bingo.electronic.support import funded_card
from tests.threads import in_threads

pytestmark = pytest.mark.django_db
D = Decimal
URL = "/api/electronic/terminal/"


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier, balance=D("20.00"))


def _written() -> tuple[int, int, int, int, int]:
    return (
        Purchase.objects.count(),
        ECard.objects.count(),
        LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count(),
        AuditEntry.objects.count(),
        RealityCheck.objects.count(),
    )


def _refused(code: str, **kwargs: Any) -> DomainError:
    before = _written()
    with pytest.raises(DomainError) as caught:
        sales.purchase(**kwargs)
    assert caught.value.code == code, caught.value.as_dict()
    assert _written() == before  # nothing written
    return caught.value


def _client(terminal: Terminal, token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {terminal.device.pk}:{token}")
    return client


def test_a_purchase_past_a_spend_limit_is_refused_naming_the_limit(sale: OnSale, cashier: User) -> None:
    limits.set_limit(card=sale.card, kind="spend", period="day", amount="3.00", actor=cashier)
    buy: dict[str, Any] = {"terminal": sale.terminal, "card_number": sale.card.number}
    sales.purchase(**buy, cards=4, key="a")  # 2.00: within
    with translation.override("es"):
        refused = _refused("limit_reached", **buy, cards=4, key="b")  # 2.00 more: past 3.00
    assert "límite diario de gasto" in refused.message and "1,00 €" in refused.message, refused.message
    assert refused.details["left"] == "1.00" and refused.details["limit"] == "3.00"
    assert refused.details["kind"] == "spend" and refused.details["period"] == "day"
    resets = datetime.fromisoformat(refused.details["resets_at"])
    assert resets > timezone.now() and (resets - timezone.now()) <= timedelta(days=1, hours=2)
    sales.purchase(**buy, cards=2, key="c")  # 1.00: exactly the rest
    assert player_cards.balance(sale.card) == D("17.00")


def test_a_loss_limit_counts_the_prizes_won(sale: OnSale, cashier: User, venue: Venue) -> None:
    limits.set_limit(card=sale.card, kind="loss", period="week", amount="2.00", actor=cashier)
    buy: dict[str, Any] = {"terminal": sale.terminal, "card_number": sale.card.number}
    sales.purchase(**buy, cards=4, key="a")  # loss 2.00
    _refused("limit_reached", **buy, cards=2, key="b")
    # A prize of 1.50 credited to the card: the week's loss is 0.50.
    account = books.card_account(sale.card)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.PRIZE_AWARD,
        key="test-prize",
        legs=[
            ledger.debit(books.venue_account(venue.pk, Kind.SALES).pk, D("1.50")),
            ledger.credit(account.pk, D("1.50")),
        ],
        actor="test",
    )
    week = next(v for v in limits.limits_of(sale.card) if (v.kind, v.period) == ("loss", "week"))
    assert (week.used, week.left) == (D("0.50"), D("1.50"))
    sales.purchase(**buy, cards=2, key="b")  # 1.00: loss 1.50
    _refused("limit_reached", **buy, cards=2, key="d")  # 1.00 more: 2.50


def test_a_pending_raise_does_not_lift_the_limit_in_force(sale: OnSale, cashier: User) -> None:
    limits.set_limit(card=sale.card, kind="spend", period="month", amount="1.00", actor=cashier)
    change = limits.set_limit(card=sale.card, kind="spend", period="month", amount="10.00", actor=cashier)
    assert change.outcome == "pending"
    _refused("limit_reached", terminal=sale.terminal, card_number=sale.card.number, cards=4, key="a")


def test_a_group_counts_its_own_earlier_stakes(sale: OnSale, cashier: User, operator: User) -> None:
    ((second, _token),) = more_terminals(sale, operator, 1)
    limits.set_limit(card=sale.card, kind="spend", period="day", amount="3.00", actor=cashier)
    other = funded_card(sale.card.venue, cashier, D("5.00"))
    asks = [
        sales.Ask(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="a"),  # 2.00
        sales.Ask(terminal=second, card_number=other.number, cards=4, key="b"),  # no limit
        sales.Ask(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="c"),  # 4.00: refused
        sales.Ask(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="d"),  # 3.00: within
    ]
    answers = sales.write_group([o for o in sales.prepare_many(asks).orders.values()])
    kinds = [a.code if isinstance(a, DomainError) else "bought" for a in answers]
    assert kinds == ["bought", "bought", "limit_reached", "bought"]
    assert player_cards.balance(sale.card) == D("17.00")


def test_a_players_limit_holds_across_their_cards(sale: OnSale, cashier: User, operator: User) -> None:
    player = player_cards.register_player(
        venue_id=sale.card.venue_id, name="Luis", id_document="", actor=cashier
    )
    player_cards.link_player(card=sale.card, player=player, actor=cashier)
    other = funded_card(sale.card.venue, cashier, D("5.00"))
    player_cards.link_player(card=other, player=player, actor=cashier)
    limits.set_limit(card=other, kind="spend", period="day", amount="2.50", actor=cashier)
    sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="a")  # 2.00
    ((second, _token),) = more_terminals(sale, operator, 1)
    _refused("limit_reached", terminal=second, card_number=other.number, cards=2, key="b")  # 1.00 more


@override_settings(HALL_LIMITS_REALITY_CHECK_MINUTES=60.0)
def test_a_reality_check_stops_play_until_acknowledged(sale: OnSale) -> None:
    api = _client(sale.terminal, sale.token)
    inserted = api.post(URL + "card/", {"card": sale.card.number}, format="json")
    assert inserted.status_code == 200, inserted.content
    reality = inserted.json()["reality"]
    assert reality["due"] is None and reality["every_seconds"] == 3600 and reality["net"] == "0.00"
    session = PlaySession.objects.get(card=sale.card, ended_at__isnull=True)
    assert session.device_id == sale.terminal.device_id
    sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="a")
    # An hour and a bit later (the session's start moved back): the first check is due.
    PlaySession.objects.filter(pk=session.pk).update(started_at=session.started_at - timedelta(minutes=61))
    with translation.override("es"):
        refused = _refused(
            "reality_check_due", terminal=sale.terminal, card_number=sale.card.number, cards=4, key="b"
        )
    assert refused.details["check"] == 1 and refused.details["staked"] == "2.00"
    assert "1 h 01 min" in refused.message and "2,00 €" in refused.message, refused.message
    shown = api.post(URL + "reality/", {"card": sale.card.number}, format="json").json()
    assert (shown["due"], shown["staked"], shown["won"], shown["net"]) == (1, "2.00", "0.00", "2.00")
    assert shown["played_seconds"] >= 61 * 60
    refused_early = api.post(URL + "reality/ack/", {"card": sale.card.number, "check": 2}, format="json")
    assert (
        refused_early.status_code == 409 and refused_early.json()["error"]["code"] == "reality_check_not_due"
    )
    ack = api.post(URL + "reality/ack/", {"card": sale.card.number, "check": 1}, format="json")
    assert ack.status_code == 201, ack.content
    assert ack.json()["due"] is None and ack.json()["acknowledged"] == 1
    again = api.post(URL + "reality/ack/", {"card": sale.card.number, "check": 1}, format="json")
    assert again.status_code == 200 and again.json()["check"] == 1
    assert RealityCheck.objects.filter(session=session).count() == 1
    entry = AuditEntry.objects.get(action="cashier.reality_check_acknowledged")
    assert (
        entry.data["number"] == 1
        and entry.data["staked"] == "2.00"
        and sale.card.number not in str(entry.data)
    )
    sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="b")  # plays on
    # The card taken out: the session ends; the next insertion begins another.
    out = api.post(URL + "card/out/", {"card": sale.card.number}, format="json")
    assert out.status_code == 200 and out.json()["ended"] is True
    assert api.post(URL + "card/out/", {"card": sale.card.number}, format="json").json()["ended"] is False
    assert api.post(URL + "reality/", {"card": sale.card.number}, format="json").status_code == 409
    assert PlaySession.objects.filter(card=sale.card).count() == 1


def test_a_purchase_without_a_card_put_in_begins_a_session_that_follows_the_card(
    sale: OnSale, operator: User, cashier: User
) -> None:
    sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="a")
    session = PlaySession.objects.get(card=sale.card, ended_at__isnull=True)
    ((second, _token),) = more_terminals(sale, operator, 1)
    messages.insert_card(terminal=second, card_number=sale.card.number)
    moved = PlaySession.objects.get(card=sale.card, ended_at__isnull=True)
    assert moved.pk == session.pk and moved.device_id == second.device_id  # the time played goes on
    other = funded_card(sale.card.venue, cashier)
    messages.insert_card(terminal=second, card_number=other.number)  # another card in that terminal
    assert PlaySession.objects.get(pk=session.pk).ended_at is not None


def test_the_player_reads_and_sets_limits_at_the_terminal_during_a_session(sale: OnSale) -> None:
    api = _client(sale.terminal, sale.token)
    body = {"card": sale.card.number}
    assert api.post(URL + "limits/", body, format="json").json()["error"]["code"] == "no_play_session"
    api.post(URL + "card/", body, format="json")
    first = api.post(
        URL + "limits/set/", {**body, "kind": "loss", "period": "day", "amount": "5.00"}, format="json"
    )
    assert first.status_code == 200, first.content
    assert first.json()["limit"]["amount"] == "5.00" and first.json()["limit"]["left"] == "5.00"
    raised = api.post(
        URL + "limits/set/", {**body, "kind": "loss", "period": "day", "amount": "9.00"}, format="json"
    )
    assert raised.status_code == 202 and raised.json()["limit"]["pending_amount"] == "9.00"
    other = api.post(
        URL + "limits/set/",
        {**body, "kind": "loss", "period": "day", "amount": "12.00"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert other.status_code == 409 and other.json()["error"]["code"] == "limit_cooling_off"
    assert "límite diario de pérdidas" in other.json()["error"]["message"]
    listed = api.post(URL + "limits/", body, format="json").json()["limits"]
    assert [x["amount"] for x in listed if x["kind"] == "loss"] == ["5.00", None, None]
    entry = AuditEntry.objects.filter(action="cashier.limit_pending").get()
    assert entry.actor_label == sale.terminal.device.name


@pytest.mark.django_db(transaction=True)
def test_a_players_two_cards_at_two_terminals_at_once_never_pass_the_limit(
    venue: Venue, operator: User, cashier: User
) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("10.00"))
    player = player_cards.register_player(venue_id=venue.pk, name="Eva", id_document="", actor=cashier)
    other = funded_card(venue, cashier, D("10.00"))
    for card in (sale.card, other):
        player_cards.link_player(card=card, player=player, actor=cashier)
    limits.set_limit(card=other, kind="spend", period="day", amount="3.00", actor=cashier)
    fleet = [sale.terminal] + [t for t, _ in more_terminals(sale, operator, 7)]
    cards = [sale.card, other]
    outcomes: list[str] = []

    def buy(i: int) -> Callable[[], None]:
        def run() -> None:
            try:
                sales.purchase(terminal=fleet[i], card_number=cards[i % 2].number, cards=2, key=f"k{i}")
                outcomes.append("bought")
            except DomainError as exc:
                outcomes.append(exc.code)

        return run

    assert not in_threads([buy(i) for i in range(8)])
    assert sorted(outcomes) == ["bought"] * 3 + ["limit_reached"] * 5
    spent = player_cards.balance(sale.card) + player_cards.balance(other)
    assert spent == D("17.00")  # 3 purchases of 1.00, never a fourth
