"""The portal's live page, its pure part (no Django): what one installation's games and sessions look like
after its feed messages, applied one at a time in their sequence order.

The node keeps this state as its live read model (halls.regulator.services.livemodel: one row a game and
one a session, moved by the intake in the transaction that accepts the messages), and the same fold replays
stored messages (the model rebuilt, or the portal's replay it is checked against), so both say the same.
Every message it is given passed the feed's schema (halls.feed.schema) at the intake.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from halls.feed.kinds import FeedKind

GAME_KINDS = (
    FeedKind.GAME_COMMITTED,
    FeedKind.GAME_SALES,
    FeedKind.GAME_BALL,
    FeedKind.GAME_PRIZE,
    FeedKind.GAME_ENDED,
    FeedKind.GAME_REVEALED,
)
SESSION_KINDS = (FeedKind.SESSION_OPENED, FeedKind.SESSION_CLOSED)
LIVE_KINDS = frozenset(str(kind) for kind in (*GAME_KINDS, *SESSION_KINDS))

GameKey = tuple[Any, str]  # (venue, game) within one installation
SessionKey = tuple[Any, Any, Any]  # (venue, room, session) within one installation


@dataclass
class GameState:
    venue: str | None
    room: str
    game: str
    commitment: str = ""
    cards: int | None = None
    sales: str | None = None
    ordinals: dict[int, int] = field(default_factory=dict)  # a ball's ordinal -> its number
    prizes: list[dict[str, Any]] = field(default_factory=list)  # as Prize's fields (services.portal)
    state: str = "open"  # open, closed, void
    seed: str = ""
    last_at: datetime | None = None  # the fact time of its last message

    @property
    def balls(self) -> list[int]:
        return [self.ordinals[o] for o in sorted(self.ordinals)]


@dataclass
class SessionState:
    venue: str | None
    room: str
    session: Any
    family: str = ""
    opened_at: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    closed_at: str = ""
    games: int | None = None
    sales: str | None = None
    prizes: str | None = None
    last_at: datetime | None = None


def game_key(payload: dict[str, Any]) -> GameKey:
    return (payload.get("venue"), str(payload.get("game", "")))


def session_key(payload: dict[str, Any]) -> SessionKey:
    return (payload.get("venue"), payload.get("room"), payload.get("session"))


def fold(
    games: MutableMapping[GameKey, GameState],
    sessions: MutableMapping[SessionKey, SessionState],
    kind: str,
    payload: Any,
    at: datetime,
) -> GameKey | SessionKey | None:
    """Apply one message of a game or a session (in sequence order) to its state, made when it has none;
    the key it moved (None: not a live kind)."""
    if not isinstance(payload, dict) or kind not in LIVE_KINDS:
        return None
    if kind in SESSION_KINDS:
        return _session(sessions, kind, payload, at)
    key = game_key(payload)
    game = games.get(key)
    if game is None:
        game = games[key] = GameState(payload.get("venue"), str(payload.get("room", "")), key[1])
    game.last_at = at
    _game(game, kind, payload)
    return key


def _game(game: GameState, kind: str, payload: dict[str, Any]) -> None:
    if kind == FeedKind.GAME_COMMITTED:
        game.commitment = str(payload.get("commitment", ""))
    elif kind == FeedKind.GAME_SALES:
        game.cards, game.sales = payload.get("cards"), payload.get("sales")
    elif kind == FeedKind.GAME_BALL:
        ordinal, number = payload.get("ordinal"), payload.get("number")
        if isinstance(ordinal, int) and isinstance(number, int) and ordinal not in game.ordinals:
            game.ordinals[ordinal] = number  # a ball told again keeps its first number
    elif kind == FeedKind.GAME_PRIZE:
        game.prizes.append(
            {
                "prize": str(payload.get("prize", "")),
                "name": str(payload.get("name", "")),
                "amount": str(payload.get("amount", "")),
                "ordinal": payload.get("ordinal"),
                "cards": [str(c) for c in payload.get("cards") or []],
                "pool": payload.get("pool"),
                "where": str(payload.get("where", "")),
            }
        )
    elif kind == FeedKind.GAME_ENDED:
        game.state = "void" if payload.get("state") == "void" else "closed"
        game.seed = str(payload.get("seed") or game.seed)
    elif kind == FeedKind.GAME_REVEALED:  # only ever after its game
        game.seed = str(payload.get("seed") or "")
        game.state = "closed" if game.state == "open" else game.state


def _session(
    sessions: MutableMapping[SessionKey, SessionState], kind: str, payload: dict[str, Any], at: datetime
) -> SessionKey:
    key = session_key(payload)
    venue, room = payload.get("venue"), str(payload.get("room", ""))
    if kind == FeedKind.SESSION_OPENED:
        checks = [c for c in payload.get("checks", []) if isinstance(c, dict)]
        sessions[key] = SessionState(
            venue,
            room,
            payload.get("session"),
            str(payload.get("family", "")),
            str(payload.get("opened_at", "")),
            checks,
            last_at=at,
        )
        return key
    found = sessions.get(key)
    if found is None:  # its opening not seen (before a replay's window): its close alone
        found = sessions[key] = SessionState(venue, room, payload.get("session"))
    found.closed_at = str(payload.get("closed_at", "")) or "—"
    found.games, found.sales, found.prizes = payload.get("games"), payload.get("sales"), payload.get("prizes")
    found.last_at = at
    return key
