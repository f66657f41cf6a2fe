"""Property test of the batched purchase writer (sales._write_together): for any batch hypothesis draws
(terminals and cards mixed, keys repeated in the batch and of an earlier purchase, cards short of money or
blocked or unknown, terminals near their cards' limit or out of service), the batch leaves the same ledger,
the same purchases and cards, and gives each purchase the same answer as writing them one by one
(sales._write_alone) from the same state. Runs on PostgreSQL and SQLite (tests/sqlite runs it too)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bingo.electronic.models import ECard, ElectronicGame, Purchase, Terminal, TerminalState
from bingo.electronic.services import sales
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import DomainError
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, more_terminals, on_sale
from tests.bingo.electronic.support import RULES_90, funded_card

pytestmark = pytest.mark.django_db
D = Decimal
RULES = {**RULES_90, "max_cards": 8}


@pytest.fixture
def hall(venue: Venue, operator: User, cashier: User) -> dict[str, Any]:
    sale: OnSale = on_sale(venue, operator, cashier, rules=RULES, balance=D("3.00"))
    # On sale for the whole test (hypothesis runs its examples for longer than a game's 30 s of sales).
    ElectronicGame.objects.filter(pk=sale.game.pk).update(sales_close_at=timezone.now() + timedelta(hours=1))
    terminals = [sale.terminal] + [t for t, _token in more_terminals(sale, operator, 2)]
    players = [sale.card, funded_card(venue, cashier, D("1.50")), funded_card(venue, cashier, D("9.00"))]
    blocked = funded_card(venue, cashier, D("5.00"))
    player_cards.block_card(card=blocked, reason="lost", actor=operator)
    numbers = [c.number for c in players] + [blocked.number, "0" * 16]
    # An earlier purchase of terminal 0 under key "p": a batch's "p" of terminal 0 is its retry or key_reused.
    first = sales.purchase(terminal=terminals[0], card_number=players[2].number, cards=2, key="p")
    assert isinstance(first, sales.Bought)
    return {"venue": venue, "terminals": terminals, "numbers": numbers, "sale": sale}


def _state(venue: Venue) -> dict[str, Any]:
    """Everything a purchase writes, comparable across two runs (ids aside)."""
    return {
        "accounts": sorted(Account.objects.filter(venue=venue).values_list("code", "balance")),
        "purchases": sorted(
            Purchase.objects.values_list(
                "terminal_id", "key", "player_card__number", "cards", "amount", "seed"
            )
        ),
        "cards": sorted(
            ECard.objects.values_list("purchase__terminal_id", "purchase__key", "position", "cells")
        ),
        "spends": sorted(
            LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).values_list(
                "key", "device", "actor_label"
            )
        ),
        "audit": sorted(AuditEntry.objects.values_list("action", "object_type")),
        "holds": books.trial_balance(venue.pk).holds,
    }


def _answer(answer: Any) -> Any:
    if isinstance(answer, sales.Bought):
        return ("bought", answer.replayed, answer.purchase.key, answer.balance, len(answer.cards))
    assert isinstance(answer, DomainError), answer
    return ("refused", answer.code)


asks = st.lists(
    st.tuples(
        st.integers(0, 2),  # terminal
        st.integers(0, 4),  # card: three funded, one blocked, one unknown
        st.integers(1, 6),  # cards
        st.sampled_from(["p", "a", "b", "c", "d", "e"]),  # keys repeat, "p" was bought before
    ),
    min_size=1,
    max_size=10,
)


@hypothesis_settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(asks=asks, out_of_service=st.booleans())
def test_a_batch_writes_what_one_by_one_writes(
    hall: dict[str, Any], asks: list[tuple[int, int, int, str]], out_of_service: bool
) -> None:
    terminals: list[Terminal] = hall["terminals"]
    orders = []
    for t, c, n, key in asks:
        made = sales.prepare(
            terminal=terminals[t], card_number=hall["numbers"][c], cards=n, key=key + "x"
        )  # fresh keys: an Order each (the replay is decided under the locks, as in a group)
        assert isinstance(made, sales.Order)
        orders.append(made if key != "p" else replace(made, key="p"))
    # Savepoints of the test's own transaction: each service call below is a transaction of its own (as
    # in production; halls.locks checks each one's lock order); each example starts from the fixture's state.
    start = transaction.savepoint()
    if out_of_service:
        Terminal.objects.filter(pk=terminals[2].pk).update(state=TerminalState.OUT_OF_SERVICE)
    point = transaction.savepoint()
    alone = [_answer(sales._alone(order)) for order in orders]
    one_by_one = _state(hall["venue"])
    transaction.savepoint_rollback(point)
    together = [_answer(a) for a in sales._write_together(orders)]
    batched = _state(hall["venue"])
    transaction.savepoint_rollback(start)
    assert together == alone
    assert batched == one_by_one
    assert batched["holds"]
    sales_account = books.venue_account(hall["venue"].pk, Kind.SALES)
    assert sales_account.balance == D("1.00")  # rolled back: only the earlier purchase
