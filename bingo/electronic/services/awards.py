"""What a ball decides, paid: a row per prize decided (won or not), the money, each winning card's share.

- A sales prize (line, bingo, figure, golden ball, auto line, auto bingo): ONE ledger transaction per prize,
  PRIZE_AWARD, key "eprize:<game>:<code>": the venue's sales debited share x winners, each winning card's
  player-card account credited its share (legs merged per account). The remainder stays in sales.
- A pool prize (accumulated, super line, super bingo, bingo extra): the pool's folded meter shared among the
  winners (`prizetable.split`), `jackpots.services.awards.award_level` of share x winners (the remainder
  stays in the pool; the pool's reserve re-seeds it, AB-11), then PRIZE_AWARD from the venue's pool funding
  to the cards' accounts.

Lock order (halls.locks): the caller holds the game (EGAME); `prepare` takes the won pools' levels (POOL),
then the winners' card accounts in id order, then the venue's sales / pool-funding accounts (ACCOUNT) —
before anything audits (AUDIT_HEAD) or numbers an event (STREAM). A purchase takes its card account then
sales: the same order, no deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.utils import timezone

from bingo.electronic.models import ECard, ElectronicGame, EPrize, EWin, SpecialityPool
from bingo.electronic.prizetable import POOL_TYPES, Decision, Rules, Terms, split
from bingo.electronic.services.common import estep, record
from halls import events, money
from halls.actors import Actor
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts
from halls.eventtypes import EGamePrize, EventType, TerminalBalance, TerminalPrize
from jackpots.models import PoolLevel
from jackpots.services import awards as pool_awards
from jackpots.services import folding
from jackpots.services.locks import lock_pools

ZERO = money.ZERO


@dataclass(frozen=True)
class Holder:
    """Who a winning card pays: its purchase, the terminal that bought it, the player card's account."""

    card: int
    purchase: int
    terminal: int
    player_card: int
    account: int


@dataclass
class Prepared:
    """The decisions of one ball with every lock their payment needs already taken."""

    decisions: list[Decision]
    holders: dict[int, Holder] = field(default_factory=dict)  # card id -> holder
    pools: dict[str, int] = field(default_factory=dict)  # prize code -> pool id (the pool prizes)
    sales_account: int | None = None
    funding_account: int | None = None


def prepare(game: ElectronicGame, decisions: Sequence[Decision]) -> Prepared:
    """Lock what paying `decisions` takes (the caller holds the game): the won pools, then the winners'
    card accounts (id order), then the venue's accounts. Reads, no writes that audit."""
    prepared = Prepared(decisions=list(decisions))
    codes = {d.code for d in decisions}
    if codes:
        prepared.pools = dict(
            SpecialityPool.objects.filter(speciality_id=game.speciality_id, prize_code__in=codes).values_list(
                "prize_code", "pool_id"
            )
        )
    won = [d for d in decisions if d.won]
    if not won:
        return prepared
    lock_pools(prepared.pools[d.code] for d in won if d.code in prepared.pools)
    cards = sorted({card for d in won for card in d.winners})
    rows = list(
        ECard.objects.filter(game=game, pk__in=cards).values_list(
            "pk", "purchase_id", "purchase__terminal_id", "purchase__player_card_id"
        )
    )
    if len(rows) != len(cards):
        raise ValueError(f"electronic game {game.pk}: a winning card is not a card of the game")
    accounts = _card_accounts({row[3] for row in rows})
    lock_accounts(accounts.values())
    prepared.holders = {
        card: Holder(
            card=card, purchase=purchase, terminal=terminal, player_card=player, account=accounts[player]
        )
        for card, purchase, terminal, player in rows
    }
    venue_id = game.speciality.venue_id
    venue_accounts = []
    if any(d.code not in prepared.pools for d in won):
        prepared.sales_account = books.venue_account(venue_id, Kind.SALES).pk
        venue_accounts.append(prepared.sales_account)
    if any(d.code in prepared.pools for d in won):
        prepared.funding_account = books.venue_account(venue_id, Kind.POOL_FUNDING).pk
        venue_accounts.append(prepared.funding_account)
    lock_accounts(venue_accounts)
    return prepared


def _card_accounts(player_cards: set[int]) -> dict[int, int]:
    """Player card id -> its ledger account id (made by its first cash-in; made here if somehow not)."""
    found = dict(
        Account.objects.filter(card_id__in=player_cards, kind=Kind.PLAYER_CARD).values_list("card_id", "pk")
    )
    for card in PlayerCard.objects.filter(pk__in=player_cards - set(found)):
        found[card.pk] = books.card_account(card).pk
    return found


def pay(game: ElectronicGame, rules: Rules, terms: Terms, prepared: Prepared, actor: Actor) -> list[EPrize]:
    """Write and pay every decision (in the prize table's order), tell the room and the winning terminals."""
    now = timezone.now()
    rows = []
    wins: list[EWin] = []
    for decision in prepared.decisions:
        prize, won_rows = _one(game, rules, terms, prepared, decision, actor, now)
        rows.append(prize)
        wins.extend(won_rows)
    EWin.objects.bulk_create(wins)
    _tell_terminals(game, rules, rows, wins, prepared)
    return rows


def _one(
    game: ElectronicGame,
    rules: Rules,
    terms: Terms,
    prepared: Prepared,
    decision: Decision,
    actor: Actor,
    now: Any,
) -> tuple[EPrize, list[EWin]]:
    spec = rules.prize(decision.code)
    announced = terms.prize(decision.code)
    pool_id = prepared.pools.get(decision.code) if spec.type in POOL_TYPES else None
    winners = decision.winners
    amount = share = remainder = ZERO
    settlement = None
    posted = None
    if winners:
        level = None
        if pool_id is not None:
            folding.fold(pool_id)  # its levels are locked (prepare): the meter as it stands now
            level = PoolLevel.objects.get(pool_id=pool_id, position=0)
            amount = money.cents_down(level.amount)
            parts = split(level.amount, len(winners))
        else:
            amount = announced.amount or ZERO
            parts = split(amount, len(winners))
        share = parts.share
        total = parts.total(len(winners))
        remainder = amount - total
        if total > 0:
            if level is not None:
                result = pool_awards.award_level(
                    level=level,
                    amount=total,
                    winner={
                        "source": f"especiality:{game.speciality_id}/egame:{game.pk}",
                        "hand": f"egame:{game.pk}",
                        "category": decision.code,
                        "label": f"{spec.name} · {game.number}",
                        "cards": list(winners),
                        "ordinal": decision.ordinal,
                    },
                    idempotency_key=f"egame:{game.pk}/prize:{decision.code}",
                    actor=actor,
                )
                settlement = result.settlement_id
            source = prepared.funding_account if level is not None else prepared.sales_account
            assert source is not None  # prepare found the account of every won prize
            posted = books.post(
                venue_id=game.speciality.venue_id,
                kind=TxKind.PRIZE_AWARD,
                key=f"eprize:{game.pk}:{decision.code}",
                legs=[ledger.debit(source, total)]
                + [ledger.credit(prepared.holders[card].account, share) for card in winners],
                actor=actor,
                memo=f"{spec.name} · {game.speciality.name} {game.number}"[:200],
                data={"egame": game.pk, "prize": decision.code, "ordinal": decision.ordinal},
            ).transaction
    row = EPrize.objects.create(
        game=game,
        code=decision.code,
        type=str(spec.type),
        name=spec.name,
        ordinal=decision.ordinal,
        won=bool(winners),
        winners=len(winners),
        amount=amount,
        share=share,
        remainder=remainder,
        pool_id=pool_id,
        settlement_id=settlement,
        transaction=posted,
        decided_at=now,
    )
    wins = [
        EWin(prize=row, card_id=card, purchase_id=prepared.holders[card].purchase, amount=share)
        for card in winners
        if share > 0
    ]
    public = prize_payload(game, row)
    record(
        game,
        actor,
        EventType.EGAME_PRIZE,
        {**public, "cards": list(winners), "remainder": remainder, "pool": pool_id, "settlement": settlement},
        public,
    )
    return row, wins


def prize_payload(game: ElectronicGame, prize: EPrize) -> EGamePrize:
    return EGamePrize(
        **estep(game),
        code=prize.code,
        name=prize.name,
        type=prize.type,
        ordinal=prize.ordinal,
        won=prize.won,
        winners=prize.winners,
        amount=prize.amount,
        share=prize.share,
    )


def _tell_terminals(
    game: ElectronicGame, rules: Rules, prizes: list[EPrize], wins: list[EWin], prepared: Prepared
) -> None:
    """Each winning card's prize on its terminal's stream, then the player cards' balances there."""
    if not wins:
        return
    accounts = {h.account for h in prepared.holders.values()}
    balances = dict(Account.objects.filter(pk__in=accounts).values_list("pk", "balance"))
    by_prize = {p.pk: p for p in prizes}
    out: list[tuple[str, EventType, Any]] = []
    told: dict[tuple[int, int], Decimal] = {}
    for win in wins:
        holder = prepared.holders[win.card_id]
        prize = by_prize[win.prize_id]
        balance = balances[holder.account]
        out.append(
            (
                f"terminal.{holder.terminal}",
                EventType.TERMINAL_PRIZE,
                TerminalPrize(
                    terminal=holder.terminal,
                    game=game.pk,
                    code=prize.code,
                    name=prize.name,
                    ordinal=prize.ordinal,
                    card=win.card_id,
                    amount=win.amount,
                    balance=balance,
                ),
            )
        )
        told[(holder.terminal, holder.player_card)] = balance
    for (terminal, _card), balance in sorted(told.items()):
        out.append(
            (
                f"terminal.{terminal}",
                EventType.TERMINAL_BALANCE,
                TerminalBalance(terminal=terminal, balance=balance),
            )
        )
    events.emit_many(out)
