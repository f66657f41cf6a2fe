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

from django.db import connection
from django.utils import timezone

from bingo.electronic.models import (
    ECard,
    ElectronicGame,
    EPrize,
    EWin,
    Purchase,
    SpecialityPool,
    terminal_stream,
)
from bingo.electronic.prizetable import POOL_TYPES, Decision, Rules, Terms, split
from bingo.electronic.services import stepsql
from bingo.electronic.services.steps import Told, estep
from halls import money
from halls.actors import Actor
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts_where
from halls.eventtypes import EGamePrize, EventType, TerminalBalance, TerminalPrize
from halls.locks import Rank, take_many
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
    accounts: dict[int, Account] = field(default_factory=dict)  # every account locked, as read


def prepare(game: ElectronicGame, rules: Rules, decisions: Sequence[Decision]) -> Prepared:
    """Lock what paying `decisions` takes (the caller holds the game): the won pools, then the winners'
    card accounts (id order), then the venue's accounts. Reads, no writes that audit."""
    prepared = Prepared(decisions=list(decisions))
    codes = {d.code for d in decisions if rules.prize(d.code).type in POOL_TYPES}
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
    kinds = []
    if any(d.code not in prepared.pools for d in won):
        kinds.append(Kind.SALES)
    if any(d.code in prepared.pools for d in won):
        kinds.append(Kind.POOL_FUNDING)
    venue_id = game.speciality.venue_id
    found = _lock_in_one(game, cards, venue_id, kinds) or _lock_one_by_one(game, cards, venue_id, kinds)
    rows, accounts, venue = found
    prepared.accounts = accounts
    prepared.balances = {pk: accounts[pk].balance for pk in {row[3] for row in rows}}
    prepared.holders = {
        card: Holder(card=card, purchase=purchase, terminal=terminal, player_card=player, account=account)
        for card, purchase, terminal, account, player in rows
    }
    prepared.sales_account = venue.get(Kind.SALES)
    prepared.funding_account = venue.get(Kind.POOL_FUNDING)
    return prepared


# (card, purchase, terminal, account, player card) of each winning card; the accounts locked; kind -> id
Locked = tuple[list[tuple[int, int, int, int, int]], dict[int, Account], dict[Kind, int]]


def _lock_in_one(game: ElectronicGame, cards: list[int], venue_id: int, kinds: list[Kind]) -> Locked | None:
    """The winning cards' holders read and their card accounts then the venue's accounts of `kinds` locked
    (each in id order), in one statement; None when one is missing (a card not of the game, an account not
    made yet): `_lock_one_by_one` then."""
    account, card, purchase = (m._meta.db_table for m in (Account, ECard, Purchase))
    codes = [k.value for k in kinds]
    marks = ", ".join(["%s"] * len(cards))
    code_marks = ", ".join(["%s"] * len(codes))
    lock = " FOR NO KEY UPDATE OF a" if connection.features.has_select_for_update_of else ""
    sql = (
        f"SELECT a.*, c.id AS won_card, c.purchase_id AS won_purchase, p.terminal_id AS won_terminal "  # noqa: S608 (models' tables)
        f"FROM {account} a LEFT JOIN ({card} c JOIN {purchase} p ON p.id = c.purchase_id) "
        f"ON p.player_card_id = a.card_id AND c.game_id = %s AND c.id IN ({marks}) "
        f"WHERE a.id IN (SELECT a2.id FROM {card} c2 JOIN {purchase} p2 ON p2.id = c2.purchase_id "
        f"JOIN {account} a2 ON a2.card_id = p2.player_card_id AND a2.kind = %s "
        f"WHERE c2.game_id = %s AND c2.id IN ({marks}) "
        f"UNION ALL SELECT a3.id FROM {account} a3 WHERE a3.venue_id = %s AND a3.code IN ({code_marks})) "
        f"ORDER BY a.card_id IS NULL, a.id{lock}"
    )
    params = [game.pk, *cards, Kind.PLAYER_CARD.value, game.pk, *cards, venue_id, *codes]
    found = list(Account.objects.raw(sql, params))
    accounts = {a.pk: a for a in found}
    take_many(Rank.ACCOUNT, list(accounts))  # the order they were locked in: the cards', then the venue's
    rows = sorted(
        {
            (int(won), int(a.won_purchase), int(a.won_terminal), a.pk, int(a.card_id or 0))  # type: ignore[attr-defined]
            for a in found
            if (won := getattr(a, "won_card", None)) is not None
        }
    )
    venue = {Kind(a.code): a.pk for a in found if a.card_id is None and a.code in codes}
    if len(rows) != len(cards) or len(venue) != len(codes):
        return None
    return rows, accounts, venue


def _lock_one_by_one(game: ElectronicGame, cards: list[int], venue_id: int, kinds: list[Kind]) -> Locked:
    """`_lock_in_one` making what is missing: the holders read, the card accounts locked, the venue's."""
    rows = list(
        ECard.objects.filter(game=game, pk__in=cards).values_list(
            "pk", "purchase_id", "purchase__terminal_id", "purchase__player_card_id"
        )
    )
    if len(rows) != len(cards):
        raise ValueError(f"electronic game {game.pk}: a winning card is not a card of the game")
    by_card = _lock_card_accounts({row[3] for row in rows})
    venue = _lock_venue_accounts(venue_id, kinds)
    accounts = {a.pk: a for a in by_card.values()}
    accounts.update({a.pk: a for a in Account.objects.filter(pk__in=venue.values())})
    holders = [(c, p, t, by_card[player].pk, player) for c, p, t, player in rows]
    return holders, accounts, venue


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
        # The accounts are locked (prepare) and the keys are the step's own (the game's lock and its ball):
        # nothing read or locked again.
        posted = books.post_many(
            venue_id=venue_id,
            postings=[paid.postings[i] for i in order],
            audit_first=told.entries,
            held=prepared.accounts,
            new_keys=True,
        )
        told.entries = []
        for i, result in zip(order, posted, strict=True):
            paid.rows[i].transaction = result.transaction
    wins = [
        EWin(prize=row, card_id=card, purchase_id=prepared.holders[card].purchase, amount=row.share)
        for i, row in enumerate(paid.rows)
        if row.share > 0
        for card in paid.winners.get(i, ())
    ]
    stepsql.save_prizes(paid.rows, wins)
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
