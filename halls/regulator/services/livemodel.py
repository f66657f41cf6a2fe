"""The live page's read model (LiveGame, LiveSession): each installation's games and sessions as the
messages accepted so far made them (halls.regulator.live_core's fold).

`apply(installation, messages)` is called by the intake for each accepted run, inside the transaction that
stores it and under the installation's row lock (so one installation's rows move in its sequence order,
never twice at once): a read of the run's games and sessions, then one insert and one update each. The
portal's live page then reads a few rows, however many messages were stored (it used to replay them:
bench/feed_node.py measured 305 queries and 1.5-2.3 s a reload with 300 installations).

`rebuild()` makes the model again from the stored messages (`manage.py regulator_rebuild_live`, and the
migration that added it, for a node that already held messages); it gives what the intake made.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction
from django.db.models import Model

from halls.regulator import live_core
from halls.regulator.live_core import GameKey, GameState, SessionKey, SessionState
from halls.regulator.models import FeedMessage, Installation, LiveGame, LiveSession

log = logging.getLogger("hall.regulator")

GAME_FIELDS = (
    "room", "commitment", "cards", "sales", "balls", "prizes", "state", "seed", "last_at", "sequence",
)  # fmt: skip
SESSION_FIELDS = (
    "family", "opened_at", "checks", "closed_at", "games", "sales", "prizes", "last_at", "sequence",
)  # fmt: skip


def venue_of(venue: Any) -> str:
    """A venue as the model keeps it: "" for a central's own (the feed's null; a venue is never "")."""
    return "" if venue is None else str(venue)


def game_state(row: LiveGame) -> GameState:
    return GameState(
        venue=row.venue or None,
        room=row.room,
        game=row.game,
        commitment=row.commitment,
        cards=row.cards,
        sales=row.sales,
        ordinals={int(o): int(n) for o, n in row.balls},
        prizes=list(row.prizes),
        state=row.state,
        seed=row.seed,
        last_at=row.last_at,
    )


def session_state(row: LiveSession) -> SessionState:
    return SessionState(
        venue=row.venue or None,
        room=row.room,
        session=row.session,
        family=row.family,
        opened_at=row.opened_at,
        checks=list(row.checks),
        closed_at=row.closed_at,
        games=row.games,
        sales=row.sales,
        prizes=row.prizes,
        last_at=row.last_at,
    )


def _game_values(state: GameState, sequence: int) -> dict[str, Any]:
    return {
        "room": state.room,
        "commitment": state.commitment,
        "cards": state.cards,
        "sales": state.sales,
        "balls": [[o, state.ordinals[o]] for o in sorted(state.ordinals)],
        "prizes": state.prizes,
        "state": state.state,
        "seed": state.seed,
        "last_at": state.last_at,
        "sequence": sequence,
    }


def _session_values(state: SessionState, sequence: int) -> dict[str, Any]:
    return {
        "family": state.family,
        "opened_at": state.opened_at,
        "checks": state.checks,
        "closed_at": state.closed_at,
        "games": state.games,
        "sales": state.sales,
        "prizes": state.prizes,
        "last_at": state.last_at,
        "sequence": sequence,
    }


@dataclass
class _Fold:
    """One installation's games and sessions being moved: their states, the rows they came from (None: new),
    and the last sequence that moved each."""

    games: dict[GameKey, GameState]
    sessions: dict[SessionKey, SessionState]
    game_rows: dict[GameKey, Model | None]
    session_rows: dict[SessionKey, Model | None]
    moved: dict[GameKey | SessionKey, int]

    @classmethod
    def empty(cls) -> _Fold:
        return cls({}, {}, {}, {}, {})

    def add(self, kind: str, payload: Any, at: Any, sequence: int) -> None:
        key = live_core.fold(self.games, self.sessions, kind, payload, at)
        if key is None:
            return
        self.moved[key] = int(sequence)
        if kind in live_core.SESSION_KINDS:
            self.session_rows.setdefault(cast(SessionKey, key), None)
        else:
            self.game_rows.setdefault(cast(GameKey, key), None)

    def write(
        self, installation_id: int, game_model: Any = LiveGame, session_model: Any = LiveSession
    ) -> None:
        """Insert the new rows (in the order first seen) and update the moved ones: a statement each."""
        new_games, old_games = [], []
        for key, game_row in self.game_rows.items():
            if key not in self.moved:
                continue
            values = _game_values(self.games[key], self.moved[key])
            if game_row is None:
                venue, game = key
                new_games.append(
                    game_model(installation_id=installation_id, venue=venue_of(venue), game=game, **values)
                )
            else:
                for name, value in values.items():
                    setattr(game_row, name, value)
                old_games.append(game_row)
        new_sessions, old_sessions = [], []
        for skey, session_row in self.session_rows.items():
            if skey not in self.moved:
                continue
            values = _session_values(self.sessions[skey], self.moved[skey])
            if session_row is None:
                venue, room, session = skey
                new_sessions.append(
                    session_model(
                        installation_id=installation_id,
                        venue=venue_of(venue),
                        room=str(room),
                        session=str(session),
                        **values,
                    )
                )
            else:
                for name, value in values.items():
                    setattr(session_row, name, value)
                old_sessions.append(session_row)
        if new_games:
            game_model.objects.bulk_create(new_games)
        if old_games:
            game_model.objects.bulk_update(old_games, GAME_FIELDS)
        if new_sessions:
            session_model.objects.bulk_create(new_sessions)
        if old_sessions:
            session_model.objects.bulk_update(old_sessions, SESSION_FIELDS)


def apply(installation: Installation, messages: Sequence[FeedMessage]) -> None:
    """Move the read model by one installation's accepted run (in sequence order), in the intake's
    transaction: the run's games and sessions read (a query each), folded, written back."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("livemodel.apply must run inside the intake's transaction")
    live = [m for m in messages if m.kind in live_core.LIVE_KINDS and isinstance(m.payload, dict)]
    if not live:
        return
    fold = _Fold.empty()
    games = {str(m.payload.get("game", "")) for m in live if m.kind not in live_core.SESSION_KINDS}
    sessions = {str(m.payload.get("session")) for m in live if m.kind in live_core.SESSION_KINDS}
    if games:
        for row in LiveGame.objects.filter(installation=installation, game__in=sorted(games)):
            key = (row.venue or None, row.game)
            fold.games[key], fold.game_rows[key] = game_state(row), row
    if sessions:
        for srow in LiveSession.objects.filter(installation=installation, session__in=sorted(sessions)):
            skey = (srow.venue or None, srow.room, srow.session)
            fold.sessions[skey], fold.session_rows[skey] = session_state(srow), srow
    for message in live:
        fold.add(message.kind, message.payload, message.at, message.sequence)
    fold.write(installation.pk)


@dataclass(frozen=True)
class Rebuilt:
    installations: int
    games: int
    sessions: int


def rebuild(installations: Iterable[int] | None = None) -> Rebuilt:
    """Make the read model again from the stored messages: each installation's rows dropped and its
    messages of games and sessions folded in sequence order, in a transaction under its row lock (the
    intake waits meanwhile). `installations`: their ids, else all."""
    return rebuild_with(
        Installation, FeedMessage, LiveGame, LiveSession, installations=installations, lock=True
    )


def rebuild_with(
    installation_model: Any,
    message_model: Any,
    game_model: Any,
    session_model: Any,
    *,
    installations: Iterable[int] | None = None,
    lock: bool,
) -> Rebuilt:
    """`rebuild` on these models (the migration's historical ones, or the app's)."""
    ids = list(installations) if installations is not None else None
    chosen = installation_model.objects.order_by("pk")
    if ids is not None:
        chosen = chosen.filter(pk__in=ids)
    done = games = sessions = 0
    for pk in chosen.values_list("pk", flat=True):
        with transaction.atomic():
            if lock:
                installation_model.objects.select_for_update().filter(pk=pk).first()
            game_model.objects.filter(installation_id=pk).delete()
            session_model.objects.filter(installation_id=pk).delete()
            fold = _Fold.empty()
            rows = (
                message_model.objects.filter(installation_id=pk, kind__in=sorted(live_core.LIVE_KINDS))
                .order_by("sequence")
                .values_list("kind", "payload", "at", "sequence")
            )
            for kind, payload, at, sequence in rows.iterator(chunk_size=2000):
                fold.add(kind, payload, at, sequence)
            fold.write(pk, game_model, session_model)
        done, games, sessions = done + 1, games + len(fold.games), sessions + len(fold.sessions)
    log.info("live read model rebuilt: %d installations, %d games, %d sessions", done, games, sessions)
    return Rebuilt(done, games, sessions)
