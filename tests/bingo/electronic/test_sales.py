"""Selling electronic cards at a terminal: the cards dealt from the purchase's seed, the money exact in the
ledger, a retry a no-op, and every refusal clear with nothing written."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from bingo.electronic.layouts import layout_of
from bingo.electronic.models import ECard, EGameState, ElectronicGame, Purchase, Terminal, TerminalState
from bingo.electronic.services import sales
from halls import events
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.eventtypes import EventType
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, more_terminals, on_sale, selling_game
from tests.bingo.electronic.support import RULES_90, funded_card

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier)


def _written() -> tuple[int, int, int, int]:
    return (
        Purchase.objects.count(),
        ECard.objects.count(),
        LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count(),
        AuditEntry.objects.count(),
    )


def _refused(code: str, **kwargs: Any) -> DomainError:
    before = _written()
    with pytest.raises(DomainError) as caught:
        sales.purchase(**kwargs)
    assert caught.value.code == code, caught.value.as_dict()
    assert _written() == before  # nothing written
    return caught.value


def test_a_purchase_deals_its_cards_from_its_seed_and_moves_the_money(
    sale: OnSale, venue: Venue, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    heard: list[events.Event] = []
    monkeypatch.setattr(events, "publish", heard.append)
    with django_capture_on_commit_callbacks(execute=True):
        bought = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=4, key="k1")
    assert (
        not bought.replayed and bought.balance == D("18.00") and player_cards.balance(sale.card) == D("18.00")
    )
    purchase = bought.purchase
    assert (purchase.game_id, purchase.cards, purchase.amount) == (sale.game.pk, 4, D("2.00"))
    layout = layout_of("90")
    dealt = layout.deal(bytes.fromhex(purchase.seed), 4)
    assert [sales.cells_of(c) for c in bought.cards] == [list(c) for c in dealt]
    assert [c.position for c in bought.cards] == [1, 2, 3, 4]
    assert all(not layout.problems(c) for c in dealt)
    stored = ECard.objects.filter(purchase=purchase).order_by("position")
    assert [bytes(c.cells) for c in stored] == [bytes(c) for c in dealt]
    # The money: card debited, venue sales credited, one transaction under the terminal's key.
    tx = purchase.transaction
    assert tx.kind == TxKind.CARD_SPEND and tx.key == f"card_spend:epurchase:{sale.terminal.pk}:k1"
    assert tx.data["game"] == sale.game.pk and tx.data["cards"] == 4 and tx.data["seed"] == purchase.seed
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("2.00")
    assert books.trial_balance(venue.pk).holds
    # The terminal hears of its cards and the balance.
    told = [e for e in heard if e.stream == f"terminal.{sale.terminal.pk}"]
    assert [e.type for e in told] == [EventType.TERMINAL_CARDS]
    assert told[0].data["balance"] == D("18.00") and told[0].data["purchase"] == purchase.pk
    assert [c["cells"] for c in told[0].data["cards"]] == [list(c) for c in dealt]


def test_two_purchases_deal_different_cards(sale: OnSale) -> None:
    a = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=6, key="a")
    b = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=6, key="b")
    assert a.purchase.seed != b.purchase.seed
    assert {bytes(c.cells) for c in a.cards}.isdisjoint({bytes(c.cells) for c in b.cards})


def test_a_75_ball_speciality_sells_5x5_cards(venue: Venue, operator: User, cashier: User) -> None:
    rules = {**RULES_90, "layout": "75", "prizes": [p for p in RULES_90["prizes"] if p["code"] != "esquinas"]}
    sale = on_sale(venue, operator, cashier, rules=rules)
    bought = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="k")
    layout = layout_of("75")
    assert all(len(sales.cells_of(c)) == 25 and not layout.problems(sales.cells_of(c)) for c in bought.cards)
    assert all(sales.cells_of(c)[12] == 0 for c in bought.cards)


def test_a_retry_answers_the_first_purchase_and_writes_nothing(sale: OnSale) -> None:
    first = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=3, key="same")
    before = _written()
    again = sales.purchase(
        terminal=sale.terminal, card_number=f"TJ:{sale.card.number}", cards=3, key="same", game=sale.game.pk
    )
    assert again.replayed and again.purchase.pk == first.purchase.pk
    assert [c.pk for c in again.cards] == [c.pk for c in first.cards]
    assert again.balance == D("18.50") and _written() == before
    # Even once the sales are closed, the retry is the first answer (not "sales closed").
    ElectronicGame.objects.filter(pk=sale.game.pk).update(state=EGameState.DRAWING)
    assert sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=3, key="same").replayed


def test_the_same_key_with_another_body_is_refused(sale: OnSale, venue: Venue, cashier: User) -> None:
    sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=3, key="k")
    other = funded_card(venue, cashier)
    _refused("key_reused", terminal=sale.terminal, card_number=sale.card.number, cards=2, key="k")
    _refused("key_reused", terminal=sale.terminal, card_number=other.number, cards=3, key="k")


def test_the_same_key_on_another_terminal_is_another_purchase(sale: OnSale, operator: User) -> None:
    [(other, _token)] = more_terminals(sale, operator, 1)
    a = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=1, key="k")
    b = sales.purchase(terminal=other, card_number=sale.card.number, cards=1, key="k")
    assert a.purchase.pk != b.purchase.pk and b.balance == D("19.00")


def test_beyond_the_balance_is_refused(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("1.00"))
    exc = _refused(
        "insufficient_balance", terminal=sale.terminal, card_number=sale.card.number, cards=3, key="k"
    )
    assert exc.status == 409
    assert player_cards.balance(sale.card) == D("1.00")


def test_a_blocked_card_is_refused(sale: OnSale, operator: User) -> None:
    player_cards.block_card(card=sale.card, reason="lost", actor=operator)
    _refused("card_blocked", terminal=sale.terminal, card_number=sale.card.number, cards=1, key="k")


def test_another_venues_card_is_unknown(sale: OnSale, other_venue: Venue, operator: User) -> None:
    foreign = player_cards.issue_card(venue_id=other_venue.pk, actor="test")
    exc = _refused("unknown_card", terminal=sale.terminal, card_number=foreign.number, cards=1, key="k")
    assert isinstance(exc, NotFound)
    _refused("unknown_card", terminal=sale.terminal, card_number="0" * 16, cards=1, key="k2")


def test_bad_input_is_named(sale: OnSale) -> None:
    n = sale.card.number
    assert isinstance(
        _refused("bad_count", terminal=sale.terminal, card_number=n, cards=0, key="k"), InvalidInput
    )
    _refused("bad_count", terminal=sale.terminal, card_number=n, cards="2", key="k")
    _refused("bad_count", terminal=sale.terminal, card_number=n, cards=True, key="k")
    exc = _refused("bad_count", terminal=sale.terminal, card_number=n, cards=7, key="k")
    assert isinstance(exc, Conflict) and exc.details["sizes"] == [1, 2, 3, 4, 5, 6]
    _refused("bad_key", terminal=sale.terminal, card_number=n, cards=1, key="")
    _refused("bad_key", terminal=sale.terminal, card_number=n, cards=1, key="x" * 61)
    _refused("bad_card_number", terminal=sale.terminal, card_number="12", cards=1, key="k")


def test_a_terminal_plays_at_most_max_cards_a_game(sale: OnSale) -> None:
    for i in range(6):  # 36 cards: RULES_90's max
        sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=6, key=f"k{i}")
    exc = _refused("max_cards", terminal=sale.terminal, card_number=sale.card.number, cards=1, key="more")
    assert exc.details == {"max_cards": 36, "have": 36}
    # The next game is another count.
    ElectronicGame.objects.filter(pk=sale.game.pk).update(state=EGameState.DRAWING)
    nxt = selling_game(sale.speciality, session=sale.session)
    assert (
        sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=1, key="n").purchase.game
        == nxt
    )


def test_sales_closed_refusals(sale: OnSale) -> None:
    n = sale.card.number
    # Another game named (this speciality's next, or any other id).
    _refused(
        "sales_closed", terminal=sale.terminal, card_number=n, cards=1, key="k", game=sale.game.pk + 1000
    )
    # The sales window is over (the close has not run yet).
    ElectronicGame.objects.filter(pk=sale.game.pk).update(
        sales_close_at=timezone.now() - timedelta(seconds=1)
    )
    _refused("sales_closed", terminal=sale.terminal, card_number=n, cards=1, key="k")
    # The game draws: none on sale.
    ElectronicGame.objects.filter(pk=sale.game.pk).update(state=EGameState.DRAWING)
    _refused("sales_closed", terminal=sale.terminal, card_number=n, cards=1, key="k")
    _refused("sales_closed", terminal=sale.terminal, card_number=n, cards=1, key="k", game=sale.game.pk)


def test_a_terminal_that_cannot_play_is_refused(sale: OnSale, operator: User) -> None:
    n = sale.card.number
    Terminal.objects.filter(pk=sale.terminal.pk).update(state=TerminalState.FAILED)
    sale.terminal.refresh_from_db()
    _refused("terminal_not_verified", terminal=sale.terminal, card_number=n, cards=1, key="k")
    Terminal.objects.filter(pk=sale.terminal.pk).update(state=TerminalState.OUT_OF_SERVICE)
    _refused("terminal_out_of_service", terminal=sale.terminal, card_number=n, cards=1, key="k")
    # In service but verified by another (an earlier) verification: not this session's.
    [(late, _token)] = more_terminals(sale, operator, 1)
    Terminal.objects.filter(pk=late.pk).update(verified_by=None)
    _refused("terminal_not_verified", terminal=late, card_number=n, cards=1, key="k")
    # No session open.
    sale.session.closed_at = timezone.now()
    sale.session.save()
    Terminal.objects.filter(pk=sale.terminal.pk).update(state=TerminalState.IN_SERVICE)
    _refused("no_session", terminal=sale.terminal, card_number=n, cards=1, key="k")


def test_purchase_many_answers_each_ask_as_purchase_would(sale: OnSale, venue: Venue) -> None:
    """The socket door's batch (sales.purchase_many): a purchase, its retry in the same batch, a bad count,
    an unknown card and a retry of an earlier purchase, each answered as `purchase` answers it. Inside the
    test's transaction (and on SQLite) its new purchases are written one by one; a group writes the same
    (test_sales_batch_property)."""
    earlier = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=1, key="e")
    assert isinstance(earlier, sales.Bought)
    before = _written()

    def ask(key: str, cards_: Any = 2, number: str | None = None) -> sales.Ask:
        return sales.Ask(
            terminal=sale.terminal, card_number=number or sale.card.number, cards=cards_, key=key
        )

    bought, again, bad, unknown, retried = sales.purchase_many(
        [ask("n"), ask("n"), ask("b", cards_=7), ask("u", number="0" * 16), ask("e", cards_=1)]
    )
    assert isinstance(bought, sales.Bought) and not bought.replayed and bought.balance == D("18.50")
    assert isinstance(again, sales.Bought) and again.replayed and again.purchase.pk == bought.purchase.pk
    assert isinstance(bad, Conflict) and bad.code == "bad_count"
    assert isinstance(unknown, DomainError) and unknown.code in ("unknown_card", "bad_card_number")
    assert (
        isinstance(retried, sales.Bought) and retried.replayed and retried.purchase.pk == earlier.purchase.pk
    )
    purchases, ecards, spends, _audit = _written()
    assert (purchases, ecards, spends) == (before[0] + 1, before[1] + 2, before[2] + 1)
    assert player_cards.balance(sale.card) == D("18.50")
    assert books.trial_balance(venue.pk).holds
