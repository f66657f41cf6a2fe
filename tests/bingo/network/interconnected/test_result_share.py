"""Results share the prize (issue 30): the hall's result that completes a round while another transaction
shares the prize (a contribution or result in flight) does not wait for it; the round is decided right after
the result commits, or, if that process is lost, by the beat, as every hall reported (never twice)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from bingo.network.interconnected.models import NetworkPrize, PrizeRound, RoundResult, RoundShare
from bingo.network.interconnected.services import prizes, rounds
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


@contextmanager
def shared_elsewhere(prize: NetworkPrize) -> Iterator[Callable[[], None]]:
    """Another connection holds the prize FOR SHARE (as a hall's message in flight) until released (the
    callable given) or the block ends."""
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                table = NetworkPrize._meta.db_table
                cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR SHARE", [prize.pk])  # noqa: S608
                held.set()
                done.wait(60)
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(30)
    try:
        yield done.set
    finally:
        done.set()
        thread.join(30)


def _reported_but_the_last(halls: list[Hall], prize: NetworkPrize) -> PrizeRound:
    rnd = prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    for hall, game in zip(halls, played, strict=True):
        deliver(hall)
        bingo_at(hall, game, serial=7, fillers=0)  # every hall at ball 15: three cards share
    for hall in halls[:2]:
        deliver(hall)
    return rnd


def _decided_once(rnd: PrizeRound, prize: NetworkPrize) -> None:
    rnd.refresh_from_db()
    assert (rnd.state, rnd.rule, rnd.ordinal, rnd.share) == ("decided", "all_reported", 15, Decimal("39.33"))
    assert RoundResult.objects.filter(round=rnd, late=False).count() == 3
    assert RoundShare.objects.filter(round=rnd).count() == 3
    assert PoolSettlement.objects.filter(pool=prize.pool).count() == 1
    assert reports.balance(prize.pool).holds


@pytest.mark.django_db(transaction=True)
def test_the_last_result_with_the_prize_shared_is_decided_after_its_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    halls = [make_hall(n) for n in (1, 2, 3)]
    prize = make_prize(make_network(halls), halls)
    rnd = _reported_but_the_last(halls, prize)
    decide = rounds.decide_reported
    with shared_elsewhere(prize) as release:

        def after_commit(round_id: int, now: datetime | None = None) -> bool:
            release()  # the other transaction ends; the decision waits for it (FOR UPDATE)
            return decide(round_id, now=now)

        monkeypatch.setattr(rounds, "decide_reported", after_commit)
        (answer,) = deliver(halls[2])  # its result waits for nothing; its decision after the commit
    assert answer.status == "applied" and answer.answer["decided"] is False
    _decided_once(rnd, prize)
    assert rounds.decide_overdue(now=timezone.now()) == []  # nothing left for the beat


@pytest.mark.django_db(transaction=True)
def test_a_decision_lost_after_the_commit_is_the_beats(monkeypatch: pytest.MonkeyPatch) -> None:
    halls = [make_hall(n) for n in (1, 2, 3)]
    prize = make_prize(make_network(halls), halls)
    rnd = _reported_but_the_last(halls, prize)
    monkeypatch.setattr(rounds, "decide_reported", lambda round_id, now=None: False)  # the process lost
    with shared_elsewhere(prize):
        (answer,) = deliver(halls[2])
    monkeypatch.undo()
    assert answer.answer["decided"] is False
    rnd.refresh_from_db()
    assert rnd.state == "open" and rnd.closes_at > timezone.now()
    assert rounds.decide_overdue(now=timezone.now()) == [rnd.pk]  # before its wait: every hall reported
    _decided_once(rnd, prize)
    assert rounds.decide_overdue(now=rnd.closes_at + (rnd.closes_at - rnd.opened_at)) == []
