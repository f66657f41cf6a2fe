"""The kinds of message on the feed to the gaming authority: one list, each with its JSON Schema in
schemas/v1/<kind>.json (halls.feed.schema). A kind's payload never carries a player's identity."""

from __future__ import annotations

from enum import StrEnum


class FeedKind(StrEnum):
    SESSION_OPENED = "session.opened"  # a bingo session opened, with its checks
    SESSION_CLOSED = "session.closed"  # and closed, with its totals
    GAME_COMMITTED = "game.committed"  # an RNG game's draw commitment, before its sales open
    GAME_SALES = "game.sales"  # a game's sales totals at their close (cards, amount, sales digest)
    GAME_BALL = "game.ball"  # a ball drawn
    GAME_PRIZE = "game.prize"  # a prize decided: amount, where and by which card(s), never who
    GAME_ENDED = "game.ended"  # a game closed or voided (its seed null: the reveal comes after, below)
    GAME_REVEALED = "game.revealed"  # a committed draw's seed revealed after its game (bingo.draws.reveal)
    POOL_AMOUNTS = "pool.amounts"  # accumulated and progressive amounts per pool, at an interval
    POOL_AWARD = "pool.award"  # a pool's award, with its amount before and after
    MACHINE_METERS = "machine.meters"  # a machine's meters for a day
    CASHIER_DAY = "cashier.day"  # the cashier's totals for a day
    ADMISSIONS = "admissions"  # the door's admission counts for a day (counts only)
    ANCHOR = "anchor"  # a signed anchor of the installation's chains (audit, pool seals, ledger, draws)
    TAX_RETURN = "tax.return"  # a gaming-tax return filed for a period
    WIDE_AREA_RECONCILED = "widearea.reconciled"  # a wide-area venue's meters reconciled, and its differences
    HEARTBEAT = "heartbeat"  # nothing happened: the installation is alive (the node's silence window)
