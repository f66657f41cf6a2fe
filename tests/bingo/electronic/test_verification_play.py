"""What a verification decides about play: a terminal that passed buys in the session opened on it; one
that failed (unapproved software, silent, clock off) is refused terminal_not_verified and nothing is
written; a terminal verified by an older verification does not play in a newer session."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from bingo.electronic.models import Purchase, Terminal
from bingo.electronic.services import sales, sessions, terminals, verification
from halls.cashier.services import ledger
from halls.errors import Conflict
from tests.bingo.electronic.sales_support import selling_game
from tests.bingo.electronic.support import funded_card, make_speciality

pytestmark = pytest.mark.django_db


def hello(terminal: Terminal, *, version: str = "5.0", offset_ms: int = 0, ago: float = 1) -> None:
    """What a terminal's `hello` leaves on its row."""
    Terminal.objects.filter(pk=terminal.pk).update(
        software_version=version,
        clock_offset_ms=offset_ms,
        last_seen_at=timezone.now() - timedelta(seconds=ago),
    )


def test_only_the_terminals_that_passed_buy(venue: Any, operator: Any, cashier: Any) -> None:
    speciality = make_speciality(venue, operator)
    verification.approve_software(venue=venue, version="5.0", authorisation_ref="AUT", actor=operator)
    made = {
        name: terminals.register_terminal(speciality=speciality, name=name, actor=operator)[0]
        for name in ("good", "old software", "silent", "clock off")
    }
    hello(made["good"])
    hello(made["old software"], version="4.9")
    hello(made["silent"], ago=3600)
    hello(made["clock off"], offset_ms=90_000)
    run = verification.run_verification(speciality=speciality, actor=operator)
    session = sessions.open_session(speciality=speciality, actor=operator)
    selling_game(speciality, session=session)
    card = funded_card(venue, cashier, Decimal("10.00"))

    good = Terminal.objects.select_related("device").get(pk=made["good"].pk)
    bought = sales.purchase(terminal=good, card_number=card.number, cards=2, key="k1")
    assert bought.balance == Decimal("9.00") and good.verified_by_id == run.pk

    for name in ("old software", "silent", "clock off"):
        terminal = Terminal.objects.select_related("device").get(pk=made[name].pk)
        with pytest.raises(Conflict) as caught:
            sales.purchase(terminal=terminal, card_number=card.number, cards=1, key="k1")
        assert caught.value.code == "terminal_not_verified", name
    assert Purchase.objects.count() == 1
    assert ledger.card_account(card).balance == Decimal("9.00")


def test_a_terminal_verified_for_an_earlier_session_does_not_play_in_the_next(
    venue: Any, operator: Any, cashier: Any
) -> None:
    speciality = make_speciality(venue, operator)
    verification.approve_software(venue=venue, version="5.0", authorisation_ref="AUT", actor=operator)
    terminal = terminals.register_terminal(speciality=speciality, name="T", actor=operator)[0]
    hello(terminal)
    verification.run_verification(speciality=speciality, actor=operator)
    first = sessions.open_session(speciality=speciality, actor=operator)
    sessions.close_session(session=first, actor=operator)
    hello(terminal, ago=3600)  # silent since
    verification.run_verification(speciality=speciality, actor=operator)
    second = sessions.open_session(speciality=speciality, actor=operator)
    selling_game(speciality, session=second)
    card = funded_card(venue, cashier)
    with pytest.raises(Conflict) as caught:
        sales.purchase(
            terminal=Terminal.objects.select_related("device").get(pk=terminal.pk),
            card_number=card.number,
            cards=1,
            key="k",
        )
    assert caught.value.code == "terminal_not_verified"


def test_after_the_session_closes_no_terminal_buys(venue: Any, operator: Any, cashier: Any) -> None:
    speciality = make_speciality(venue, operator)
    verification.approve_software(venue=venue, version="5.0", authorisation_ref="AUT", actor=operator)
    terminal = terminals.register_terminal(speciality=speciality, name="T", actor=operator)[0]
    hello(terminal)
    verification.run_verification(speciality=speciality, actor=operator)
    session = sessions.open_session(speciality=speciality, actor=operator)
    selling_game(speciality, session=session)
    sessions.close_session(session=session, actor=operator)
    card = funded_card(venue, cashier)
    with pytest.raises(Conflict) as caught:
        sales.purchase(
            terminal=Terminal.objects.select_related("device").get(pk=terminal.pk),
            card_number=card.number,
            cards=1,
            key="k",
        )
    assert caught.value.code == "no_session"
