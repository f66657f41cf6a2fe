"""The hall's one lock order, and the check that every transaction keeps it.

Every lock is taken through an app's ``services/locks.py`` (halls, bingo, jackpots, jackpots.tables,
machines), whose helpers call `take` first. Within one transaction, a lock of a lower rank taken after
one of a higher rank raises `LockOrderError` naming both; the same rank again is allowed (each helper
takes its rows in id order), and so is a lock the transaction already holds (it waits for nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections


class Rank(IntEnum):
    """Lower ranks are taken first. What each guards:"""

    # halls.link: a venue's link at the central while its next message is applied (the handler's locks
    # follow), and a venue's position in a central stream while an entry is applied
    VENUE_LINK = 2
    STREAM_POSITION = 3
    # bingo.network: an interconnected prize at the central (its rounds, contributions, results, decision)
    NETWORK_PRIZE = 4
    VENUE = 5  # halls.Venue: its prize settings (then every room of it, which games are created under)
    NETWORK = 6  # halls.Network: its membership (a venue joining or leaving, a member changing region)
    # halls.RegionAgreement rows a network's span relies on (in id order): recorded, revoked, relied on
    REGION_AGREEMENT = 7
    ROOM = 10  # halls.Room: opening a session, creating a game, a room's prize-program configuration
    SESSION = 20  # halls.GameSession: closing it
    # electronic bingo: a speciality's versions, sessions and the start of its next game
    SPECIALITY = 25
    GAME = 30  # bingo.Game: every write about a game (sales, balls, claims, corrections, picks)
    PAPER_STOCK = 31  # bingo.PaperStock: a series' paper changing state (issued to a game, returned...)
    # electronic.ElectronicGame: FOR UPDATE by the close and every ball step; FOR SHARE by a purchase
    EGAME = 32
    TERMINAL = 34  # electronic.Terminal: its state (verification, service), its messages
    BALL_SET = 36  # bingo.BallSet: an incident, a replacement (after the game that names it)
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
    ACCOUNT = 141  # cashier.Account rows a transaction takes money from (guarded ones), in id order
    AUDIT_HEAD = 145  # halls.AuditChainHead: the tip of a venue's hash chain
    STREAM = 150  # halls.StreamCursor: an event stream's sequence number


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


def take_many(rank: Rank, keys: Iterable[Any]) -> None:
    """`take` for several locks of one rank (rows locked in one statement)."""
    conn = connections[DEFAULT_DB_ALIAS]
    found = _transaction(conn)
    if found is None:
        return
    block, savepoint, hooks = found
    state: _Held | None = getattr(conn, "hall_locks", None)
    if state is None or state.block is not block or state.savepoint != savepoint or state.hooks is not hooks:
        state = _Held(block, savepoint, hooks, rank, "")
        setattr(conn, "hall_locks", state)  # noqa: B010 (a connection has no such attribute of its own)
    for key in keys:
        if rank < state.top and (rank, key) not in state.held:
            raise LockOrderError(
                f"lock order: {_what(rank, key)} taken after {state.top_what} in one transaction "
                f"({rank.name} comes before {state.top.name}, halls.locks.Rank)"
            )
        state.held.add((rank, key))
        if rank >= state.top:
            state.top, state.top_what = rank, _what(rank, key)
