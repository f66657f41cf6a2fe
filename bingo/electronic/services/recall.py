"""The archive of electronic bingo (R-01, R-03): a game recalled whole, and one terminal's (or one player
card's) part of a game recalled with its cards, marks, prizes and ledger entries.

Read-only. Sized for 100,000 cards a game: the game recall summarises purchases and cards (totals, one
line per terminal) and lists them a page at a time (keyset on id); the terminal recall reads only that
terminal's purchases (index game, terminal) and their cards, never the game's others. Every amount is the
exact text of a Decimal; every instant ISO 8601.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum
from django.utils.translation import gettext as _

from bingo.draws import services as draws
from bingo.electronic.models import (
    EBall,
    ECard,
    ElectronicGame,
    EPrize,
    EWin,
    Purchase,
    SpecialityPool,
    Terminal,
)
from bingo.electronic.services import readmodels
from bingo.electronic.services.steps import rules_of
from halls import money
from halls.cashier.models import LedgerTransaction, Leg, PlayerCard
from halls.errors import InvalidInput
from jackpots.models import Award, Contribution, PoolSettlement

ZERO = money.ZERO
PAGE = 200  # purchases or cards a page, by default
MAX_PAGE = 1000
WINS_SHOWN = 500  # a prize's winning cards listed at most (its `winners` counts them all)


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _money(value: Decimal | None) -> str | None:
    return money.text(value)


def card_cells(cells: bytes | memoryview) -> list[int]:
    """A card's cell values in the layout's order (0 = the free cell), from its stored bytes."""
    return list(bytes(cells))


def page_size(limit: Any) -> int:
    """The page size asked for, or a 400 naming the problem."""
    if limit is None or limit == "":
        return PAGE
    try:
        size = int(limit)
    except (TypeError, ValueError):
        size = 0
    if not 1 <= size <= MAX_PAGE:
        raise InvalidInput(
            _("A page holds from 1 to %(max)s rows.") % {"max": MAX_PAGE}, code="bad_limit", field="limit"
        )
    return size


# --- the whole game ---------------------------------------------------------------------------------------


def game_head(game: ElectronicGame) -> dict[str, Any]:
    """What identifies a game and what it played for."""
    speciality = game.speciality
    return {
        "id": game.pk,
        "speciality": {
            "id": speciality.pk,
            "code": speciality.code,
            "name": speciality.name,
            "family": speciality.family,
            "room": speciality.room_id,
        },
        "number": game.number,
        "state": game.state,
        "version": {
            "number": game.version.number,
            "authorisation_ref": game.version.authorisation_ref,
            "effective_from": _at(game.version.effective_from),
        },
        "session": game.session_id,
        "created_at": _at(game.created_at),
        "sales_close_at": _at(game.sales_close_at),
        "sales_closed_at": _at(game.sales_closed_at),
        "last_ball_at": _at(game.last_ball_at),
        "closed_at": _at(game.closed_at),
        "cards_sold": game.cards_sold,
        "sales_total": _money(game.sales_total),
        "balls_drawn": game.balls_drawn,
        "terms": game.terms,
    }


def draw_record(game: ElectronicGame, drawn: list[int]) -> dict[str, Any] | None:
    """The game's verifiable draw (issue 28): its commitment, sales digest and, once revealed, its seed and
    the server's own check of the balls drawn against them (None: drawn without commitment)."""
    shown = readmodels.game_draw(game.pk)
    if shown is None:
        return None
    verification = None
    if shown["seed"]:
        found = draws.check(room=readmodels.DRAW_ROOM, game_ref=str(game.pk), drawn=drawn)
        verification = {"verified": found.verified, "reason": found.reason, "text": str(found)}
    return {**shown, "verification": verification}


def balls_of(game: ElectronicGame) -> list[dict[str, Any]]:
    return [
        {"ordinal": ordinal, "ball": number, "drawn_at": _at(at)}
        for ordinal, number, at in EBall.objects.filter(game=game)
        .order_by("ordinal")
        .values_list("ordinal", "number", "drawn_at")
    ]


def _legs(
    transaction_ids: Iterable[int], *, accounts: set[int] | None = None
) -> dict[int, list[dict[str, Any]]]:
    """Per transaction, its legs (account code and kind, signed amount: + debit, - credit); only those on
    `accounts` when named."""
    legs: dict[int, list[dict[str, Any]]] = {}
    rows = Leg.objects.filter(transaction_id__in=list(transaction_ids))
    if accounts is not None:
        rows = rows.filter(account_id__in=accounts)
    for tx, account, code, kind, amount in rows.order_by("transaction_id", "id").values_list(
        "transaction_id", "account_id", "account__code", "account__kind", "amount"
    ):
        legs.setdefault(tx, []).append(
            {"account": account, "code": code, "kind": kind, "amount": _money(amount)}
        )
    return legs


def _transactions(ids: Iterable[int], legs: dict[int, list[dict[str, Any]]]) -> dict[int, dict[str, Any]]:
    return {
        t.pk: {
            "id": t.pk,
            "kind": t.kind,
            "key": t.key,
            "created_at": _at(t.created_at),
            "actor": t.actor_label,
            "device": t.device,
            "legs": legs.get(t.pk, []),
        }
        for t in LedgerTransaction.objects.filter(pk__in=list(ids)).order_by("pk")
    }


def _settlements(prizes: Sequence[EPrize]) -> dict[int, dict[str, Any]]:
    """The pool engine's settlement of each pool prize won: the meter before and after, the reset from
    the reserve (AB-11) and what each award paid."""
    ids = [p.settlement_id for p in prizes if p.settlement_id]
    paid: dict[int, list[dict[str, Any]]] = {}
    for a in Award.objects.filter(settlement_id__in=ids).order_by("settlement_id", "order"):
        paid.setdefault(a.settlement_id, []).append(
            {
                "order": a.order,
                "amount": _money(a.amount),
                "from_meter": _money(a.from_meter),
                "from_operator": _money(a.from_operator),
            }
        )
    return {
        s.pk: {
            "id": s.pk,
            "pool": s.pool_id,
            "level": s.level_id,
            "meter_before": _money(s.meter_before),
            "meter_after_payouts": _money(s.meter_after_payouts),
            "meter_after": _money(s.meter_after),
            "kept_fraction": _money(s.kept_fraction),
            "reset_from_reserve": _money(s.reset_from_reserve),
            "operator_seed": _money(s.operator_seed),
            "created_at": _at(s.created_at),
            "awards": paid.get(s.pk, []),
        }
        for s in PoolSettlement.objects.filter(pk__in=ids)
    }


def _wins(prize_ids: Sequence[int], *, cards: Sequence[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    """Per prize, its winning cards (at most WINS_SHOWN each for the whole game), with who bought them."""
    rows = EWin.objects.filter(prize_id__in=prize_ids)
    if cards is not None:
        rows = rows.filter(card_id__in=cards)
    found: dict[int, list[dict[str, Any]]] = {}
    for prize, card, purchase, terminal, name, number, amount in rows.order_by(
        "prize_id", "card_id"
    ).values_list(
        "prize_id",
        "card_id",
        "purchase_id",
        "purchase__terminal_id",
        "purchase__terminal__device__name",
        "purchase__player_card__number",
        "amount",
    ):
        wins = found.setdefault(prize, [])
        if cards is None and len(wins) >= WINS_SHOWN:
            continue
        wins.append(
            {
                "card": card,
                "purchase": purchase,
                "terminal": terminal,
                "terminal_name": name,
                "player_card": number,
                "amount": _money(amount),
            }
        )
    return found


def _prize(p: EPrize, ball: int | None) -> dict[str, Any]:
    return {
        "id": p.pk,
        "code": p.code,
        "type": p.type,
        "name": p.name,
        "ordinal": p.ordinal,
        "ball": ball,
        "won": p.won,
        "winners": p.winners,
        "amount": _money(p.amount),
        "share": _money(p.share),
        "paid": _money(p.share * p.winners),
        "remainder": _money(p.remainder),
        "pool": p.pool_id,
        "settlement": p.settlement_id,
        "transaction": p.transaction_id,
        "decided_at": _at(p.decided_at),
    }


def _pool_funding(game: ElectronicGame) -> list[dict[str, Any]]:
    """The game's contribution to each pool of its speciality (one per pool and game, at the close)."""
    pools = dict(
        SpecialityPool.objects.filter(speciality_id=game.speciality_id).values_list("pool_id", "prize_code")
    )
    rows = Contribution.objects.filter(pool_id__in=list(pools), idempotency_key=f"egame:{game.pk}")
    return [
        {
            "pool": c.pool_id,
            "prize": pools[c.pool_id],
            "level": c.level_id,
            "source": c.source,
            "bet": _money(c.bet),
            "to_meter": _money(c.to_meter),
            "to_reserve": _money(c.to_reserve),
            "house": _money(c.house),
            "created_at": _at(c.created_at),
        }
        for c in rows.order_by("pool_id", "level_id")
    ]


def game_recall(game: ElectronicGame, *, limit: int = PAGE) -> dict[str, Any]:
    """The whole record of a game (R-01): what it played for, its sales summed (and per terminal), the
    first page of its purchases, every ball with its time, every prize decided with its winners, shares,
    remainder and ledger transaction, each pool's funding and settlement, and whether the figures agree
    (the purchases' sum is the game's sales; the wins' sum is what the prize transactions credited)."""
    sales = Purchase.objects.filter(game=game).aggregate(
        n=Count("id"), cards=Sum("cards"), amount=Sum("amount"), terminals=Count("terminal", distinct=True)
    )
    by_terminal = [
        {
            "terminal": row["terminal_id"],
            "name": row["terminal__device__name"],
            "purchases": row["n"],
            "cards": row["cards"],
            "amount": _money(row["amount"]),
        }
        for row in Purchase.objects.filter(game=game)
        .values("terminal_id", "terminal__device__name")
        .annotate(n=Count("id"), cards=Sum("cards"), amount=Sum("amount"))
        .order_by("terminal_id")
    ]
    balls = balls_of(game)
    number_at = {b["ordinal"]: b["ball"] for b in balls}
    prizes = list(EPrize.objects.filter(game=game).order_by("ordinal", "id"))
    wins = _wins([p.pk for p in prizes])
    tx_ids = [p.transaction_id for p in prizes if p.transaction_id]
    transactions = _transactions(tx_ids, _legs(tx_ids))
    settlements = _settlements(prizes)
    credited = sum(
        (
            -Decimal(leg["amount"])
            for t in transactions.values()
            for leg in t["legs"]
            if Decimal(leg["amount"]) < 0
        ),
        ZERO,
    )
    won_total = EWin.objects.filter(prize__game=game).aggregate(total=Sum("amount"))["total"] or ZERO
    spent = (
        Leg.objects.filter(transaction__in=Purchase.objects.filter(game=game).values("transaction_id"))
        .filter(amount__gt=0)
        .aggregate(total=Sum("amount"))["total"]
        or ZERO
    )
    purchases_amount = sales["amount"] or ZERO
    return {
        "game": game_head(game),
        "sales": {
            "purchases": sales["n"],
            "cards": sales["cards"] or 0,
            "amount": _money(purchases_amount),
            "terminals": sales["terminals"],
            "by_terminal": by_terminal,
        },
        "purchases": purchases_page(game, after=None, limit=limit),
        "cards": {"count": ECard.objects.filter(game=game).count()},
        "balls": balls,
        "prizes": [
            {
                **_prize(p, number_at.get(p.ordinal)),
                "wins": wins.get(p.pk, []),
                "pool_settlement": settlements.get(p.settlement_id) if p.settlement_id else None,
                "ledger": transactions.get(p.transaction_id) if p.transaction_id else None,
            }
            for p in prizes
        ],
        "pool_funding": _pool_funding(game),
        "draw": draw_record(game, [b["ball"] for b in balls]),
        "checks": {
            "purchases_match_sales": purchases_amount == game.sales_total
            and (sales["cards"] or 0) == game.cards_sold,
            "ledger_spends": _money(spent),
            "ledger_spends_match": spent == purchases_amount,
            "prizes_won": _money(won_total),
            "ledger_credited": _money(credited),
            "ledger_prizes_match": credited == won_total,
        },
    }


def purchases_page(game: ElectronicGame, *, after: int | None, limit: int = PAGE) -> dict[str, Any]:
    """One page of the game's purchases in id order, from just after purchase `after`, with their ledger
    transaction (the card spend)."""
    rows = Purchase.objects.filter(game=game)
    if after is not None:
        rows = rows.filter(pk__gt=after)
    page = list(
        rows.order_by("pk").values_list(
            "pk",
            "terminal_id",
            "terminal__device__name",
            "player_card__number",
            "key",
            "cards",
            "amount",
            "seed",
            "transaction_id",
            "created_at",
        )[: limit + 1]
    )
    more = len(page) > limit
    page = page[:limit]
    return {
        "next": page[-1][0] if more else None,
        "results": [
            {
                "id": pk,
                "terminal": terminal,
                "terminal_name": name,
                "player_card": number,
                "key": key,
                "cards": cards,
                "amount": _money(amount),
                "seed": seed,
                "transaction": tx,
                "created_at": _at(at),
            }
            for pk, terminal, name, number, key, cards, amount, seed, tx, at in page
        ],
    }


def cards_page(game: ElectronicGame, *, after: int | None, limit: int = PAGE) -> dict[str, Any]:
    """One page of the game's cards in id order, from just after card `after`: cells, purchase, terminal,
    and the prizes each won."""
    rows = ECard.objects.filter(game=game)
    if after is not None:
        rows = rows.filter(pk__gt=after)
    page = list(
        rows.order_by("pk").values_list(
            "pk", "purchase_id", "position", "cells", "purchase__terminal_id", "purchase__player_card__number"
        )[: limit + 1]
    )
    more = len(page) > limit
    page = page[:limit]
    won: dict[int, list[dict[str, Any]]] = {}
    for card, code, ordinal, amount in EWin.objects.filter(card_id__in=[r[0] for r in page]).values_list(
        "card_id", "prize__code", "prize__ordinal", "amount"
    ):
        won.setdefault(card, []).append({"code": code, "ordinal": ordinal, "amount": _money(amount)})
    return {
        "count": ECard.objects.filter(game=game).count() if after is None else None,
        "next": page[-1][0] if more else None,
        "results": [
            {
                "id": pk,
                "purchase": purchase,
                "position": position,
                "cells": card_cells(cells),
                "terminal": terminal,
                "player_card": number,
                "won": won.get(pk, []),
            }
            for pk, purchase, position, cells, terminal, number in page
        ],
    }


# --- one terminal's (or one player card's) part of a game ------------------------------------------------


def terminal_recall(
    game: ElectronicGame, *, terminal: Terminal | None = None, player_card: PlayerCard | None = None
) -> dict[str, Any]:
    """A terminal game recall: for one terminal (or one player card, or both) and one game, its purchases,
    its cards with their cells, the balls, which of its cells each ball marked (and per card the ordinal
    that marked each cell: 0 for the free cell, None if never), the prizes its cards won, and the ledger
    entries of its purchases and prizes (the legs on its cards' accounts, and the prize's debit)."""
    if terminal is None and player_card is None:
        raise InvalidInput(_("Name a terminal or a player card."), code="no_subject")
    purchases = Purchase.objects.filter(game=game)
    if terminal is not None:
        purchases = purchases.filter(terminal=terminal)
    if player_card is not None:
        purchases = purchases.filter(player_card=player_card)
    bought = list(
        purchases.order_by("pk").values_list(
            "pk",
            "terminal_id",
            "terminal__device__name",
            "player_card_id",
            "player_card__number",
            "key",
            "cards",
            "amount",
            "seed",
            "transaction_id",
            "created_at",
        )
    )
    purchase_ids = [row[0] for row in bought]
    cards = list(
        ECard.objects.filter(purchase_id__in=purchase_ids)
        .order_by("pk")
        .values_list("pk", "purchase_id", "position", "cells")
    )
    balls = balls_of(game)
    ordinal_of = {b["ball"]: b["ordinal"] for b in balls}
    layout = rules_of(game.version).layout
    marks: dict[int, list[dict[str, Any]]] = {}
    shown_cards = []
    for pk, purchase, position, cells in cards:
        values = card_cells(cells)
        marked_at: list[int | None] = []
        for p, n in enumerate(values):
            if layout.free >> p & 1:
                marked_at.append(0)
                continue
            at = ordinal_of.get(n)
            marked_at.append(at)
            if at is not None:
                marks.setdefault(at, []).append({"card": pk, "cell": p})
        shown_cards.append(
            {
                "id": pk,
                "purchase": purchase,
                "position": position,
                "cells": values,
                "grid": layout.grid(values),
                "marked_at": marked_at,
            }
        )
    card_ids = [c[0] for c in cards]
    win_rows = list(
        EWin.objects.filter(card_id__in=card_ids)
        .select_related("prize")
        .order_by("prize__ordinal", "prize_id", "card_id")
    )
    card_accounts = set(
        PlayerCard.objects.filter(pk__in={row[3] for row in bought})
        .exclude(account__isnull=True)
        .values_list("account__pk", flat=True)
    )
    purchase_txs = [row[9] for row in bought]
    prize_txs = sorted({w.prize.transaction_id for w in win_rows if w.prize.transaction_id})
    legs = _legs(purchase_txs)
    # A prize's transaction credits every winner: show this subject's legs and the debit that paid them.
    prize_legs = _legs(prize_txs)
    for tx, rows in prize_legs.items():
        legs[tx] = [leg for leg in rows if leg["account"] in card_accounts or Decimal(leg["amount"]) > 0]
    transactions = _transactions([*purchase_txs, *prize_txs], legs)
    spent = sum((row[7] for row in bought), ZERO)
    won = sum((w.amount for w in win_rows), ZERO)
    return {
        "game": game_head(game),
        "terminal": None
        if terminal is None
        else {"id": terminal.pk, "name": terminal.device.name, "state": terminal.state},
        "player_card": None if player_card is None else player_card.number,
        "purchases": [
            {
                "id": pk,
                "terminal": t,
                "terminal_name": name,
                "player_card": number,
                "key": key,
                "cards": n,
                "amount": _money(amount),
                "seed": seed,
                "transaction": tx,
                "created_at": _at(at),
            }
            for pk, t, name, _card, number, key, n, amount, seed, tx, at in bought
        ],
        "cards": shown_cards,
        "balls": [{**b, "marks": marks.get(b["ordinal"], [])} for b in balls],
        "draw": draw_record(game, [b["ball"] for b in balls]),
        "wins": [
            {
                "prize": w.prize.code,
                "name": w.prize.name,
                "type": w.prize.type,
                "ordinal": w.prize.ordinal,
                "card": w.card_id,
                "purchase": w.purchase_id,
                "amount": _money(w.amount),
                "winners": w.prize.winners,
                "share": _money(w.prize.share),
                "transaction": w.prize.transaction_id,
            }
            for w in win_rows
        ],
        "ledger": [transactions[t] for t in sorted(transactions)],
        "totals": {
            "purchases": len(bought),
            "cards": len(cards),
            "spent": _money(spent),
            "won": _money(won),
            "net": _money(won - spent),
        },
    }


def terminal_games(terminal: Terminal, *, limit: int = 20) -> list[int]:
    """The last games a terminal bought cards in (ids, newest first)."""
    return list(
        Purchase.objects.filter(terminal=terminal)
        .values_list("game_id", flat=True)
        .order_by("-game_id")
        .distinct()[:limit]
    )
