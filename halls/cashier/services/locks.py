"""Every lock of the cashier, each through its rank (halls.locks): a shift, a payable, a ticket, a player
card, a player's limit, then the accounts money is taken from and the accounts whose balances a posting
moves.

Every row is locked FOR NO KEY UPDATE (written "FOR UPDATE" below for short): it excludes every other
locker and writer as FOR UPDATE does, but not the FOR KEY SHARE that PostgreSQL's deferred foreign-key
checks take at COMMIT on the rows a transaction's inserts name (a ticket's event names its shift and its
ticket, a leg its account). Those commit-time locks are outside the rank order: with FOR UPDATE, a
transaction committing with the audit chain's head held waited for a shift or a ticket locked by a
transaction that waited, through an account, for that head (issue 30's three-way deadlock of two
cashiers redeeming one ticket). Nothing deletes these rows or changes their keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils.translation import gettext as _

from halls.cashier.ledger import Kind
from halls.cashier.models import Account, Payable, PlayerCard, PlayerLimit, Shift, ShiftState, Ticket
from halls.errors import NotFound
from halls.locks import Rank, take, take_many


def lock_shift(shift_id: int) -> Shift:
    """The shift FOR UPDATE, with its till (every operation at a till holds it, so closing waits for them)."""
    take(Rank.SHIFT, shift_id)
    shift = (
        Shift.objects.select_for_update(of=("self",), no_key=True)
        .select_related("till")
        .filter(pk=shift_id)
        .first()
    )
    if shift is None:
        raise NotFound(_("No shift %(shift)s.") % {"shift": shift_id}, code="unknown_shift")
    return shift


def lock_open_shifts(venue_id: int, cashier_ids: Iterable[int]) -> dict[int, Shift]:
    """The cashiers' open shifts in the venue FOR UPDATE in id order, found and locked in one statement,
    with their tills: cashier id -> shift. A shift closed while this waited for its lock is re-read by
    PostgreSQL under the lock and left out, as one never opened (READ COMMITTED re-checks the WHERE)."""
    rows = list(
        Shift.objects.select_for_update(of=("self",), no_key=True)
        .select_related("till")
        .filter(venue_id=venue_id, cashier_id__in=sorted(set(cashier_ids)), state=ShiftState.OPEN)
        .order_by("pk")
    )
    take_many(Rank.SHIFT, [row.pk for row in rows])  # locked in id order by the statement's ORDER BY
    return {row.cashier_id: row for row in rows}


def lock_payable(payable_id: int) -> Payable:
    take(Rank.PAYABLE, payable_id)
    payable = Payable.objects.select_for_update(of=("self",), no_key=True).filter(pk=payable_id).first()
    if payable is None:
        raise NotFound(_("No prize %(payable)s to pay.") % {"payable": payable_id}, code="unknown_payable")
    return payable


def lock_ticket(ticket_id: int) -> Ticket:
    take(Rank.TICKET, ticket_id)
    return Ticket.objects.select_for_update(of=("self",), no_key=True).get(pk=ticket_id)


def lock_player_card(card_id: int) -> PlayerCard:
    take(Rank.PLAYER_CARD, card_id)
    return PlayerCard.objects.select_for_update(of=("self",), no_key=True).get(pk=card_id)


def lock_player_cards(card_ids: Iterable[int]) -> dict[int, PlayerCard]:
    """The cards FOR UPDATE in id order, in one statement (a group of spends): id -> card."""
    ids = sorted(set(card_ids))
    if not ids:
        return {}
    take_many(Rank.PLAYER_CARD, ids)
    if connection.vendor == "postgresql":  # the same statement, not built by the ORM (a group's hot path)
        return {row.pk: row for row in PlayerCard.objects.raw(_LOCK_CARDS_SQL, [ids])}
    rows = PlayerCard.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=ids).order_by("pk")
    return {row.pk: row for row in rows}


_LOCK_CARDS_SQL = f"""
SELECT * FROM "{PlayerCard._meta.db_table}" WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE
"""  # noqa: S608 - the model's own table


def lock_player_limit(limit_id: int) -> PlayerLimit:
    take(Rank.PLAYER_LIMIT, limit_id)
    return PlayerLimit.objects.select_for_update(of=("self",), no_key=True).get(pk=limit_id)


def lock_player_limits(limit_ids: Iterable[int]) -> dict[int, PlayerLimit]:
    """The limit rows FOR UPDATE in id order (a purchase checked against them: two purchases of one player,
    on two cards, are checked one after the other)."""
    ids = sorted(set(limit_ids))
    if not ids:
        return {}
    take_many(Rank.PLAYER_LIMIT, ids)
    rows = PlayerLimit.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=ids).order_by("pk")
    return {row.pk: row for row in rows}


def lock_accounts(account_ids: Iterable[int]) -> dict[int, Account]:
    """The accounts FOR UPDATE, in id order (every transaction takes them so): id -> account."""
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    take_many(Rank.ACCOUNT, ids)
    rows = Account.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=ids).order_by("pk")
    return {a.pk: a for a in rows}


def lock_accounts_where(*conditions: Q, **filters: Any) -> list[Account]:
    """The accounts matching `filters` FOR UPDATE in id order, found and locked in one statement (a ball's
    winners' accounts by their cards, a venue's accounts by their codes): `lock_accounts` when the ids are
    not known yet (the rank is recorded once they are, before anything else is locked)."""
    rows = list(
        Account.objects.select_for_update(of=("self",), no_key=True)
        .filter(*conditions, **filters)
        .order_by("pk")
    )
    take_many(Rank.ACCOUNT, [a.pk for a in rows])
    return rows


def lock_card_accounts(
    card_ids: Iterable[int], *, venue_id: int | None = None, codes: Iterable[str] = ()
) -> list[Account]:
    """`lock_accounts_where` for a group of card moves: the cards' accounts, and the venue's accounts of
    `codes` (a till's drawers), found and locked FOR UPDATE in id order in one statement (on PostgreSQL not
    built by the ORM: a group's hot path)."""
    cards, named = sorted(set(card_ids)), sorted(set(codes))
    if connection.vendor != "postgresql":
        mine = Q(card_id__in=cards, kind=Kind.PLAYER_CARD)
        if named:
            mine |= Q(venue_id=venue_id, code__in=named)
        return lock_accounts_where(mine)
    rows = list(
        Account.objects.raw(_LOCK_CARD_ACCOUNTS_SQL, [cards, Kind.PLAYER_CARD.value, venue_id, named])
    )
    take_many(Rank.ACCOUNT, [a.pk for a in rows])
    return rows


def lock_balances(account_ids: Iterable[int]) -> list[int]:
    """The accounts whose balance column a posting moves, FOR UPDATE in id order, read no further than their
    ids (on every card sale and prize payout: the one UPDATE that follows moves them all); their ids in that
    order. SQLite has no FOR UPDATE: its transactions hold the database's write lock from BEGIN (settings)."""
    ids = sorted(set(account_ids))
    if not ids:
        return ids
    take_many(Rank.ACCOUNT, ids)
    if connection.features.has_select_for_update:
        rows = Account.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=ids).order_by("pk")
        list(rows.values_list("pk"))
    return ids


def lock_and_move_balances(moved: Mapping[int, Decimal]) -> list[int]:
    """PostgreSQL: `lock_balances` and the one UPDATE that moves each account's balance by its delta, in one
    statement (a round trip less while the venue's books are held): the rows are locked FOR UPDATE in id
    order first (a materialized CTE read in full before the UPDATE touches a row: the UPDATE moves only the
    rows it has locked, so it never waits outside that order); their ids in that order."""
    ids = sorted(moved)
    if not ids:
        return ids
    take_many(Rank.ACCOUNT, ids)
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_AND_MOVE_SQL, [ids, ids, [moved[pk] for pk in ids]])
        (count,) = cursor.fetchone()
    if count != len(ids):  # an account of the posting vanished: never (accounts are never deleted)
        raise RuntimeError(f"{count} account balances moved of {len(ids)}")
    return ids


_ACCOUNT = Account._meta.db_table
_LOCK_AND_MOVE_SQL = f"""
WITH locked AS MATERIALIZED (
    SELECT id FROM "{_ACCOUNT}" WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE
), held AS MATERIALIZED (
    SELECT count(*) AS n FROM locked
), moved AS (
    UPDATE "{_ACCOUNT}" AS account SET balance = account.balance + delta.delta
    FROM unnest(%s::bigint[], %s::numeric[]) AS delta (id, delta), held
    WHERE account.id = delta.id AND held.n >= 0
    RETURNING account.id
)
SELECT count(*) FROM moved
"""  # noqa: S608 - the model's own table


_LOCK_CARD_ACCOUNTS_SQL = f"""
SELECT * FROM "{_ACCOUNT}"
WHERE (card_id = ANY(%s::bigint[]) AND kind = %s) OR (venue_id = %s AND code = ANY(%s::text[]))
ORDER BY id FOR NO KEY UPDATE
"""  # noqa: S608 - the model's own table
