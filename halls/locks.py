"""The hall's one lock order, and the check that every transaction keeps it.

`Rank` is the one table of the hall's locks: each rank says what it guards and `TAKEN_BY` names the lock
modules whose helpers take it (a ``services/locks.py`` of its app; an event stream's cursor: halls.events),
each calling `take` first. No other module takes a rank (tests/halls/test_lock_ranks.py checks the code
against this table, so it cannot drift). Within one transaction, a lock of a lower rank taken after
one of a higher rank raises `LockOrderError` naming both; the same rank again is allowed (each helper
takes its rows in id order), and so is a lock the transaction already holds (it waits for nothing).

A transaction that goes on with a further unit of work after a first one (the link's inbox applies several
messages of a venue in one transaction: halls.link.services.inbox) calls `only_held_or_higher()` first:
from then on a lock is taken only if the transaction holds it or its rank is above every rank held; the
same rank with another key (which the first unit did not take in order with it) raises too, before any
row is locked, so the caller can commit what it has and run that unit in a transaction of its own.

Locks outside the table: PostgreSQL checks a transaction's (deferred) foreign keys at COMMIT, taking
FOR KEY SHARE on every row its inserts name, whatever it holds by then (the audit chain's head). A row a
helper locks FOR UPDATE would make such a commit wait outside this order (issue 30: a ticket's refusal,
committing with the head held, waited for its cashier's shift, held by that cashier's next operation
waiting for the head; or for a ticket held by a redemption waiting for an account or the head). So the
cashier's helpers and the audit head lock FOR NO KEY UPDATE, which excludes every other locker and writer
but not a foreign-key check (tests/halls/test_lock_ranks.py checks it). A transaction PostgreSQL still
breaks off (deadlock, serialization) is retried by the cashier's write services (halls.db_retry), never
answered 500.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections


class Rank(IntEnum):
    """Lower ranks are taken first. What each guards:"""

    # halls.Proposal: a four-eyes proposal being decided; first, since its kind's applier takes its own
    # locks after it (a venue's prize settings, a register, a table, a pool)
    PROPOSAL = 1
    # halls.link: a venue's link at the central while its next message is applied (the handler's locks
    # follow), and a venue's position in a central stream while an entry is applied
    VENUE_LINK = 2
    STREAM_POSITION = 3
    # bingo.network.interconnected: an interconnected prize at the central (its rounds, contributions,
    # results, decision)
    NETWORK_PRIZE = 4
    VENUE = 5  # halls.Venue: its prize settings (then every room of it, which games are created under)
    NETWORK = 6  # halls.Network: its membership (a venue joining or leaving, a member changing region)
    # halls.Region: its name, its jurisdiction (changed only while no venue is in it; a venue placed in it
    # holds it, so the jurisdiction it was checked against stays in force), before the agreements naming it
    REGION = 7
    # halls.RegionAgreement rows a network's span relies on (in id order): recorded, revoked, relied on
    REGION_AGREEMENT = 8
    OPERATOR = 9  # halls.Operator: its name
    ROOM = 10  # halls.Room: opening a session, creating a game, a room's prize-program configuration
    REGISTER = 15  # door.Register: a version of it loaded (the one current version replaced)
    SESSION = 20  # halls.GameSession: closing it
    # electronic bingo: a speciality's versions, sessions and the start of its next game
    SPECIALITY = 25
    # bingo.network.interconnected.SpecialityMembership: a speciality leaving the Gran prize it plays
    SPECIALITY_MEMBERSHIP = 26
    GAME = 30  # bingo.Game: every write about a game (sales, balls, claims, corrections, picks)
    PAPER_STOCK = 31  # bingo.CardSeries: its paper ranges moving, its next unsold cards chosen, a sale of it
    # electronic.ElectronicGame: FOR UPDATE by the close and every ball step; FOR SHARE by a purchase
    EGAME = 32
    TERMINAL = 34  # electronic.Terminal: its state (verification, service), its messages
    BALL_SET = 36  # bingo.BallSet: an incident, a replacement (after the game that names it)
    # bingo.draws.DrawCommitment: its sales digest fixed, its seed revealed (after the game it draws for)
    DRAW_COMMITMENT = 38
    PROGRAM = 40  # bingo.PrizeProgram and bingo.RoomBolsa rows: a program's or the Bolsa's change
    TABLE = 50  # jackpots.tables.CasinoTable: every write about a table and its hands
    HAND = 60  # jackpots.tables.Hand, after its table
    MACHINE = 70  # machines.Machine: gateway calls, state changes, links, hand pays, the link watch
    LINK = 80  # machines.LinkGroup / LinkMember: a machine joining or leaving a link
    HIT = 90  # machines.ProgressiveHit: paying a hit by hand
    SEAL = 110  # jackpots.Pool row FOR NO KEY UPDATE: one seal of a pool at a time
    METER_PUBLISHER = 120  # jackpots.MeterPublisherState: the meter publisher's tick, then its pool rows
    # A pool's level rows (FOR UPDATE to write them, FOR KEY SHARE to hold open play or read meters),
    # then its advisory lock (exclusive for writers, shared by contributors); pools in id order.
    POOL = 130
    POOL_MEMBER = 135  # jackpots.PoolMember: a member leaving a pool (a table holds its pool first)
    # The cashier (halls.cashier), after whatever awarded the money (a game, a pool, a hit):
    SHIFT = 136  # cashier.Shift: every operation at a till holds its open shift; closing it locks it
    PAYABLE = 137  # cashier.Payable: paying a prize
    TICKET = 138  # cashier.Ticket: redeeming or expiring a ticket
    PLAYER_CARD = 139  # cashier.PlayerCard: blocking, unblocking, registering a card
    # cashier.PlayerLimit: a limit set (after the card it was set through), a stake checked against it
    PLAYER_LIMIT = 140
    # cashier.Account rows a transaction takes money from (guarded ones), in id order; then, as a posting
    # writes, every account whose balance it moves (in id order; those already held are not waited for)
    ACCOUNT = 141
    AUDIT_HEAD = 145  # halls.AuditChainHead: the tip of a venue's hash chain
    STREAM = 150  # halls.StreamCursor: an event stream's sequence number


# The lock modules that take each rank (their helpers are the only callers of `take` with it).
_HALLS = "halls.services.locks"
_CASHIER = "halls.cashier.services.locks"
_BINGO = "bingo.traditional.services.locks"
_ELECTRONIC = "bingo.electronic.services.locks"
_DRAWS = "bingo.draws.locks"
_POOLS = "jackpots.services.locks"
_TABLES = "jackpots.tables.services.locks"
_MACHINES = "machines.services.locks"
TAKEN_BY: dict[Rank, tuple[str, ...]] = {
    Rank.PROPOSAL: (_HALLS,),
    Rank.VENUE_LINK: ("halls.link.services.locks",),
    Rank.STREAM_POSITION: ("halls.link.services.locks",),
    Rank.NETWORK_PRIZE: ("bingo.network.interconnected.services.locks",),
    Rank.VENUE: (_HALLS,),
    Rank.NETWORK: (_HALLS,),
    Rank.REGION: (_HALLS,),
    Rank.REGION_AGREEMENT: (_HALLS,),
    Rank.OPERATOR: (_HALLS,),
    Rank.ROOM: (_HALLS,),
    Rank.REGISTER: ("halls.door.services.locks",),
    Rank.SESSION: (_HALLS,),
    Rank.SPECIALITY: (_ELECTRONIC,),
    Rank.SPECIALITY_MEMBERSHIP: ("bingo.network.interconnected.services.locks",),
    Rank.GAME: (_BINGO, "bingo.network.simultaneous.services.locks"),
    Rank.PAPER_STOCK: (_BINGO,),
    Rank.EGAME: (_ELECTRONIC,),
    Rank.TERMINAL: (_ELECTRONIC,),
    Rank.BALL_SET: (_BINGO,),
    Rank.DRAW_COMMITMENT: (_DRAWS,),
    Rank.PROGRAM: (_BINGO,),
    Rank.TABLE: (_TABLES,),
    Rank.HAND: (_TABLES,),
    Rank.MACHINE: (_MACHINES,),
    Rank.LINK: (_MACHINES,),
    Rank.HIT: (_MACHINES,),
    Rank.SEAL: (_POOLS,),
    Rank.METER_PUBLISHER: (_POOLS,),
    Rank.POOL: (_POOLS,),
    Rank.POOL_MEMBER: (_POOLS,),
    Rank.SHIFT: (_CASHIER,),
    Rank.PAYABLE: (_CASHIER,),
    Rank.TICKET: (_CASHIER,),
    Rank.PLAYER_CARD: (_CASHIER, _ELECTRONIC),
    Rank.PLAYER_LIMIT: (_CASHIER,),
    Rank.ACCOUNT: (_CASHIER, "bingo.electronic.services.awards"),  # a prize step: its winners' in one
    Rank.AUDIT_HEAD: (_HALLS,),
    Rank.STREAM: ("halls.events",),
}


class LockOrderError(RuntimeError):
    """A lock taken against the order of `Rank` (a deadlock waiting to happen)."""


@dataclass
class _Held:
    """The locks of one transaction: the highest rank taken and by what, and every (rank, key) held."""

    block: Any
    savepoint: str | None
    hooks: list[Any]
    top: Rank
    top_what: str
    held: set[tuple[Rank, Any]] = field(default_factory=set)
    strict: bool = False  # only_held_or_higher(): no new lock at or below the top rank


def _transaction(conn: Any) -> tuple[Any, str | None, list[Any]] | None:
    """What tells this transaction from the next one on the connection, or None outside one.

    The outermost atomic block that is not a test case's (a test's own transaction spans many service
    calls, each of which is a transaction in production), its savepoint, and the on-commit list (a new
    list after every commit and rollback)."""
    blocks = conn.atomic_blocks
    for i, block in enumerate(blocks):
        if not block._from_testcase:  # Django marks a TestCase's atomics so
            at = i - (len(blocks) - len(conn.savepoint_ids))
            return block, conn.savepoint_ids[at] if at >= 0 else None, conn.run_on_commit
    return None  # autocommit (a statement is its own transaction), or a test body outside any service


def _what(rank: Rank, key: Any) -> str:
    return rank.name.lower() if key is None else f"{rank.name.lower()} {key}"


def take(rank: Rank, key: Any = None) -> None:
    """Record that this transaction takes the lock `(rank, key)`; raise if a higher rank is held."""
    take_many(rank, (key,))


def _state(conn: Any, found: tuple[Any, str | None, list[Any]], rank: Rank) -> _Held:
    block, savepoint, hooks = found
    state: _Held | None = getattr(conn, "hall_locks", None)
    if state is None or state.block is not block or state.savepoint != savepoint or state.hooks is not hooks:
        state = _Held(block, savepoint, hooks, rank, "")
        setattr(conn, "hall_locks", state)  # noqa: B010 (a connection has no such attribute of its own)
    return state


def only_held_or_higher() -> bool:
    """From now on in this transaction, refuse (`LockOrderError`) any lock it does not hold whose rank is
    not above every rank it holds: what a further unit of work in the same transaction may take without
    a deadlock (see the module's docstring). False (nothing set) when this transaction's locks are not
    known here (none taken, or a savepoint rolled back since: the check starts afresh then): the caller
    must not go on in this transaction. Until `forget_further_units()`, a lock taken after such a loss
    raises too."""
    conn = connections[DEFAULT_DB_ALIAS]
    found = _transaction(conn)
    if found is None:
        return False
    block, savepoint, hooks = found
    state: _Held | None = getattr(conn, "hall_locks", None)
    if state is None or state.block is not block or state.savepoint != savepoint or state.hooks is not hooks:
        return False
    if not state.held:
        return False
    state.strict = True
    setattr(conn, "hall_locks_strict", block)  # noqa: B010 (a connection has no such attribute of its own)
    return True


def forget_further_units() -> None:
    """The end of the transaction that called `only_held_or_higher()`."""
    setattr(connections[DEFAULT_DB_ALIAS], "hall_locks_strict", None)  # noqa: B010


def holds(rank: Rank, keys: Iterable[Any]) -> bool:
    """Whether this transaction took every lock `(rank, key)` of `keys` (through `take`): for a service
    that trusts its caller's locks instead of taking them again. True outside a transaction's checks
    (autocommit or a test body: nothing is recorded there)."""
    conn = connections[DEFAULT_DB_ALIAS]
    found = _transaction(conn)
    if found is None:
        return True
    state: _Held | None = getattr(conn, "hall_locks", None)
    block, savepoint, hooks = found
    if state is None or state.block is not block or state.savepoint != savepoint or state.hooks is not hooks:
        return False
    return all((rank, key) in state.held for key in keys)


def take_many(rank: Rank, keys: Iterable[Any]) -> None:
    """`take` for several locks of one rank (rows locked in one statement)."""
    conn = connections[DEFAULT_DB_ALIAS]
    found = _transaction(conn)
    if found is None:
        return
    state = _state(conn, found, rank)
    keys = list(keys)
    if not state.strict and getattr(conn, "hall_locks_strict", None) is found[0]:
        raise LockOrderError(
            f"lock order: {_what(rank, keys[0] if keys else None)} taken by a further unit of a transaction "
            "whose locks are no longer known here (a savepoint was rolled back): not in this transaction"
        )
    if state.strict and state.held:
        new = [key for key in keys if (rank, key) not in state.held]
        if new and rank <= state.top:
            raise LockOrderError(
                f"lock order: {_what(rank, new[0])} taken after {state.top_what} by a further unit of one "
                f"transaction (only locks it holds or of a rank above {state.top.name}, halls.locks)"
            )
    for key in keys:
        if rank < state.top and (rank, key) not in state.held:
            raise LockOrderError(
                f"lock order: {_what(rank, key)} taken after {state.top_what} in one transaction "
                f"({rank.name} comes before {state.top.name}, halls.locks.Rank)"
            )
        state.held.add((rank, key))
        if rank >= state.top:
            state.top, state.top_what = rank, _what(rank, key)
