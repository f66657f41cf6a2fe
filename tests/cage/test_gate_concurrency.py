"""One person's payouts paid at once by several cashiers (threads, own connections): the window sees every
payout committed before it (the payouts of a venue are recorded one after the other, under its audit
chain), so a split that reaches the threshold is flagged exactly once."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from halls.cage.models import Flag, FlagKind, PayoutRecord
from halls.cashier.services import payables
from halls.models import Venue
from tests.cage.cage_support import players_card, prize
from tests.cashier.payable_support import new_cashier, on_shift
from tests.threads import in_threads

PAYOUTS = 6  # 6 x 900: the threshold (2,500) is reached by the third, whichever it is


@pytest.mark.django_db(transaction=True)
def test_a_split_paid_at_once_by_several_cashiers_is_flagged_once(venue: Venue) -> None:
    card = players_card(venue)
    prizes = [prize(venue, "900.00") for _ in range(PAYOUTS)]
    people = [new_cashier(venue, f"cajero-{i}") for i in range(PAYOUTS)]
    for person in people:
        on_shift(person, venue, "10.00")

    def worker(i: int) -> Callable[[], None]:
        def go() -> None:
            payables.pay_payable(
                payable=prizes[i], method="player_card", card=card, actor=people[i], key=f"k{i}"
            )

        return go

    assert in_threads([worker(i) for i in range(PAYOUTS)], timeout=180) == []
    assert PayoutRecord.objects.count() == PAYOUTS
    flag = Flag.objects.get()
    assert flag.kind == FlagKind.STRUCTURING and flag.total == Decimal("2700.00")
    assert flag.records.count() == 3
