"""What a player terminal draws from (read only): its speciality and prize table (with the R-16 information
and the figures as cells), the game on sale, the game drawing (balls, prizes decided), the accumulated
meters, the last games, the inserted player card's balance and cards, and the seqs of the two streams the
terminal follows ("room.<id>", "terminal.<id>") so the page can tell a gap and reload this snapshot.

One read model, used by the terminal page's socket client, the terminal simulator and the terminal API's
`snapshot` message (services.messages.snapshot answers this). It also carries the API's first shape of it
(`rules`, `card`, a drawing game's `cards_sold` / `sales_total` / `golden_ball`, each prize's `decided` and
`result`), so that a client of either finds what it reads.
On PostgreSQL it is read in one REPEATABLE READ, READ ONLY transaction (the seqs and the rows agree); on
SQLite the seqs are read first, so an event the rows already show is applied again, which the page ignores
(balls by ordinal, prizes by code, cards by id).

Apart from the terminal's: ``games_finished``, what a venue's statistics (bingo.venuewide.records, through
bingo.traditional.hooks) read of its electronic and automatic games.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.electronic import network_hooks
from bingo.electronic.layouts import cells_of
from bingo.electronic.models import (
    EBall,
    ECard,
    EGameState,
    ElectronicGame,
    ElectronicSession,
    EPrize,
    EWin,
    Purchase,
    Speciality,
    SpecialityPool,
    SpecialityVersion,
    Terminal,
    TerminalState,
)
from bingo.electronic.prizetable import POOL_TYPES, PrizeSpec, Rules
from bingo.electronic.services.steps import rules_of
from bingo.electronic.services.terminal_views import card_view, rules_summary
from halls import money, snapshot_cache
from halls.cashier.models import Account, PlayerCard
from halls.errors import Conflict
from halls.fields import MoneyField
from halls.models import StreamCursor
from jackpots.models import Contribution, LevelKind, PoolLevel

LAST_GAMES = 5
ZERO = Decimal(0)


@contextmanager
def _consistent() -> Iterator[None]:
    """One view of the database for the whole snapshot (PostgreSQL: REPEATABLE READ, READ ONLY, when this
    is the outermost transaction). On SQLite no transaction: a read must not take the write lock."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(money.cents(value))


def stream_seqs(streams: Iterable[str]) -> dict[str, int]:
    """The current seq of each stream (0 for a stream with no event yet)."""
    wanted = list(streams)
    found = dict(StreamCursor.objects.filter(stream__in=wanted).values_list("stream", "seq"))
    return {stream: int(found.get(stream, 0)) for stream in wanted}


# --- the speciality and its prize table ---------------------------------------------------------------


def version_in_force(speciality: Speciality) -> SpecialityVersion | None:
    """The version a game created now would play (specialities.version_in_force), or None."""
    return speciality.versions.filter(effective_from__lte=timezone.now()).order_by("-number").first()


def _prize_view(rules: Rules, spec: PrizeSpec) -> dict[str, Any]:
    layout = rules.layout
    return {
        "code": spec.code,
        "name": spec.name,
        "type": str(spec.type),
        "pattern": spec.pattern,
        # Each mask of the pattern as its cells (a line: every line of the card), for the page to draw.
        "masks": [list(cells_of(mask)) for mask in layout.pattern(spec.pattern)],
        "figure": spec.figure,
        "percent": _text(spec.percent),
        "fixed": _text(spec.fixed),
        "max_ball": spec.max_ball,
        "max_ball_by_sales": [
            {"from_sales": _text(step.from_sales), "max_ball": step.max_ball}
            for step in spec.max_ball_by_sales
        ],
        "info": spec.info,
        "accumulated": spec.type in POOL_TYPES,
        "network": spec.network,
    }


def speciality_view(speciality: Speciality, version: SpecialityVersion) -> dict[str, Any]:
    """The speciality as `version` plays it: layout, price, purchase sizes and the prize table (R-16)."""
    rules = rules_of(version)
    layout = rules.layout
    return {
        "id": speciality.pk,
        "code": speciality.code,
        "name": speciality.name,
        "family": speciality.family,
        "running": speciality.running,
        "stream": speciality.stream,
        "version": version.number,
        "authorisation_ref": version.authorisation_ref,
        "layout": {
            "code": layout.code,
            "max_number": layout.max_number,
            "rows": layout.rows,
            "columns": layout.columns,
            "free": list(cells_of(layout.free)),
        },
        "card_price": _text(rules.card_price),
        "purchase_sizes": list(rules.purchase_sizes),
        "max_cards": rules.max_cards,
        "extractions": rules.extractions,
        "pace_seconds": str(rules.pace_seconds),
        "prizes": [_prize_view(rules, spec) for spec in rules.prizes],
    }


# --- meters ------------------------------------------------------------------------------------------


def meters(speciality: Speciality | int) -> list[dict[str, Any]]:
    """The accumulated prizes' meters (each pool's first level: folded + not yet folded, whole cents down),
    in the prize table's order, with the max ball players are told (the version in force)."""
    speciality_id = speciality if isinstance(speciality, int) else speciality.pk
    links = list(
        SpecialityPool.objects.filter(speciality_id=speciality_id).values_list("prize_code", "pool_id")
    )
    if not links:
        return []
    unfolded = (
        Contribution.objects.filter(level_id=OuterRef("pk"), id__gt=OuterRef("folded_through"))
        .order_by()
        .values("level_id")
        .annotate(total=Sum("to_meter"))
        .values("total")
    )
    field: MoneyField[Any, Any] = MoneyField(max_digits=money.METER_DIGITS, decimal_places=money.METER_PLACES)
    levels = {
        level.pool_id: level
        for level in PoolLevel.objects.filter(
            pool_id__in=[pool for _code, pool in links], position=0
        ).annotate(unfolded=Coalesce(Subquery(unfolded, output_field=field), ZERO, output_field=field))
    }
    spec = Speciality.objects.get(pk=speciality_id) if isinstance(speciality, int) else speciality
    version = version_in_force(spec)
    specs = {p.code: p for p in rules_of(version).prizes} if version else {}
    order = list(specs)
    shown = []
    for code, pool_id in sorted(links, key=lambda link: order.index(link[0]) if link[0] in order else 99):
        level = levels.get(pool_id)
        if level is None:
            continue
        amount = level.amount
        if level.kind != LevelKind.FIXED:
            amount = level.amount + money.under_ceiling(level.amount, level.unfolded, level.ceiling)
        prize = specs.get(code)
        if prize is not None and prize.network:
            continue  # a network prize is not in play at a venue's own speciality (issue 14 switches it on)
        shown.append(
            {
                "code": code,
                "name": prize.name if prize else code,
                "amount": str(money.cents_down(amount)),
                "max_ball": prize.max_ball if prize else None,
                "info": prize.info if prize else "",
            }
        )
    return shown


# --- the verifiable draw (issue 28) -------------------------------------------------------------------

DRAW_ROOM = "electronic"  # bingo.electronic.services.commitments.ROOM: the room's name in bingo.draws


def draw_view(row: DrawCommitment | None) -> dict[str, Any] | None:
    """A game's draw as the screens, terminals, API and recall show it: the commitment from the opening of
    sales, the sales digest once they closed, the seed once revealed (None: drawn without commitment)."""
    if row is None:
        return None
    record = draws.as_record(row)
    return {
        "room": record.room,
        "game": record.game,
        "status": record.status,
        "max_ball": record.max_ball,
        "commitment": record.commitment,
        "sales_digest": record.sales_digest or None,
        "cards": record.cards if record.sales_digest else None,
        "seed": record.seed or None,
        "committed_at": record.committed_at or None,
        "sales_closed_at": record.sales_closed_at or None,
        "revealed_at": record.revealed_at or None,
    }


def draw_views(game_ids: Iterable[int]) -> dict[int, dict[str, Any] | None]:
    """`draw_view` of each game, in one query."""
    ids = list(game_ids)
    refs = [str(game_id) for game_id in ids]
    rows = {int(r.game_ref): r for r in DrawCommitment.objects.filter(room=DRAW_ROOM, game_ref__in=refs)}
    return {game_id: draw_view(rows.get(game_id)) for game_id in ids}


def game_draw(game_id: int) -> dict[str, Any] | None:
    return draw_views([game_id])[game_id]


# --- games -------------------------------------------------------------------------------------------


def _prize_rows(game_ids: list[int]) -> dict[int, list[EPrize]]:
    rows: dict[int, list[EPrize]] = {gid: [] for gid in game_ids}
    for prize in EPrize.objects.filter(game_id__in=game_ids).order_by("ordinal", "id"):
        rows[prize.game_id].append(prize)
    return rows


def _decided_view(prize: EPrize) -> dict[str, Any]:
    return {
        "code": prize.code,
        "name": prize.name,
        "type": prize.type,
        "ordinal": prize.ordinal,
        "won": prize.won,
        "winners": prize.winners,
        "amount": _text(prize.amount),
        "share": _text(prize.share),
    }


def cards_bought(game: ElectronicGame, terminal: Terminal) -> int:
    """The cards `terminal` bought for `game` (any player card)."""
    return int(Purchase.objects.filter(game=game, terminal=terminal).aggregate(n=Sum("cards"))["n"] or 0)


def selling_view(game: ElectronicGame, terminal: Terminal | None = None) -> dict[str, Any]:
    """The game on sale; `mine`: the cards `terminal` bought for it (any player card)."""
    rules = rules_of(game.version)
    mine = cards_bought(game, terminal) if terminal is not None else 0
    return {
        "game": game.pk,
        "number": game.number,
        "state": game.state,
        "version": game.version.number,
        "sales_close_at": game.sales_close_at.isoformat(),
        "sales_closed": game.sales_closed_at is not None,  # closed, waiting for the game before it to end
        "card_price": _text(rules.card_price),
        "mine": int(mine),
        "draw": game_draw(game.pk),  # its commitment, published before the first card is sold
    }


def drawing_view(game: ElectronicGame, decided: list[EPrize]) -> dict[str, Any]:
    """A game drawing (or just closed): its balls in order, the prizes as announced at the close (amounts,
    max balls, golden ball) and those decided so far."""
    rules = rules_of(game.version)
    names = {p.code: p.name for p in rules.prizes}
    announced = game.terms.get("prizes", []) if isinstance(game.terms, dict) else []
    balls = list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    rows = {prize.code: prize for prize in decided}
    return {
        "game": game.pk,
        "number": game.number,
        "state": game.state,
        "version": game.version.number,
        "cards": game.cards_sold,
        "cards_sold": game.cards_sold,
        "sales": _text(game.sales_total),
        "sales_total": _text(game.sales_total),
        "golden_ball": next((p.get("golden_ball") for p in announced if p.get("golden_ball")), None),
        "balls": balls,
        "last_ordinal": game.terms.get("last_ordinal") if isinstance(game.terms, dict) else None,
        "prizes": [
            {
                "code": p["code"],
                "name": names.get(p["code"], p["code"]),
                "type": p["type"],
                "pattern": p["pattern"],
                "in_play": p["in_play"],
                "amount": p["amount"],
                "max_ball": p["max_ball"],
                "golden_ball": p.get("golden_ball"),
                "decided": p["code"] in rows,
                "result": _decided_view(rows[p["code"]]) if p["code"] in rows else None,
            }
            for p in announced
        ],
        "decided": [_decided_view(prize) for prize in decided],
        "draw": game_draw(game.pk),  # the commitment, the sales digest, the seed once revealed
    }


def last_games(speciality: Speciality, limit: int = LAST_GAMES) -> list[dict[str, Any]]:
    """The speciality's last closed games, newest first: the balls drawn and the prizes won."""
    closed = ElectronicGame.objects.filter(speciality=speciality, state=EGameState.CLOSED)
    games = list(closed.order_by("-number")[:limit])
    prizes = _prize_rows([g.pk for g in games])
    balls: dict[int, list[int]] = {g.pk: [] for g in games}
    drawn = EBall.objects.filter(game__in=games).order_by("game_id", "ordinal")
    for game_id, number in drawn.values_list("game_id", "number"):
        balls[game_id].append(number)
    draws_of = draw_views(balls)
    return [
        {
            "game": game.pk,
            "number": game.number,
            "state": game.state,
            "closed_at": game.closed_at.isoformat() if game.closed_at else None,
            "balls": balls[game.pk],
            "cards": game.cards_sold,
            "cards_sold": game.cards_sold,
            "sales": _text(game.sales_total),
            "prizes": [_decided_view(p) for p in prizes[game.pk] if p.won],
            "draw": draws_of[game.pk],
        }
        for game in games
    ]


# --- the player's card ------------------------------------------------------------------------------------


def card_balance(card: PlayerCard) -> Decimal:
    """The card's balance, read without creating its account (a card never used has none: 0)."""
    found = Account.objects.filter(card=card).values_list("balance", flat=True).first()
    return ZERO if found is None else found


def cards_in_play(card: PlayerCard, game_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The electronic cards bought with this player card in each game (at any terminal of the speciality: a
    player who moves to another terminal sees them there), each with its cells (the layout's order, 0 =
    free) and what it has won so far."""
    found: dict[int, list[dict[str, Any]]] = {gid: [] for gid in game_ids}
    if not game_ids:
        return found
    rows = list(ECard.objects.filter(game_id__in=game_ids, purchase__player_card=card).order_by("id"))
    wins: dict[int, list[dict[str, Any]]] = {}
    for win in EWin.objects.filter(card__in=[r.pk for r in rows]).select_related("prize").order_by("id"):
        wins.setdefault(win.card_id, []).append(
            {"code": win.prize.code, "name": win.prize.name, "amount": _text(win.amount)}
        )
    for row in rows:
        found[row.game_id].append(
            {
                "card": row.pk,
                "purchase": row.purchase_id,
                "position": row.position,
                "cells": list(bytes(row.cells)),
                "wins": wins.get(row.pk, []),
            }
        )
    return found


def player_view(terminal: Terminal, card: PlayerCard, games: list[ElectronicGame]) -> dict[str, Any]:
    """The inserted player card: its number, state, balance, and its cards in `games` (by game id)."""
    cards = cards_in_play(card, [g.pk for g in games])
    return {
        "number": card.number,
        "state": card.state,
        "balance": _text(card_balance(card)),
        "cards": {str(gid): shown for gid, shown in cards.items()},
    }


# --- the snapshot ---------------------------------------------------------------------------------------


# Whether a terminal can play (its sales and messages ask it too).


def open_session_of(speciality_id: int) -> ElectronicSession | None:
    return ElectronicSession.objects.filter(speciality_id=speciality_id, closed_at__isnull=True).first()


def playable(terminal: Terminal) -> ElectronicSession:
    """The open session the terminal plays in, or a 409 naming why it cannot play: terminal_out_of_service,
    no_session, terminal_not_verified (it failed, or was not verified by the open session's verification)."""
    return playable_in(terminal, _UNREAD)


_UNREAD: Any = object()  # the session not read yet


def playable_in(terminal: Terminal, session: ElectronicSession | None) -> ElectronicSession:
    """`playable` with its speciality's open session (None: none) read already (a batch reads it once)."""
    if terminal.state == TerminalState.OUT_OF_SERVICE or not terminal.device.active:
        raise Conflict(
            _("Terminal %(name)s is out of service.") % {"name": terminal.device.name},
            code="terminal_out_of_service",
        )
    if session is _UNREAD:
        session = open_session_of(terminal.speciality_id)
    if session is None:
        raise Conflict(_("No session of this speciality is open: there is no play now."), code="no_session")
    if terminal.state == TerminalState.FAILED or terminal.verified_by_id != session.verification_id:
        raise Conflict(
            _("Terminal %(name)s has not passed the verification of this session: it cannot play.")
            % {"name": terminal.device.name},
            code="terminal_not_verified",
        )
    return session


def refusal(terminal: Terminal, session: ElectronicSession | None = _UNREAD) -> str | None:
    """Why the terminal cannot play now (`playable`'s code), or None; `session`: its speciality's open
    session when read already."""
    try:
        playable_in(terminal, session)
    except Conflict as exc:
        return exc.code
    return None


@dataclass(frozen=True)
class SpecialityPart:
    """What every terminal of a speciality is shown alike (`public`), and the rows its own part is read
    against: the game on sale (its cards bought here), the games in play (the inserted card's cards), the
    open session (whether the terminal may play). Shared by the web process (halls.snapshot_cache): read
    only."""

    public: dict[str, Any]
    selling: ElectronicGame | None
    drawing: ElectronicGame | None
    session: ElectronicSession | None


def build_speciality_part(speciality_id: int) -> tuple[int, SpecialityPart]:
    """The room stream's seq (read first) and the speciality's part of every terminal's snapshot."""
    speciality = Speciality.objects.select_related("room").get(pk=speciality_id)
    with _consistent():
        seq = stream_seqs([speciality.stream])[speciality.stream]
        games = {
            g.state: g
            for g in ElectronicGame.objects.filter(
                speciality=speciality, state__in=[EGameState.SELLING, EGameState.DRAWING]
            ).select_related("version")
        }
        selling, drawing = games.get(EGameState.SELLING), games.get(EGameState.DRAWING)
        if drawing is None:
            # Between games the page keeps the last one's balls and prizes on show.
            drawing = (
                ElectronicGame.objects.filter(speciality=speciality, state=EGameState.CLOSED)
                .select_related("version")
                .order_by("-number")
                .first()
            )
        version = selling.version if selling else version_in_force(speciality)
        if version is None and drawing is not None:
            version = drawing.version
        decided = _prize_rows([drawing.pk])[drawing.pk] if drawing else []
        public = {
            "speciality": speciality_view(speciality, version) if version else None,
            "rules": rules_summary(rules_of(version), version) if version else None,
            "selling": selling_view(selling) if selling else None,
            "drawing": drawing_view(drawing, decided) if drawing else None,
            "meters": meters(speciality),
            "network": network_hooks.meters(speciality),  # Gran Línea / Gran Bingo, as last heard
            "last_games": last_games(speciality),
        }
        session = open_session_of(speciality.pk)
    return seq, SpecialityPart(public, selling, drawing, session)


def part_key(stream: str, language: str) -> snapshot_cache.Key:
    """The process cache's key of a speciality's part (its room stream's) in a language."""
    return (stream, f"terminal:{language}")


def speciality_part(speciality_id: int, stream: str, at_least: int) -> snapshot_cache.Entry:
    """The speciality's part at or past `at_least` (its room stream's cursor), built once per change of the
    stream for the web process (issue 30: 2,000 terminals reconnecting each read it all), per language."""
    key = part_key(stream, translation.get_language())
    return snapshot_cache.cache().get(key, at_least, lambda: build_speciality_part(speciality_id))


def _built_in(language: str, speciality_id: int) -> tuple[int, SpecialityPart]:
    with translation.override(language):
        return build_speciality_part(speciality_id)


async def speciality_part_for_socket(
    speciality_id: int, stream: str, at_least: int, language: str
) -> snapshot_cache.Entry:
    """On the loop (a terminal socket's connect, its streams joined): the speciality's part in `language` at
    or past `at_least` (the hub's head of the room stream before the join), the same entry as the terminal
    API's snapshot (`speciality_part`): no query when cached (issue 30, a reconnect storm)."""
    return await snapshot_cache.cache().aget(
        part_key(stream, language), at_least, lambda: _built_in(language, speciality_id)
    )


def terminal_snapshot(
    terminal: Terminal, *, card: PlayerCard | None = None, fresh: bool = False
) -> dict[str, Any]:
    """Everything the terminal page draws, with the seqs of its two streams (see the module docstring).
    `card`: the player card inserted (its balance and cards), or None.

    The speciality's part comes from the process's cache (`speciality_part`), at or past the room stream's
    seq read here; what is the terminal's own is its row (not read again when the caller says it read it
    `fresh`, with its device and speciality: the terminal API), the two streams' cursors, its cards bought
    for the game on sale and, with a card inserted, the card's part."""
    if not fresh:  # `fresh`: read by the caller in this request, with its device and speciality
        terminal = Terminal.objects.select_related("device", "speciality").get(pk=terminal.pk)
    room_stream, own_stream = terminal.speciality.stream, terminal.stream
    with _consistent():
        seqs = stream_seqs([room_stream, own_stream])
        entry = speciality_part(terminal.speciality_id, room_stream, seqs[room_stream])
        part: SpecialityPart = entry.value
        seqs[room_stream] = entry.seq  # what the shared part shows: the page drops the events it holds
        selling = part.public["selling"]
        if part.selling is not None:
            selling = {**selling, "mine": cards_bought(part.selling, terminal)}
        in_play = [g for g in (part.selling, part.drawing) if g is not None]
        snap = {
            **part.public,
            "terminal": {
                "id": terminal.pk,
                "device": terminal.device_id,
                "name": terminal.device.name,
                "state": terminal.state,
                "active": terminal.device.active,
                "refusal": refusal(terminal, part.session),
                "stream": own_stream,
            },
            "selling": selling,
            "player": player_view(terminal, card, in_play) if card is not None else None,
            "streams": {"room": room_stream, "terminal": own_stream},
            "seqs": seqs,
            "server_time": timezone.now().isoformat(),
        }
    # The API's view of the card (its cards with what each lacks per pattern), read after: it may create
    # the card's account, which a read-only transaction may not.
    snap["card"] = card_view(card, terminal) if card is not None else None
    return snap


# --- a venue's records: its electronic and automatic games --------------------------------------------------


@dataclass(frozen=True)
class FinishedGame:
    """A game of this wing (electronic, automatic) that finished (closed or void), as the inspector's
    statistics count it (bingo.venuewide.records)."""

    closed_at: datetime
    room: str
    game_type: str  # "electronic", "automatic"
    void: bool
    cards_sold: int
    sales_total: Decimal
    prizes: Decimal  # every prize credited


def games_finished(venue_id: int, start: datetime, end: datetime) -> list[FinishedGame]:
    """The venue's electronic and automatic games that finished (closed or void) from `start` to before
    `end`, each with what every prize credited (for bingo.venuewide.records, through
    bingo.traditional.hooks)."""
    games = list(
        ElectronicGame.objects.filter(
            speciality__venue_id=venue_id,
            state__in=[EGameState.CLOSED, EGameState.VOID],
            closed_at__gte=start,
            closed_at__lt=end,
        ).select_related("speciality__room")
    )
    won = dict(
        EWin.objects.filter(prize__game__in=[g.pk for g in games])
        .values("prize__game")
        .annotate(paid=Sum("amount"))
        .values_list("prize__game", "paid")
        .order_by()
    )
    found = []
    for game in games:
        assert game.closed_at is not None
        found.append(
            FinishedGame(
                closed_at=game.closed_at,
                room=game.speciality.room.name,
                game_type="automatic" if game.speciality.family.startswith("auto") else "electronic",
                void=game.state == EGameState.VOID,
                cards_sold=game.cards_sold,
                sales_total=game.sales_total,
                prizes=won.get(game.pk) or money.ZERO,
            )
        )
    return found
