"""An electronic game through a real Celery worker and beat on Redis, the worker SIGKILLed mid-game right
after a prize step (issue 13: "a real worker killed mid-game: the game completes, every prize paid once").

This process plays the hall: terminals say hello, the verification runs and the session opens on it, the
terminals buy cards with three player cards, the sales close. The worker draws; as soon as the first prize
is paid it is killed with SIGKILL. Nothing draws while no worker runs; a second worker is started, the
reaper (beat's tick, every second) re-enqueues the stalled step and the game completes. Then: every ball
once and in order, every prize of the terms decided once, each won prize paid by exactly one ledger
transaction to exactly the cards the draw says (recomputed here from the cards and the balls), and every
player card's balance exact to the cent. The draw is verifiable (issue 28): the second worker re-opened the
sealed seed and went on with the same sequence, so once the seed is revealed (the worker's task after the
game) every ball, before the kill and after it, is the one the seed and the sales digest give.
"""

from __future__ import annotations

import os
import signal
import time
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from bingo import verifiable
from bingo.draws.models import DrawCommitment
from bingo.electronic.detector import reference
from bingo.electronic.models import EBall, ECard, EGameState, ElectronicGame, EPrize, EWin, Purchase, Terminal
from bingo.electronic.prizetable import PrizeType, terms_from_json
from bingo.electronic.services import games, messages, sales, sessions, terminals, verification
from bingo.electronic.services.steps import rules_of
from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import ledger
from halls.cashier.services import player_cards as card_services
from tests.bingo.electronic.support import RULES_90, funded_card, make_speciality
from tests.e2e.celery_support import CeleryProcesses, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

FUNDED = Decimal("50.00")
RULES = {**RULES_90, "pace_seconds": "0.2", "sale_seconds": 600, "pause_seconds": 0}


def drawn(game: ElectronicGame) -> list[tuple[int, int]]:
    return list(EBall.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number"))


def test_a_worker_killed_after_a_prize_step_the_game_completes_and_pays_each_prize_once(
    celery_procs: CeleryProcesses, venue: Any, operator: Any, cashier: Any
) -> None:
    speciality = make_speciality(venue, operator, rules=RULES)
    verification.approve_software(venue=venue, version="7.2", authorisation_ref="AUT-SW", actor=operator)
    made = [
        terminals.register_terminal(speciality=speciality, name=f"T{i}", actor=operator)[0] for i in range(3)
    ]
    for terminal in made:
        messages.hello(
            terminal=Terminal.objects.select_related("device").get(pk=terminal.pk),
            seq=1,
            software_version="7.2",
            clock=timezone.now(),
        )
    run = verification.run_verification(speciality=speciality, actor=operator)
    assert run.passed and run.terminal_checks.filter(passed=True).count() == 3, run.system_checks
    sessions.open_session(speciality=speciality, actor=operator)

    first = celery_procs.start_worker("worker-1")
    celery_procs.start_beat()
    games.set_running(speciality=speciality, running=True, actor=operator)  # game 1 opens its sales
    games.set_running(speciality=speciality, running=False, actor=operator)  # and no game after it
    game = ElectronicGame.objects.get(speciality=speciality)
    players = [funded_card(venue, cashier, FUNDED) for _ in range(3)]
    for i, terminal in enumerate(made):
        playing = Terminal.objects.select_related("device").get(pk=terminal.pk)
        for j, player in enumerate(players):
            sales.purchase(terminal=playing, card_number=player.number, cards=4, key=f"p{i}-{j}")
    closed = games.close_sales(game, early=True)  # commits, then enqueues ball 1 on Redis
    assert closed is not None and closed.state == EGameState.DRAWING and closed.cards_sold == 36

    # The first prize paid: kill the worker at once (mid-wait for the next step, or inside it).
    wait_for(
        lambda: EPrize.objects.filter(game=game, won=True).exists(), 60, "a prize paid", celery_procs.logs
    )
    os.kill(first.pid, signal.SIGKILL)
    first.wait(5)
    time.sleep(2.0)  # with no worker nothing draws; the killed worker's message stays unacknowledged
    before = drawn(game)
    time.sleep(0.5)
    assert drawn(game) == before, "a ball was drawn with no worker running"
    game.refresh_from_db()
    assert game.state == EGameState.DRAWING, "the game ended before the kill: nothing was resumed"
    prizes_before = set(EPrize.objects.filter(game=game).values_list("code", "ordinal", "won"))

    celery_procs.start_worker("worker-2")
    wait_for(
        lambda: ElectronicGame.objects.filter(pk=game.pk, state=EGameState.CLOSED).exists(),
        90,
        "the game closed",
        celery_procs.logs,
    )
    game.refresh_from_db()

    # Every ball once, in order; the balls before the kill unchanged.
    balls = drawn(game)
    assert [o for o, _ in balls] == list(range(1, game.balls_drawn + 1))
    assert len({n for _, n in balls}) == len(balls)
    assert balls[: len(before)] == before
    numbers = [n for _, n in balls]

    # Every prize in play decided once; the prizes decided before the kill unchanged.
    terms = terms_from_json(game.terms)
    in_play = {p.code: p for p in terms.prizes if p.in_play}
    prizes = {p.code: p for p in EPrize.objects.filter(game=game)}
    assert set(prizes) == set(in_play) and set(game.decided) == set(in_play)
    assert len(game.decided) == len(set(game.decided))
    assert prizes_before <= {(p.code, p.ordinal, p.won) for p in prizes.values()}

    # The winners and their balls, recomputed from the cards and the balls.
    rules = rules_of(game.version)
    faces = {c.pk: list(bytes(c.cells)) for c in ECard.objects.filter(game=game)}
    assert len(faces) == 36
    completed = reference(rules.layout, faces, rules.patterns(), numbers)
    for code, prize in prizes.items():
        at = completed[in_play[code].pattern]
        wins = list(EWin.objects.filter(prize=prize))
        winners = {w.card_id for w in wins}
        if prize.won:
            assert winners == {card for card, ordinal in at.items() if ordinal == prize.ordinal}, code
            assert min(at.values()) == prize.ordinal, code
            assert prize.winners == len(wins) and {w.amount for w in wins} == {prize.share}
            assert prize.share * prize.winners + prize.remainder == prize.amount
            paid = LedgerTransaction.objects.filter(venue=venue, key=f"eprize:{game.pk}:{code}")
            assert paid.count() == 1 and paid.get().pk == prize.transaction_id, code
            assert paid.get().kind == TxKind.PRIZE_AWARD
        elif in_play[code].type is not PrizeType.ACCUMULATED:  # an accumulated prize also has its max ball
            assert not winners and all(ordinal > prize.ordinal for ordinal in at.values()), code
    assert prizes["bingo"].won and prizes["bingo"].ordinal == game.balls_drawn
    assert prizes["acumulado"].won == (prizes["bingo"].ordinal <= 40)
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_AWARD).count() == sum(
        p.won for p in prizes.values()
    )

    # Every player card: funded, less its cards, plus its wins, to the cent; the ledger balances.
    for player in players:
        spent = sum((p.amount for p in Purchase.objects.filter(player_card=player)), Decimal(0))
        won = sum((w.amount for w in EWin.objects.filter(purchase__player_card=player)), Decimal(0))
        assert card_services.balance(player) == FUNDED - spent + won
    assert ledger.trial_balance(venue.pk).holds
    # The killed worker's message was never acknowledged: the reaper re-enqueued the stalled step.
    assert "stalled before ball" in celery_procs.log("worker-2") + celery_procs.log("beat")

    # The seed revealed by the worker after the game: the whole sequence, across the kill, is the seed's.
    wait_for(
        lambda: (
            DrawCommitment.objects.filter(room="electronic", game_ref=str(game.pk)).exclude(seed="").exists()
        ),
        30,
        "the draw's seed revealed",
        celery_procs.logs,
    )
    row = DrawCommitment.objects.get(room="electronic", game_ref=str(game.pk))
    seed = bytes.fromhex(row.seed)
    assert verifiable.commit(seed) == row.commitment
    assert numbers == verifiable.balls(seed, row.sales_digest, 90, len(numbers))
