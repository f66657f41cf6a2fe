"""A hand's pool bets: `register_bets`, alone or in a group with other tables' calls (issue 9).

register_bets: per seat (initial bet, pool bet), checked by the pack (½ table minimum, initial bet, the
stipulated bet) and contributed through the engine with a key per (table, hand, seat), so a retried
request is a no-op. Where the pack registers bets by manual hand total (EU b.1), the seats' bets are
recorded without contributing, and the croupier's hand total is what contributes. Bets close once cards
are registered (the pool bet goes in before the deal: JP-EU12-03, BJ-AN10-3). A seat's pool bet, its
SeatBet row and the audit entry commit together or not at all, under the hand's lock.

Groups. Called outside a transaction on PostgreSQL (the API, the console, the demo's tables), the call
goes to the process's group (halls.group_commit, as the pool engine's contributions and the machine
gateway's frames do): the WHOLE calls of concurrent tables and requests are written in ONE transaction,
so the venue's audit chain head, the pool's locks and the commit are taken once per group, not once per
call. Inside that transaction:

1. the group's tables FOR UPDATE in id order, then its hands in id order (the system's one order: a
   table before a hand, as lock_hand takes them; see locks.py), then their seat bets and dealt cards
   read once;
2. each call checked in arrival order by the same `_decide` a call alone goes through, against its
   hand as the group's earlier calls left it. A refused call is refused before anything of it is
   written, so it has nothing to roll back (what a savepoint per call would do, without the two round
   trips each): its caller gets its own refusal (the API renders the JSON error envelope), the others
   go on;
3. the seat rows of every call left in one INSERT; the contributions, one statement per pool
   (contributions.contribute_answers), pools in id order, each after its levels are share-locked
   (hold_pool) as the call alone does; then the audit entry and the table event of each call, venues in
   id order (after the pools' locks, as everywhere: a settlement waiting on a pool never holds a chain
   head the group waits for).

A call alone writes the same rows (same keys, same splits: the engine's SQL per row), answers the same
and refuses the same things, so a group is exactly its calls one by one in arrival order
(tests/jackpots/tables/test_bet_groups.py). If the group cannot commit as a whole (a contribution the
engine refuses after its call's checks passed: a pool closed meanwhile; a database error, a deadlock),
it rolls back and its calls are written again one by one, each in its own transaction, each answered as
if alone. The contribution keys and the seat rows still make a retried request a no-op.

Inside a caller's transaction (tests, a service composing others) and on SQLite (the embedded demo, whose
writers the database serializes anyway) the call is written inline, in that transaction: no group.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from halls import events
from halls.actors import Actor, actor_label
from halls.errors import Conflict, DomainError, InvalidInput
from halls.eventtypes import EventType, HandBetsRegistered, SeatBetShown
from halls.group_commit import GroupCommit, ProcessGroup, together_or_one_by_one
from halls.services import audit
from jackpots.services.contributions import ContributionItem, contribute_answers, contribute_many
from jackpots.services.locks import hold_pool
from jackpots.tables import rules
from jackpots.tables.models import Hand, SeatBet, SeatCards
from jackpots.tables.services.changes import record
from jackpots.tables.services.locks import lock_hand, lock_hands
from jackpots.tables.services.refusals import no_hand, require_open
from jackpots.tables.services.table_pool import contribution_source, pool_of, table_pack

log = logging.getLogger("hall.jackpots.tables")


@dataclass(frozen=True)
class BetsCall:
    """One register_bets call, checked for shape (a group carries many)."""

    hand_id: int
    actor: User
    bets: tuple[rules.SeatBetInput, ...]
    total: Decimal | None


@dataclass
class _Ready:
    """A call that passed its checks and wrote its rows: what is left is its pool's money and its audit."""

    hand: Hand
    actor: User
    pool_id: int
    manual_total: Decimal | None = None
    rows: list[SeatBet] = field(default_factory=list)
    items: list[ContributionItem] = field(default_factory=list)
    data: HandBetsRegistered | None = None  # its audit entry and its table event


def register_bets(
    *,
    hand: Hand,
    actor: User,
    bets: Sequence[rules.SeatBetInput] = (),
    total: Decimal | None = None,
) -> Hand:
    """Register seats' pool bets (each contributes), and/or a b.1 hand total (which contributes once).

    All or nothing: one refused seat refuses the call. A seat registered before with the same amounts is
    a retry (no-op); with other amounts it is refused (409 bet_already_registered).
    """
    if not bets and total is None:
        raise InvalidInput(_("Give the seats' bets or the hand's total."), code="no_bets")
    seats = [b.seat for b in bets]
    if len(set(seats)) != len(seats):
        raise InvalidInput(_("A seat appears twice in the request."), code="duplicate_seat")
    call = BetsCall(hand_id=hand.pk, actor=actor, bets=tuple(bets), total=total)
    if _grouped():
        return bet_group().submit(call)
    return _write_alone(call)


# --- one call -------------------------------------------------------------------------------------------


def _same_bet(existing: SeatBet, bet: rules.SeatBetInput) -> bool:
    return (existing.initial_bet, existing.pool_bet) == (bet.initial_bet, bet.pool_bet)


@dataclass
class _HandState:
    """What a call's checks read about its hand, locked: the hand (with its table), its seat bets so far
    and whether cards are dealt. A group keeps it up to date as it takes each call of the hand."""

    hand: Hand
    bets: dict[int, SeatBet]
    dealt: bool


def _decide(call: BetsCall, state: _HandState) -> _Ready | Hand:
    """Check the call against its hand's state; the rows it writes (unsaved: seat bets, a b.1 total) and
    its contributions and audit data, or the hand alone for a retry that writes nothing. Raises the
    call's refusal. The same checks alone and in a group; nothing here touches the database."""
    hand = state.hand
    table = hand.table
    require_open(hand, gettext_noop("take bets"))
    pool = pool_of(table)
    pack = table_pack(table, pool)
    manual = rules.is_manual_total(pack)
    total = call.total
    if total is not None and not manual:
        raise InvalidInput(
            _("%(code)s registers each seat's pool bet; a hand total is only for manual entry (b.1).")
            % {"code": pack.code},
            code="not_manual_entry",
        )
    existing = state.bets
    new: list[rules.SeatBetInput] = []
    for bet in call.bets:
        rules.check_seat(bet.seat, table.seats)
        rules.check_bet(pack, table_minimum=table.table_minimum, stipulated_bet=pool.carousel_bet, bet=bet)
        if bet.seat in existing:
            if not _same_bet(existing[bet.seat], bet):
                raise Conflict(
                    _("Seat %(seat)s already has its bets in hand %(number)s.")
                    % {"seat": bet.seat, "number": hand.number},
                    code="bet_already_registered",
                    seat=bet.seat,
                )
            continue
        new.append(bet)
    if new and state.dealt:
        raise Conflict(
            _("Cards are dealt in hand %(number)s: pool bets are taken before the deal.")
            % {"number": hand.number},
            code="bets_closed",
        )
    if manual and hand.manual_total is not None and new:
        raise Conflict(
            _("Hand %(number)s's total is entered: no more seat bets.") % {"number": hand.number},
            code="manual_total_registered",
        )
    manual_total: Decimal | None = None
    if total is not None:
        if hand.manual_total is not None and hand.manual_total != total:
            raise Conflict(
                _("Hand %(number)s's total %(manual_total)s is already entered.")
                % {"number": hand.number, "manual_total": hand.manual_total},
                code="manual_total_registered",
            )
        registered = sum((b.pool_bet for b in existing.values()), Decimal(0))
        seat_total = registered + sum((b.pool_bet for b in new), Decimal(0)) or None
        manual_total = rules.check_manual_total(total, seat_total, pool.carousel_bet)
        if hand.manual_total is not None:
            manual_total = None  # a retry
    if not new and manual_total is None:
        return hand  # a retry of registered bets: nothing written

    at = timezone.now()
    who = actor_label(call.actor)  # each call's own actor on its rows, in a group too
    ready = _Ready(hand=hand, actor=call.actor, pool_id=pool.pk, manual_total=manual_total)
    ready.rows = [
        SeatBet(
            hand=hand,
            seat=b.seat,
            initial_bet=b.initial_bet,
            pool_bet=b.pool_bet,
            contribution_key="" if manual else rules.seat_contribution_key(table.pk, hand.pk, b.seat),
            registered_by=call.actor,
            registered_at=at,
        )
        for b in new
    ]
    if not manual:
        ready.items = [
            ContributionItem(
                source=contribution_source(table, hand, row.seat),
                bet=row.pool_bet,
                idempotency_key=row.contribution_key,
                actor=who,
            )
            for row in ready.rows
        ]
    # The table's head written out: a ** of `head` would not let the optional keys follow (mypy).
    ready.data = HandBetsRegistered(
        table=table.pk, table_number=table.number, hand=hand.pk, number=hand.number
    )
    if ready.rows:
        ready.data["bets"] = [
            SeatBetShown(seat=r.seat, initial_bet=r.initial_bet, pool_bet=r.pool_bet, contributed=not manual)
            for r in ready.rows
        ]
    if manual_total is not None:
        ready.items.append(
            ContributionItem(
                source=contribution_source(table, hand),
                bet=manual_total,
                idempotency_key=rules.hand_total_key(table.pk, hand.pk),
                actor=who,
            )
        )
        ready.data["manual_total"] = manual_total
    # What the next call of this hand sees (a group takes it before anything is written).
    existing.update((row.seat, row) for row in ready.rows)
    if manual_total is not None:
        hand.manual_total = manual_total
        hand.manual_total_by = call.actor
    return ready


def _save_totals(ready: Sequence[_Ready]) -> None:
    for done in ready:
        if done.manual_total is not None:
            done.hand.save(update_fields=["manual_total", "manual_total_by"])


def _record(ready: _Ready) -> None:
    assert ready.data is not None
    record(ready.hand.table, ready.actor, EventType.HAND_BETS_REGISTERED, ready.hand, ready.data)


def _record_all(ready: Sequence[_Ready]) -> None:
    """Each call's audit entry and table event, as `_record` writes them, venues in id order: one chain
    lock and one INSERT per venue, one statement for the tables' stream cursors."""
    by_venue: dict[int, list[_Ready]] = {}
    for done in ready:
        by_venue.setdefault(done.hand.table.venue_id, []).append(done)
    events_out: list[tuple[str, EventType, Mapping[str, Any]]] = []
    for venue_id in sorted(by_venue):
        entries: list[tuple[Actor, str, Any, dict[str, Any] | None]] = []
        for done in by_venue[venue_id]:
            assert done.data is not None
            entries.append((done.actor, EventType.HAND_BETS_REGISTERED.value, done.hand, dict(done.data)))
            events_out.append((done.hand.table.stream, EventType.HAND_BETS_REGISTERED, done.data))
        audit.record_many(venue_id=venue_id, entries=entries)
    events.emit_many(events_out)


def _write_alone(call: BetsCall) -> Hand:
    """The call in its own transaction (or the caller's): rows, its pool's money, its audit entry."""
    with transaction.atomic():
        hand = lock_hand(call.hand_id)
        state = _HandState(hand, {b.seat: b for b in hand.bets.all()}, hand.cards.exists())
        ready = _decide(call, state)
        if isinstance(ready, Hand):
            return ready
        SeatBet.objects.bulk_create(ready.rows)
        _save_totals([ready])
        hold_pool(ready.pool_id)
        if ready.items:
            contribute_many(pool=ready.pool_id, items=ready.items, actor=ready.actor)
        _record(ready)
    return ready.hand


# --- groups ---------------------------------------------------------------------------------------------


def _grouped() -> bool:
    """Grouped only on PostgreSQL, outside any transaction (see the module docstring)."""
    return (
        _group.enabled()
        and connection.vendor == "postgresql"
        and not transaction.get_connection().in_atomic_block
    )


def bet_group() -> GroupCommit[BetsCall, Hand]:
    """This process's group of register_bets calls (a new one after a fork), sized by the tables' own
    settings (HALL_TABLE_GROUP_SIZE, _WAIT_MS, _RUNNERS)."""
    return _group.get()


class _GroupRefused(Exception):
    """The group cannot commit as a whole: its calls go one by one."""


_Answer = Hand | BaseException


def write_group(calls: Sequence[BetsCall]) -> list[_Answer]:
    """Each call's answer (its hand, or its refusal): the calls together in one transaction, or, if the
    group cannot commit as a whole, one by one, each in its own transaction."""
    return together_or_one_by_one(calls, _write_together, _write_alone, log=log, what="bet calls")


_group: ProcessGroup[BetsCall, Hand] = ProcessGroup(write_group, "HALL_TABLE_GROUP")


def _write_together(calls: Sequence[BetsCall]) -> list[_Answer]:
    """The calls in ONE transaction, a handful of statements for the whole group (see the module
    docstring): locks, the hands' seat bets and cards read once, each call checked in turn against its
    hand as the calls before it left it, then the seat rows in one INSERT, the money in one statement
    per pool, an audit entry and an event per call."""
    answers: dict[int, _Answer] = {}
    ready: list[_Ready] = []
    with transaction.atomic():
        locked = lock_hands({call.hand_id for call in calls})
        bets: dict[int, dict[int, SeatBet]] = {pk: {} for pk in locked}
        for row in SeatBet.objects.filter(hand_id__in=locked):
            bets[row.hand_id][row.seat] = row
        dealt = set(SeatCards.objects.filter(hand_id__in=locked).values_list("hand_id", flat=True))
        states = {pk: _HandState(hand, bets[pk], pk in dealt) for pk, hand in locked.items()}
        for i, call in enumerate(calls):  # in arrival order: calls of one hand answer as one after another
            try:
                state = states.get(call.hand_id)
                if state is None:
                    raise no_hand(call.hand_id)
                answer = _decide(call, state)
            except DomainError as exc:
                answers[i] = exc  # refused before anything of it is written: it writes nothing
                continue
            answers[i] = answer if isinstance(answer, Hand) else answer.hand
            if isinstance(answer, _Ready):
                ready.append(answer)
        SeatBet.objects.bulk_create([row for done in ready for row in done.rows])
        _save_totals(ready)
        _contribute(ready)
        _record_all(ready)
    return [answers[i] for i in range(len(calls))]


def _contribute(ready: Sequence[_Ready]) -> None:
    """Every ready call's contributions: per pool in id order, its levels share-locked, then one statement.
    A refusal by the engine (its call's checks passed) refuses the group: one by one will answer it."""
    by_pool: dict[int, list[_Ready]] = {}
    for done in ready:
        by_pool.setdefault(done.pool_id, []).append(done)
    for pool_id in sorted(by_pool):
        hold_pool(pool_id)
        items = [item for done in by_pool[pool_id] for item in done.items]
        if len({item.idempotency_key for item in items}) != len(items):
            raise _GroupRefused(f"a key twice in pool {pool_id}'s bets")
        answers = contribute_answers(pool=pool_id, items=items, actor="")
        refused = [a for a in answers if isinstance(a, DomainError)]
        if refused:
            raise _GroupRefused(f"pool {pool_id} refused a contribution: {refused[0]}")
