"""The alarms the node derives from the messages themselves, one accepted message at a time.

The intake calls `check(message)` for every message it accepted, in the transaction that stored it (so an
alarm is never raised for a message that was not kept):

- **a game without its commitment** (AlarmKind.NO_COMMITMENT): a game's sales (game.sales) or a ball
  (game.ball) arrive from an installation that sent no game.committed for that game before. Only the games of
  the draw rooms that commit every game (HALL_REGULATOR_COMMITTED_ROOMS: electronic, with automatic bingo,
  and simultaneous by default); one alarm per game, however many of its messages follow.
- **a prize paid above its pool** (AlarmKind.PRIZE_ABOVE_POOL): a prize paid from a pool (game.prize naming
  its pool) above the pool's amount as last reported (pool.amounts: the sum of its levels), or a pool's award
  (pool.award) above its level's last reported amount. The last report is the sending installation's; a
  network pool paid at a venue is reported by its central, so a pool the venue never reported is looked up
  in its centrals' reports. A pool never reported raises nothing (nothing to compare with).

An alarm's detail names the installation's venue, game or pool, the message's sequence and the amounts:
never a player.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from halls.feed.kinds import FeedKind
from halls.regulator.models import Alarm, AlarmKind, FeedMessage, Installation, InstallationKind
from halls.regulator.portal_core import room_of


def check(message: FeedMessage, *, settled: set[tuple[str, Any]] | None = None) -> list[Alarm]:
    """The alarms `message` raises (made, in the caller's transaction), in the order found: usually none.
    `settled`: the (game, venue) pairs of this installation already known committed or already alarmed,
    kept by the caller across one batch's messages (check_all), so a game's balls ask once."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("derived.check must run inside the intake's transaction")
    payload = message.payload if isinstance(message.payload, dict) else {}
    if message.kind == FeedKind.GAME_COMMITTED and settled is not None:
        settled.add((str(payload.get("game")), payload.get("venue")))
    if message.kind in (FeedKind.GAME_BALL, FeedKind.GAME_SALES):
        pair = (str(payload.get("game")), payload.get("venue"))
        if settled is not None and pair in settled:
            return []
        raised = _without_commitment(message, payload)
        if settled is not None:
            settled.add(pair)  # committed before it, or its one alarm raised now or earlier
        return raised
    if message.kind == FeedKind.GAME_PRIZE and payload.get("pool"):
        return _prize_above_pool(message, payload)
    if message.kind == FeedKind.POOL_AWARD:
        return _award_above_level(message, payload)
    return []


def check_all(messages: list[FeedMessage]) -> list[Alarm]:
    """`check` for one installation's accepted run, in order: a game's commitment looked up once a run."""
    settled: set[tuple[str, Any]] = set()
    return [alarm for message in messages for alarm in check(message, settled=settled)]


def _amount(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _raise(message: FeedMessage, kind: AlarmKind, detail: dict[str, Any]) -> Alarm:
    return Alarm.objects.create(
        installation_id=message.installation_id,
        kind=kind,
        detail={**detail, "sequence": message.sequence, "message": message.kind},
        raised_at=timezone.now(),
    )


# --- a game without its commitment ----------------------------------------------------------------------


def _without_commitment(message: FeedMessage, payload: dict[str, Any]) -> list[Alarm]:
    game, venue = payload.get("game"), payload.get("venue")
    if not isinstance(game, str) or room_of(game) not in set(settings.HALL_REGULATOR_COMMITTED_ROOMS):
        return []
    of_game = {"payload__game": game, "payload__venue": venue}
    committed = FeedMessage.objects.filter(
        installation_id=message.installation_id,
        kind=FeedKind.GAME_COMMITTED,
        sequence__lt=message.sequence,
        **of_game,
    ).exists()
    if committed:
        return []
    said = Alarm.objects.filter(
        installation_id=message.installation_id,
        kind=AlarmKind.NO_COMMITMENT,
        detail__game=game,
        detail__venue=venue,
    ).exists()
    if said:
        return []
    detail = {"venue": venue, "room": payload.get("room"), "game": game}
    return [_raise(message, AlarmKind.NO_COMMITMENT, detail)]


# --- a prize paid above its pool ------------------------------------------------------------------------


def _last_report(message: FeedMessage, pool: str) -> dict[str, Any] | None:
    """The pool's entry in the last pool.amounts that reported it before `message`: the sending
    installation's, else (a network pool) the latest of a central of its jurisdiction."""
    # Newest first along the index (installation, kind, at): a few rows read, however long the history.
    own = FeedMessage.objects.filter(
        installation_id=message.installation_id,
        kind=FeedKind.POOL_AMOUNTS,
        at__lte=message.at,
        sequence__lt=message.sequence,
    ).order_by("-at", "-sequence")
    found = _pool_in(own, pool)
    if found is not None:
        return found
    jurisdiction = Installation.objects.filter(pk=message.installation_id).values_list(
        "jurisdiction", flat=True
    )
    centrals = Installation.objects.filter(kind=InstallationKind.CENTRAL, jurisdiction__in=jurisdiction)
    for central in centrals.order_by("pk"):
        reports = FeedMessage.objects.filter(installation=central, kind=FeedKind.POOL_AMOUNTS)
        found = _pool_in(reports.order_by("-at", "-sequence"), pool)
        if found is not None:
            return found
    return None


# How many of the latest reports are read for a pool: an installation reports all its pools in each.
_REPORTS_READ = 50


def _pool_in(reports: Any, pool: str) -> dict[str, Any] | None:
    for payload in reports.values_list("payload", flat=True)[:_REPORTS_READ]:
        for entry in payload.get("pools", []) if isinstance(payload, dict) else []:
            if isinstance(entry, dict) and entry.get("pool") == pool:
                return entry
    return None


def _levels(entry: dict[str, Any]) -> dict[str, Decimal]:
    levels = {}
    for level in entry.get("levels", []):
        amount = _amount(level.get("amount")) if isinstance(level, dict) else None
        if amount is not None:
            levels[str(level.get("level"))] = amount
    return levels


def _prize_above_pool(message: FeedMessage, payload: dict[str, Any]) -> list[Alarm]:
    pool, amount = str(payload["pool"]), _amount(payload.get("amount"))
    entry = _last_report(message, pool)
    if entry is None or amount is None:
        return []
    reported = sum(_levels(entry).values(), Decimal("0.00"))
    if amount <= reported:
        return []
    detail = {
        "venue": payload.get("venue"),
        "game": payload.get("game"),
        "prize": payload.get("prize"),
        "pool": pool,
        "amount": str(amount),
        "reported": str(reported),
        "where": payload.get("where"),
    }
    return [_raise(message, AlarmKind.PRIZE_ABOVE_POOL, detail)]


def _award_above_level(message: FeedMessage, payload: dict[str, Any]) -> list[Alarm]:
    pool, amount = str(payload.get("pool", "")), _amount(payload.get("amount"))
    entry = _last_report(message, pool)
    if entry is None or amount is None:
        return []
    level = str(payload.get("level"))
    reported = _levels(entry).get(level)
    if reported is None or amount <= reported:
        return []
    detail = {
        "venue": payload.get("venue"),
        "pool": pool,
        "level": payload.get("level"),
        "amount": str(amount),
        "reported": str(reported),
        "where": payload.get("where"),
    }
    return [_raise(message, AlarmKind.PRIZE_ABOVE_POOL, detail)]
