"""A played electronic game built row by row for the archive's tests (recall, reports, screens), as the
design says the engine and the sales services write them: purchases spent on the ledger with their cards,
the close of sales (pools funded, terms fixed), balls drawn in a known order, prizes decided by the pure
detector and prize table, shares credited through the ledger (pool prizes through the pool engine first).

The real services stamp every row with the present (a purchase refuses a game whose sales window is past,
a ball is drawn now); the reports' tests need games finished on given local days, so they build them here,
writing the same rows under the same keys as the services. The recall's tests and one report test run the
real services (sales.purchase, games.close_sales, games.draw_ball).
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from bingo.electronic import detector
from bingo.electronic.models import (
    EBall,
    ECard,
    EGameState,
    ElectronicGame,
    EPrize,
    EWin,
    Purchase,
    Speciality,
    SpecialityPool,
    Terminal,
)
from bingo.electronic.prizetable import (
    POOL_TYPES,
    Decision,
    decide,
    fix_terms,
    game_over,
    split,
    terms_json,
)
from bingo.electronic.services.steps import rules_of
from halls import money
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards as card_services
from jackpots.services import awards, contributions
from jackpots.services.contributions import ContributionItem
from jackpots.services.locks import lock_pools
from jackpots.services.readmodels.meters import pool_meter
from jackpots.sources import PoolSource

ACTOR = "engine-test"


def new_game(speciality: Speciality, *, at: datetime | None = None) -> ElectronicGame:
    """Game n+1 of the speciality, selling, on its open session and the version in force."""
    now = at or timezone.now()
    last = speciality.games.order_by("-number").first()
    return ElectronicGame.objects.create(
        speciality=speciality,
        version=speciality.versions.order_by("-number")[0],
        session=speciality.sessions.get(closed_at__isnull=True),
        number=(last.number if last else 0) + 1,
        state=EGameState.SELLING,
        created_at=now,
        sales_close_at=now + timedelta(seconds=30),
    )


def buy(game: ElectronicGame, terminal: Terminal, card: PlayerCard, count: int, key: str) -> Purchase:
    """`count` cards for `card` at `terminal`: the spend, the purchase and its cards dealt from a seed."""
    rules = rules_of(game.version)
    amount = rules.card_price * count
    seed = secrets.token_bytes(16)
    with transaction.atomic():
        move = card_services.spend(
            card=card,
            amount=amount,
            key=f"epurchase:{terminal.pk}:{key}",
            actor=terminal.device.name,
            device=terminal.device,
            data={"game": game.pk, "cards": count},
        )
        purchase = Purchase.objects.create(
            game=game,
            terminal=terminal,
            player_card=card,
            key=key,
            cards=count,
            amount=amount,
            seed=seed.hex(),
            transaction=move.transaction,
            created_at=timezone.now(),
        )
        ECard.objects.bulk_create(
            ECard(game=game, purchase=purchase, position=i, cells=bytes(cells))
            for i, cells in enumerate(rules.layout.deal(seed, count), start=1)
        )
    return purchase


def close_sales(game: ElectronicGame, *, at: datetime | None = None) -> ElectronicGame:
    """Count the sales, fund the pools (one contribution per pool and game), fix the terms, draw."""
    rules = rules_of(game.version)
    sold = Purchase.objects.filter(game=game).aggregate(cards=Sum("cards"), total=Sum("amount"))
    cards, total = sold["cards"] or 0, sold["total"] or money.ZERO
    pools = list(SpecialityPool.objects.filter(speciality_id=game.speciality_id).order_by("pool_id"))
    with transaction.atomic():
        if cards and pools:
            lock_pools([p.pool_id for p in pools])
            contributions.contribute_pools(
                items=[
                    (
                        p.pool_id,
                        ContributionItem(
                            source=PoolSource.of("especiality", game.speciality_id).at("egame", game.pk),
                            bet=total,
                            idempotency_key=f"egame:{game.pk}",
                        ),
                    )
                    for p in pools
                ],
                actor=ACTOR,
            )
        terms = fix_terms(rules, sales=total, cards=cards)
        game.cards_sold = cards
        game.sales_total = total
        game.terms = terms_json(terms)
        game.sales_closed_at = at or timezone.now()
        game.state = EGameState.DRAWING if cards else EGameState.CLOSED
        if not cards:
            game.closed_at = game.sales_closed_at
        game.save()
    return game


@dataclass
class Played:
    game: ElectronicGame
    balls: list[int]
    decisions: list[Decision] = field(default_factory=list)


def ball_order(seed: int, max_number: int = 90) -> list[int]:
    """A known ball sequence (the test's, not the product's RNG)."""
    return random.Random(seed).sample(range(1, max_number + 1), max_number)


def draw(game: ElectronicGame, balls: list[int], *, at: datetime | None = None) -> Played:
    """Draw `balls` in order until the game is over: every prize decided and paid as the design says."""
    rules = rules_of(game.version)
    from bingo.electronic.prizetable import terms_from_json

    terms = terms_from_json(game.terms)
    rows = list(ECard.objects.filter(game=game).order_by("id").values_list("id", "cells"))
    ids = [r[0] for r in rows]
    cells = [list(bytes(r[1])) for r in rows]
    index = detector.PatternIndex(
        rules.layout, ids, cells or [[0] * rules.layout.cells][:0], rules.patterns()
    )
    names = {p.code: p.name for p in rules.prizes}
    decided: set[str] = set()
    played = Played(game=game, balls=[])
    start = at or timezone.now()
    for ordinal, ball in enumerate(balls, start=1):
        drawn_at = start + timedelta(seconds=ordinal)
        result = index.apply(ball)
        decisions = decide(
            terms,
            ordinal=ordinal,
            ball=ball,
            completed={k: [int(x) for x in v] for k, v in result.completed.items()},
            decided=decided,
        )
        # One transaction per write here (the engine takes every lock first, then writes, in one).
        with transaction.atomic():
            EBall.objects.create(game=game, ordinal=ordinal, number=ball, drawn_at=drawn_at)
        for decision in decisions:
            _award(game, decision, terms.prize(decision.code), names[decision.code], drawn_at)
            decided.add(decision.code)
        with transaction.atomic():
            played.balls.append(ball)
            played.decisions.extend(decisions)
            bingo = bool(result.of("full").size)
            over = game_over(terms, ordinal=ordinal, bingo_made=bingo)
            game.balls_drawn = ordinal
            game.last_ball_at = drawn_at
            game.decided = sorted(decided)
            if over:
                game.state = EGameState.CLOSED
                game.closed_at = drawn_at
            game.save()
        if over:
            break
    return played


def _award(game: ElectronicGame, decision: Decision, prize_terms: object, name: str, at: datetime) -> EPrize:
    from bingo.electronic.prizetable import PrizeTerms

    assert isinstance(prize_terms, PrizeTerms)
    venue_id = game.speciality.venue_id
    pool_id = None
    settlement_id = None
    tx = None
    share = remainder = amount = money.ZERO
    winners = list(decision.winners)
    if prize_terms.type in POOL_TYPES:
        pool_id = SpecialityPool.objects.get(
            speciality_id=game.speciality_id, prize_code=decision.code
        ).pool_id
    if winners:
        by_card = dict(ECard.objects.filter(pk__in=winners).values_list("pk", "purchase__player_card_id"))
        if pool_id is not None:
            from jackpots.models import PoolLevel

            with transaction.atomic():
                lock_pools([pool_id])
                amount = money.cents_down(pool_meter(pool_id).levels[0].amount)
                shares = split(amount, len(winners))
                share, remainder = shares.share, shares.remainder
                result = awards.award_level(
                    level=PoolLevel.objects.get(pool_id=pool_id, position=0),
                    amount=shares.total(len(winners)),
                    winner={"source": f"egame:{game.pk}", "hand": decision.code},
                    idempotency_key=f"egame:{game.pk}/prize:{decision.code}",
                    actor=ACTOR,
                )
            settlement_id = result.settlement_id
            source = books.venue_account(venue_id, Kind.POOL_FUNDING)
        else:
            assert prize_terms.amount is not None
            amount = prize_terms.amount
            shares = split(amount, len(winners))
            share, remainder = shares.share, shares.remainder
            source = books.venue_account(venue_id, Kind.SALES)
        credits: dict[int, Decimal] = {}
        for card_id in winners:
            account = books.card_account(PlayerCard.objects.get(pk=by_card[card_id])).pk
            credits[account] = credits.get(account, money.ZERO) + share
        if share:
            with transaction.atomic():
                tx = books.post(
                    venue_id=venue_id,
                    kind=TxKind.PRIZE_AWARD,
                    key=f"eprize:{game.pk}:{decision.code}",
                    legs=[ledger.debit(source.pk, share * len(winners))]
                    + [ledger.credit(a, v) for a, v in sorted(credits.items())],
                    actor=ACTOR,
                    data={"game": game.pk, "prize": decision.code},
                ).transaction
    elif prize_terms.amount is not None:
        amount = prize_terms.amount
    prize = EPrize.objects.create(
        game=game,
        code=decision.code,
        type=str(prize_terms.type),
        name=name,
        ordinal=decision.ordinal,
        won=bool(winners),
        winners=len(winners),
        amount=amount,
        share=share,
        remainder=remainder,
        pool_id=pool_id,
        settlement_id=settlement_id,
        transaction=tx,
        decided_at=at,
    )
    if winners:
        purchases = dict(ECard.objects.filter(pk__in=winners).values_list("pk", "purchase_id"))
        EWin.objects.bulk_create(
            EWin(prize=prize, card_id=c, purchase_id=purchases[c], amount=share) for c in winners
        )
    return prize


def sold(game: ElectronicGame) -> tuple[int, Decimal]:
    """The game's cards and amount from its purchases (what the archive must agree with)."""
    row = Purchase.objects.filter(game=game).aggregate(n=Count("id"), cards=Sum("cards"), total=Sum("amount"))
    return row["cards"] or 0, row["total"] or money.ZERO
