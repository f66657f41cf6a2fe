"""Purchases at once, each thread on its own connection: terminals spending one card get exactly what it
affords; a purchase racing the close of sales is either in the sold set the close counts or refused
sales_closed, never lost; a purchase resent at once is made once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from bingo.electronic.models import ECard, EGameState, ElectronicGame, Purchase
from bingo.electronic.services import messages, sales
from bingo.electronic.services.locks import lock_egame
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Ticket, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import Conflict
from halls.models import Venue
from tests.bingo.electronic.sales_support import more_terminals, on_sale
from tests.bingo.electronic.support import funded_card
from tests.threads import in_threads

D = Decimal
THREADS = 24


def _run(work: Callable[[int], object], n: int = THREADS) -> tuple[list[object], list[Conflict]]:
    done: list[object] = []
    refused: list[Conflict] = []
    guard = threading.Lock()

    def one(i: int) -> Callable[[], None]:
        def run() -> None:
            try:
                result = work(i)
            except Conflict as exc:
                with guard:
                    refused.append(exc)
                return
            with guard:
                done.append(result)

        return run

    errors = in_threads([one(i) for i in range(n)])
    assert not errors, errors
    assert len(done) + len(refused) == n
    return done, refused


@pytest.mark.django_db(transaction=True)
def test_two_terminals_spending_one_card_at_once(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("1.00"))
    [(other, _token)] = more_terminals(sale, operator, 1)
    pair = [sale.terminal, other]
    done, refused = _run(
        lambda i: sales.purchase(terminal=pair[i], card_number=sale.card.number, cards=2, key="buy"), n=2
    )
    assert len(done) == 1 and [exc.code for exc in refused] == ["insufficient_balance"]
    assert player_cards.balance(sale.card) == D("0.00")
    assert Purchase.objects.count() == 1 and ECard.objects.count() == 2
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 1
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("1.00")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_many_terminals_on_one_card_get_exactly_what_it_affords(
    venue: Venue, operator: User, cashier: User
) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("10.00"))
    fleet = [sale.terminal] + [t for t, _ in more_terminals(sale, operator, THREADS - 1)]
    done, refused = _run(
        lambda i: sales.purchase(terminal=fleet[i], card_number=sale.card.number, cards=3, key=f"k{i}")
    )
    assert len(done) == 6 and {exc.code for exc in refused} == {"insufficient_balance"}
    assert player_cards.balance(sale.card) == D("1.00")
    assert Purchase.objects.aggregate(n=Sum("cards"))["n"] == 18 == ECard.objects.count()
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("9.00")
    assert books.trial_balance(venue.pk).holds


def _close(game_id: int) -> tuple[int, Decimal]:
    """The close of sales as the engine does it: the game FOR UPDATE (it waits for the purchases in flight),
    the sold set counted, the state moved on."""
    with transaction.atomic():
        game = lock_egame(game_id)
        assert game is not None
        sold = Purchase.objects.filter(game=game).aggregate(n=Sum("cards"), total=Sum("amount"))
        counted = (int(sold["n"] or 0), sold["total"] or D("0"))
        ElectronicGame.objects.filter(pk=game_id).update(
            state=EGameState.DRAWING,
            sales_closed_at=timezone.now(),
            cards_sold=counted[0],
            sales_total=counted[1],
        )
    return counted


@pytest.mark.django_db(transaction=True)
def test_a_purchase_racing_the_close_is_sold_or_refused_never_lost(
    venue: Venue, operator: User, cashier: User
) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("50.00"))
    fleet = [sale.terminal] + [t for t, _ in more_terminals(sale, operator, THREADS - 2)]
    players = [sale.card] + [funded_card(venue, cashier, D("50.00")) for _ in range(3)]
    closed: list[tuple[int, Decimal]] = []

    def work(i: int) -> object:
        if i == THREADS // 2:
            closed.append(_close(sale.game.pk))
            return "closed"
        t = i if i < THREADS // 2 else i - 1
        return sales.purchase(
            terminal=fleet[t], card_number=players[t % 4].number, cards=2, key=f"k{i}", game=sale.game.pk
        )

    done, refused = _run(work)
    assert {exc.code for exc in refused} <= {"sales_closed"}
    bought = [b for b in done if isinstance(b, sales.Bought)]
    assert len(bought) + len(refused) == THREADS - 1
    # The close counted exactly the purchases that were made: none made after it, none lost.
    [(cards_sold, total)] = closed
    assert Purchase.objects.filter(game=sale.game).count() == len(bought)
    assert cards_sold == 2 * len(bought) == ECard.objects.filter(game=sale.game).count()
    assert total == D("1.00") * len(bought)
    assert books.venue_account(venue.pk, Kind.SALES).balance == total
    assert sum((player_cards.balance(c) for c in players), D("0")) == D("200.00") - total
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_a_purchase_resent_at_once_is_made_once(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier)
    done, refused = _run(
        lambda i: sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=5, key="once"),
        n=16,
    )
    assert not refused
    ids = {b.purchase.pk for b in done if isinstance(b, sales.Bought)}
    assert len(ids) == 1 and sum(1 for b in done if isinstance(b, sales.Bought) and not b.replayed) == 1
    assert player_cards.balance(sale.card) == D("17.50")
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 1
    assert ECard.objects.count() == 5


@pytest.mark.django_db(transaction=True)
def test_a_cashout_resent_at_once_issues_one_ticket(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier)
    done, refused = _run(
        lambda i: messages.cashout(terminal=sale.terminal, seq=5, card_number=sale.card.number), n=12
    )
    assert not refused
    answers = [a for a in done if isinstance(a, messages.Answer)]
    assert len({a.result["ticket"] for a in answers}) == 1 and sum(not a.replayed for a in answers) == 1
    assert Ticket.objects.count() == 1 and player_cards.balance(sale.card) == D("0.00")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_a_group_answers_each_purchase_as_if_alone(venue: Venue, operator: User, cashier: User) -> None:
    """Purchases written together in one transaction: each gets its own answer (bought, a retry of an
    earlier one in the same group, refused) and the refused ones write nothing."""
    sale = on_sale(venue, operator, cashier, balance=D("2.00"))
    [(other, _token)] = more_terminals(sale, operator, 1)
    rich = funded_card(venue, cashier, D("50.00"))
    n = sale.card.number

    def order(terminal: object, number: str, cards_: int, key: str) -> sales.Order:
        made = sales.prepare(terminal=terminal, card_number=number, cards=cards_, key=key)  # type: ignore[arg-type]
        assert isinstance(made, sales.Order)
        return made

    orders = [
        order(sale.terminal, n, 2, "a"),  # 1.00 of the 2.00
        order(other, n, 4, "b"),  # 2.00: the card has 1.00 left by then
        order(sale.terminal, n, 2, "a"),  # the first again, in the same group: its answer
        order(other, rich.number, 6, "c"),
        order(other, "0" * 16, 1, "d"),  # no such card
    ]
    answers = sales.write_group(orders)
    first, short, again, big, unknown = answers
    assert isinstance(first, sales.Bought) and not first.replayed and first.balance == D("1.00")
    assert isinstance(short, Conflict) and short.code == "insufficient_balance"
    assert isinstance(again, sales.Bought) and again.replayed and again.purchase.pk == first.purchase.pk
    assert isinstance(big, sales.Bought) and big.balance == D("47.00")
    assert getattr(unknown, "code", None) == "unknown_card"
    assert Purchase.objects.count() == 2 and ECard.objects.count() == 8
    assert player_cards.balance(sale.card) == D("1.00") and player_cards.balance(rich) == D("47.00")
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 2
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("4.00")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_purchases_at_once_share_groups(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier)
    fleet = [sale.terminal] + [t for t, _ in more_terminals(sale, operator, THREADS - 1)]
    players = [funded_card(venue, cashier) for _ in range(THREADS)]
    group = sales.purchase_group()
    before = (group.groups, group.items)
    _done, refused = _run(
        lambda i: sales.purchase(terminal=fleet[i], card_number=players[i].number, cards=1, key="k")
    )
    assert not refused and group.items - before[1] == THREADS
    assert group.groups - before[0] <= THREADS
    assert Purchase.objects.count() == THREADS == ECard.objects.count()
    assert all(player_cards.balance(card) == D("19.50") for card in players)
    assert books.trial_balance(venue.pk).holds
