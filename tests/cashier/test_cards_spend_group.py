"""Card spends written as a group (halls.cashier.services.player_cards, HALL_SPEND_GROUP_*): what each caller
is answered is what it would be alone (its move, its balance after it, a replay, a refusal), the books and
the audit chain as if the spends were posted one after the other."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from halls.services import audit
from tests.cashier.ticket_support import funded_card

D = Decimal


def _order(card_id: int, venue_id: int, amount: str, key: str) -> player_cards._Spend:
    return player_cards._Spend(
        card_id=card_id,
        venue_id=venue_id,
        amount=D(amount),
        ledger_key=f"card_spend:{key}",
        actor="T1",
        device="T1",
        memo="",
        data={},
        language=None,
    )


@pytest.mark.django_db(transaction=True)
def test_a_group_answers_each_spend_as_if_alone(venue: Venue, operator: User) -> None:
    one, two = funded_card(venue, 1, "5.00"), funded_card(venue, 2, "1.00")
    earlier = player_cards.spend(card=one, amount=D("1.00"), key="k0", actor="T1")
    orders = [
        _order(one.pk, venue.pk, "2.00", "k1"),
        _order(two.pk, venue.pk, "0.60", "k2"),
        _order(two.pk, venue.pk, "0.60", "k3"),  # the card holds 0.40 after k2: refused
        _order(one.pk, venue.pk, "2.00", "k1"),  # the same key again in the group: a replay
        _order(one.pk, venue.pk, "1.00", "k0"),  # posted before the group: a replay
        _order(one.pk, venue.pk, "1.00", "k4"),
    ]
    answers = player_cards.write_spends(orders)

    moves = [a for a in answers if not isinstance(a, BaseException)]
    assert [type(a).__name__ for a in answers] == ["CardMove"] * 2 + ["Conflict"] + ["CardMove"] * 3
    refused = answers[2]
    assert isinstance(refused, Conflict) and refused.code == "insufficient_balance"
    assert [m.replayed for m in moves] == [False, False, True, True, False]
    assert [m.balance for m in (moves[0], moves[1], moves[4])] == [D("2.00"), D("0.40"), D("1.00")]
    assert moves[3].transaction.pk == earlier.transaction.pk
    assert moves[2].transaction.pk == moves[0].transaction.pk
    assert player_cards.balance(one) == D("1.00") and player_cards.balance(two) == D("0.40")
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 4
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("4.60")
    assert books.trial_balance(venue.pk).holds
    # One audit entry per posting, in the venue's one chain, which verifies.
    assert AuditEntry.objects.filter(action="ledger.card_spend").count() == 4
    assert audit.verify_chain(venue.pk).ok


@pytest.mark.django_db(transaction=True)
def test_a_group_that_cannot_commit_is_written_one_by_one(
    venue: Venue, operator: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = funded_card(venue, 1, "5.00")

    def broken(group: object) -> list[object]:
        raise RuntimeError("the group's transaction failed")

    monkeypatch.setattr(player_cards, "_spend_together", broken)
    answers = player_cards.write_spends(
        [_order(card.pk, venue.pk, "1.00", "a"), _order(card.pk, venue.pk, "9.00", "b")]
    )
    assert not isinstance(answers[0], BaseException) and answers[0].balance == D("4.00")
    assert isinstance(answers[1], Conflict) and answers[1].code == "insufficient_balance"
    assert player_cards.balance(card) == D("4.00")
    assert books.trial_balance(venue.pk).holds
