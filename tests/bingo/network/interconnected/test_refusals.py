"""What the central refuses of a hall's messages about an interconnected prize: each refusal recorded as
the message's answer (the hall's outbox moves on), nothing of it counted."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from bingo.network.interconnected import tasks
from bingo.network.interconnected.models import PrizeRound, RoundContribution, RoundResult
from bingo.network.interconnected.services import prizes, rounds
from bingo.network.interconnected.services import readmodels as network_readmodels
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage
from halls.link.services import outbox
from halls.models import Venue
from jackpots.models import Contribution
from jackpots.services import reports
from tests.bingo.network.interconnected.ib_support import (
    deliver,
    follow,
    make_hall,
    make_network,
    make_prize,
    on_sale,
)
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)

pytestmark = pytest.mark.django_db


def _send(venue: Venue, kind: LinkKind, payload: dict[str, Any]) -> str:
    """The venue's outbox sends `payload`; the code of the central's refusal ("" when applied)."""
    from halls.link.services import loopback

    with transaction.atomic():
        outbox.enqueue(venue_id=venue.pk, kind=kind, payload=payload)
    [answer] = loopback.deliver(venue_id=venue.pk)
    stored = InboxMessage.objects.get(venue=venue, sequence=answer.sequence)
    assert stored.answer == answer.answer  # the refusal is recorded with the message
    return str(answer.answer.get("refused", {}).get("code", "")) if answer.status == "refused" else ""


def _contribution(**more: Any) -> dict[str, Any]:
    return {
        "prize": "IB1",
        "round": 1,
        "game": 999,
        "number": 1,
        "sales": "60.00",
        "to_meter": "6.000000",
        "to_reserve": "0.000000",
        "cards_sold": 30,
        "sold": [{"series": "A", "ranges": [[1, 30]]}],
        **more,
    }


def test_every_bad_message_is_refused_and_nothing_counted() -> None:
    halls = [make_hall(n) for n in (1, 2, 3)]
    prize = make_prize(make_network(halls), halls)
    stranger = make_hall(4).venue  # a hall of another network
    rnd = prizes.open_round(prize=prize, actor="central-operator")
    follow()
    one, two, three = (h.venue for h in halls)

    # Contributions: unknown prize, unknown round, not a member, not the prize's percent, bad fields.
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(prize="NOPE")) == "unknown_prize"
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(round=7)) == "unknown_round"
    assert _send(stranger, LinkKind.IB_CONTRIBUTION, _contribution()) == "not_member"
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(to_meter="5.000000")) == "contribution_mismatch"
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(sales=60)) == "bad_payload"
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(cards_sold=31)) == "bad_payload"
    assert not Contribution.objects.filter(pool=prize.pool).exists()

    # Hall 1 plays its round game for real; a second contribution of it is refused.
    game = on_sale(halls[0])
    assert [a.status for a in deliver(halls[0])] == ["applied"]
    assert _send(one, LinkKind.IB_CONTRIBUTION, _contribution(game=game.pk + 1)) == "already_contributed"

    # Results: a stranger's, a hall with no game in the round, cards beyond the sold ones, a wrong game.
    result = {"prize": "IB1", "round": 1, "game": game.pk, "void": False, "ordinal": 15, "cards": ["A-0007"]}
    assert _send(stranger, LinkKind.IB_RESULT, result) == "not_member"
    assert _send(two, LinkKind.IB_RESULT, result) == "no_contribution"
    assert _send(one, LinkKind.IB_RESULT, {**result, "cards": ["A-0045"]}) == "card_not_sold"
    assert _send(one, LinkKind.IB_RESULT, {**result, "cards": ["B-0007"]}) == "card_not_sold"
    assert _send(one, LinkKind.IB_RESULT, {**result, "game": game.pk + 1}) == "bad_payload"
    assert _send(one, LinkKind.IB_RESULT, {**result, "ordinal": 91}) == "bad_payload"
    assert _send(one, LinkKind.IB_RESULT, {**result, "cards": []}) == "bad_payload"
    assert not RoundResult.objects.exists()

    # The round's wait expires: decided among the results received (none): the pool carries over.
    assert rounds.decide_overdue(now=rnd.closes_at + timedelta(seconds=1)) == [rnd.pk]
    rnd.refresh_from_db()
    assert (rnd.rule, rnd.ordinal, rnd.missing) == (
        "wait_expired",
        None,
        ["ML-B-0001", "ML-B-0002", "ML-B-0003"],
    )

    # A contribution or a result (of a hall with no game in it) for the decided round: refused.
    assert _send(two, LinkKind.IB_CONTRIBUTION, _contribution()) == "round_decided"
    assert _send(two, LinkKind.IB_RESULT, result) == "round_decided"
    assert _send(one, LinkKind.IB_RESULT, result) == ""  # hall 1 played it: its late result is kept
    assert RoundResult.objects.get().late
    assert _send(one, LinkKind.IB_RESULT, result) == "already_reported"

    # A round past its wait that the beat has not decided yet takes no more games.
    rnd2 = prizes.open_round(prize=prize, actor="central-operator")
    PrizeRound.objects.filter(pk=rnd2.pk).update(closes_at=rnd2.opened_at - timedelta(seconds=1))
    assert _send(three, LinkKind.IB_CONTRIBUTION, _contribution(round=2)) == "round_closed"

    assert tasks.decide_overdue_rounds() == 1  # the beat's bounded wait decides it
    rnd2.refresh_from_db()
    assert (rnd2.state, rnd2.rule) == ("decided", "wait_expired")

    assert RoundContribution.objects.count() == 1
    assert Contribution.objects.filter(pool=prize.pool).count() == 1
    assert network_readmodels.live_meter(prize) == Decimal("106.01")
    assert reports.balance(prize.pool).holds
