"""Three halls' messages about one round applied at the same moment (each on its own connection, as
three venues' links at the central): the contributions all counted, the round decided exactly once."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import partial

import pytest

from bingo.network.interconnected.models import PrizeRound, RoundShare
from bingo.network.interconnected.services import prizes
from bingo.network.interconnected.services import readmodels as network_readmodels
from jackpots.models import PoolSettlement
from jackpots.services import reports
from tests.bingo.network.interconnected.ib_support import (
    Hall,
    bingo_at,
    deliver,
    follow,
    make_hall,
    make_network,
    make_prize,
    on_sale,
)
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.threads import in_threads


def _senders(halls: list[Hall]) -> list[Callable[[], object]]:
    return [partial(deliver, hall) for hall in halls]


@pytest.mark.django_db(transaction=True)
def test_the_halls_messages_at_once_count_once_and_decide_once() -> None:
    halls = [make_hall(n) for n in (1, 2, 3)]
    prize = make_prize(make_network(halls), halls)
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    assert not in_threads(_senders(halls))
    assert network_readmodels.live_meter(prize) == Decimal("118.01")
    for hall, game in zip(halls, played, strict=True):
        bingo_at(hall, game, serial=7, fillers=0)  # every hall at ball 15: three cards share
    assert not in_threads(_senders(halls))
    rnd = PrizeRound.objects.get()
    assert (rnd.state, rnd.rule, rnd.ordinal, rnd.share, rnd.remainder) == (
        "decided",
        "all_reported",
        15,
        Decimal("39.33"),
        Decimal("0.020000"),
    )
    assert RoundShare.objects.count() == 3
    assert PoolSettlement.objects.filter(pool=prize.pool).count() == 1
    assert reports.balance(prize.pool).holds
