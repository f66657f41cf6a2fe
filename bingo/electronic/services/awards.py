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

from bingo.electronic.models import ECard, ElectronicGame, EPrize, EWin, SpecialityPool, terminal_stream
from bingo.electronic.prizetable import POOL_TYPES, Decision, Rules, Terms, split
from bingo.electronic.services.steps import Told, estep
from halls import money
from halls.actors import Actor
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts_where
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
    # The winners' card accounts' balances as locked, moved by the shares `pay` credits: account -> balance.
    balances: dict[int, Decimal] = field(default_factory=dict)


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
    accounts = _lock_card_accounts({row[3] for row in rows})
    prepared.balances = {a.pk: a.balance for a in accounts.values()}
    prepared.holders = {
        card: Holder(
            card=card, purchase=purchase, terminal=terminal, player_card=player, account=accounts[player].pk
        )
        for card, purchase, terminal, player in rows
    }
    kinds = []
    if any(d.code not in prepared.pools for d in won):
        kinds.append(Kind.SALES)
    if any(d.code in prepared.pools for d in won):
        kinds.append(Kind.POOL_FUNDING)
    venue = _lock_venue_accounts(game.speciality.venue_id, kinds)
    prepared.sales_account = venue.get(Kind.SALES)
    prepared.funding_account = venue.get(Kind.POOL_FUNDING)
    return prepared


def _lock_card_accounts(player_cards: set[int]) -> dict[int, Account]:
    """Player card id -> its ledger account, locked (id order; one statement once every card has one: made
    by its first cash-in, made here if somehow not)."""
    found = {a.card_id: a for a in lock_accounts_where(card_id__in=player_cards, kind=Kind.PLAYER_CARD)}
    missing = player_cards - set(found)
    if missing:
        for card in PlayerCard.objects.filter(pk__in=missing):
            books.card_account(card)
        found = {a.card_id: a for a in lock_accounts_where(card_id__in=player_cards, kind=Kind.PLAYER_CARD)}
    return {card: account for card, account in found.items() if card is not None}


def _lock_venue_accounts(venue_id: int, kinds: list[Kind]) -> dict[Kind, int]:
    """The venue's accounts of `kinds` (made on first use), locked after the cards' (id order): kind -> id."""
    if not kinds:
        return {}
    codes = [k.value for k in kinds]
    found = {a.code: a.pk for a in lock_accounts_where(venue_id=venue_id, code__in=codes)}
    if len(found) < len(codes):
        for kind in kinds:
            books.venue_account(venue_id, kind)
        found = {a.code: a.pk for a in lock_accounts_where(venue_id=venue_id, code__in=codes)}
    return {Kind(code): pk for code, pk in found.items()}


@dataclass
class Paid:
    """A ball's prizes decided and their pool awards made; their ledger postings, rows and wins written
    by `settle`."""

    rows: list[EPrize] = field(default_factory=list)
    postings: dict[int, books.Posting] = field(default_factory=dict)  # row index -> its PRIZE_AWARD
    winners: dict[int, tuple[int, ...]] = field(default_factory=dict)  # row index -> winning cards


def pay(
    game: ElectronicGame, rules: Rules, terms: Terms, prepared: Prepared, actor: Actor, told: Told
) -> Paid:
    """Decide and share every decision (in the prize table's order), the pool prizes awarded by the pool
    engine; audit and announce each (kept in `told`). `settle` posts and writes them."""
    now = timezone.now()
    paid = Paid()
    for decision in prepared.decisions:
        _one(game, rules, terms, prepared, decision, actor, now, paid, told)
    return paid


def settle(game: ElectronicGame, prepared: Prepared, paid: Paid, actor: Actor, told: Told) -> list[EPrize]:
    """Post every prize's PRIZE_AWARD in one go with the step's audit entries (`told`), write the prize
    rows and wins, tell the winning terminals, and number the step's events."""
    venue_id = game.speciality.venue_id
    if paid.postings:
        order = sorted(paid.postings)
        posted = books.post_many(
            venue_id=venue_id, postings=[paid.postings[i] for i in order], audit_first=told.entries
        )
        told.entries = []
        for i, result in zip(order, posted, strict=True):
            paid.rows[i].transaction = result.transaction
    EPrize.objects.bulk_create(paid.rows)
    wins = [
        EWin(prize=row, card_id=card, purchase_id=prepared.holders[card].purchase, amount=row.share)
        for i, row in enumerate(paid.rows)
        if row.share > 0
        for card in paid.winners.get(i, ())
    ]
    EWin.objects.bulk_create(wins)
    _tell_terminals(game, paid.rows, wins, prepared, told)
    told.write(venue_id)
    return paid.rows


def _one(
    game: ElectronicGame,
    rules: Rules,
    terms: Terms,
    prepared: Prepared,
    decision: Decision,
    actor: Actor,
    now: Any,
    paid: Paid,
    told: Told,
) -> None:
    spec = rules.prize(decision.code)
    announced = terms.prize(decision.code)
    pool_id = prepared.pools.get(decision.code) if spec.type in POOL_TYPES else None
    winners = decision.winners
    amount = share = remainder = ZERO
    settlement = None
    posting = None
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
            posting = books.Posting(
                kind=TxKind.PRIZE_AWARD,
                key=f"eprize:{game.pk}:{decision.code}",
                legs=[ledger.debit(source, total)]
                + [ledger.credit(prepared.holders[card].account, share) for card in winners],
                actor=actor,
                memo=f"{spec.name} · {game.speciality.name} {game.number}"[:200],
                data={"egame": game.pk, "prize": decision.code, "ordinal": decision.ordinal},
            )
            for card in winners:  # the balance the terminals are told once this is posted
                account = prepared.holders[card].account
                prepared.balances[account] += share
    row = EPrize(
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
        decided_at=now,
    )
    if posting is not None:
        paid.postings[len(paid.rows)] = posting
    paid.winners[len(paid.rows)] = tuple(winners)
    paid.rows.append(row)
    public = prize_payload(game, row)
    told.change(
        game,
        actor,
        EventType.EGAME_PRIZE,
        {**public, "cards": list(winners), "remainder": remainder, "pool": pool_id, "settlement": settlement},
        public,
    )


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
    game: ElectronicGame, prizes: list[EPrize], wins: list[EWin], prepared: Prepared, told: Told
) -> None:
    """Each winning card's prize on its terminal's stream, with its player card's balance once the ball's
    prizes are credited; a TERMINAL_BALANCE only where a terminal's last prize event does not already say
    it (a terminal whose winning cards were bought with several player cards)."""
    if not wins:
        return
    cards: dict[int, set[int]] = {}  # terminal -> the player cards its winning cards were bought with
    last: dict[int, Decimal] = {}  # terminal -> the balance its last prize event carries
    for win in wins:
        holder = prepared.holders[win.card_id]
        prize = win.prize
        balance = prepared.balances[holder.account]
        told.events.append(
            (
                terminal_stream(holder.terminal),
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
        cards.setdefault(holder.terminal, set()).add(holder.player_card)
        last[holder.terminal] = balance
    accounts = {h.player_card: h.account for h in prepared.holders.values()}
    for terminal, players in sorted(cards.items()):
        if len(players) == 1:
            continue  # its prize events carry its one player card's balance
        for player in sorted(players):
            balance = prepared.balances[accounts[player]]
            told.events.append(
                (
                    terminal_stream(terminal),
                    EventType.TERMINAL_BALANCE,
                    TerminalBalance(terminal=terminal, balance=balance),
                )
            )
